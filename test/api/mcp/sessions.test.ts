// MCP sessions live in PostgreSQL: two API processes of one database, with
// no routing by Mcp-Session-Id between them, serve one client's session
// whichever receives each request. Initialized on one, used and ended on the
// other; still their caller's alone; over once idle for 30 minutes.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { idleMinutes } from '../../../core/mcp/sessions.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { mediaRow } from '../../helpers/content.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { staffedTenant, type Auth, type Staffed } from '../../helpers/identity.ts';
import { closeMcpClients, connectMcp, listen, secondApp, type Listening } from '../../helpers/mcp.ts';

let t: TestApp;
let other: Awaited<ReturnType<typeof secondApp>>;
let one: Listening;
let two: Listening;
let a: Staffed;

beforeAll(async () => {
  t = await startTestApp();
  other = await secondApp(t);
  one = await listen(t.app);
  two = await listen(other.app);
  a = await staffedTenant(t);
});
afterAll(async () => {
  await closeMcpClients();
  await one?.close();
  await two?.close();
  await other?.close();
  await stopTestApp(t);
});

/** A balancer with no stickiness: each request goes to the next process in turn. Counts what each served. */
function roundRobin() {
  const served = { one: 0, two: 0 };
  let next = 0;
  const balanced: typeof fetch = (input, init) => {
    const target = next++ % 2 === 0 ? one : two;
    served[target === one ? 'one' : 'two'] += 1;
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.port = target.url.port;
    return fetch(url, init);
  };
  return { balanced, served };
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

const post = (at: Listening, auth: Auth, body: unknown, session?: string) =>
  fetch(at.url, {
    method: 'POST',
    headers: {
      ...auth,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(session ? { 'Mcp-Session-Id': session } : {}),
    },
    body: JSON.stringify(body),
  });

async function openOn(at: Listening, auth: Auth): Promise<string> {
  const opened = await post(at, auth, initialize);
  expect(opened.status).toBe(200);
  await opened.text();
  return opened.headers.get('mcp-session-id')!;
}

describe('MCP sessions', () => {
  it('serve one client through two processes taking its requests in turn', async () => {
    const image = await mediaRow(t, a.site);
    const { balanced, served } = roundRobin();
    const { client } = await connectMcp(one.url, a.editor.auth, { fetch: balanced });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const media = (await client.callTool({
      name: 'list_media',
      arguments: { site_identifier: a.site.slug },
    })) as CallToolResult;
    expect(media.isError ?? false).toBe(false);
    expect((media.structuredContent as { items: { id: string }[] }).items.map((item) => item.id)).toContain(image);
    const read = await client.readResource({ uri: `cms://${a.site.slug}/media/${image}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: image });
    expect((await client.listPrompts()).prompts).toEqual(expect.any(Array));
    expect(served.one).toBeGreaterThanOrEqual(2);
    expect(served.two).toBeGreaterThanOrEqual(2);
  });

  it('are initialized on one process and called on the other, by the SDK client resuming the session', async () => {
    const opened = await connectMcp(one.url, a.editor.auth);
    const session = opened.transport.sessionId!;
    const { client } = await connectMcp(two.url, a.editor.auth, { sessionId: session });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('get_page');
    const page = await request(t.app)
      .post(`/${a.site.slug}/pages/`)
      .set(a.editor.auth)
      .send({ slug: `across-${Date.now()}`, title: 'Across processes' })
      .expect(201);
    const read = (await client.callTool({
      name: 'get_page',
      arguments: { site_identifier: a.site.slug, page_id: page.body.id },
    })) as CallToolResult;
    expect(read.structuredContent).toMatchObject({ id: page.body.id, title: 'Across processes' });
  });

  it('are their caller’s alone on every process, and a service account’s too', async () => {
    const session = await openOn(one, a.editor.auth);
    const stranger = await post(two, a.admin.auth, toolsList, session);
    expect(stranger.status).toBe(404);
    expect(stranger.headers.get('content-type')).toMatch(/problem\+json/);
    const mine = await post(two, a.editor.auth, toolsList, session);
    expect(mine.status).toBe(200);
    expect(await mine.text()).toMatch(/"tools"/);

    // A service account's session carries its tenant (row-level security), and is found on either process.
    const bot = await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin);
    const botSession = await openOn(two, bot.auth);
    const listed = await post(one, bot.auth, toolsList, botSession);
    expect(listed.status).toBe(200);
    await listed.text();
    const owner = await t.services.db.oneFirst(sql.type(z.object({ tenant_id: z.uuid().nullable() }))`
      select tenant_id from mcp_sessions where id = ${botSession}`);
    expect(owner).toBe(a.tenant.id);
  });

  it('are ended on one process for every process', async () => {
    const session = await openOn(one, a.editor.auth);
    await request(other.app).delete('/mcp').set(a.editor.auth).set('Mcp-Session-Id', session).expect(204);
    expect((await post(one, a.editor.auth, toolsList, session)).status).toBe(404);
    await request(t.app).delete('/mcp').set(a.editor.auth).set('Mcp-Session-Id', session).expect(404);
  });

  it(`are over once unused for ${idleMinutes} minutes, and kept alive by use`, async () => {
    const idle = await openOn(one, a.editor.auth);
    const used = await openOn(one, a.editor.auth);
    const ago = (minutes: number) => sql.fragment`now() - make_interval(mins => ${minutes})`;
    await t.services.db.query(sql.typeAlias('void')`
      update mcp_sessions set last_used_at = ${ago(idleMinutes + 1)} where id = ${idle}`);
    await t.services.db.query(sql.typeAlias('void')`
      update mcp_sessions set last_used_at = ${ago(idleMinutes - 1)} where id = ${used}`);
    expect((await post(two, a.editor.auth, toolsList, idle)).status).toBe(404);
    await request(t.app).delete('/mcp').set(a.editor.auth).set('Mcp-Session-Id', idle).expect(404);
    const alive = await post(two, a.editor.auth, toolsList, used);
    expect(alive.status).toBe(200);
    await alive.text();
    const lastUsed = await t.services.db.oneFirst(sql.type(z.object({ recent: z.boolean() }))`
      select last_used_at > now() - interval '1 minute' as recent from mcp_sessions where id = ${used}`);
    expect(lastUsed).toBe(true);
  });

  it('refuse a second initialize on a session, and anything but initialize without one', async () => {
    const session = await openOn(one, a.editor.auth);
    const again = await post(two, a.editor.auth, initialize, session);
    expect(again.status).toBe(400);
    const without = await post(two, a.editor.auth, toolsList);
    expect(without.status).toBe(400);
    // A session id that is no UUID is not found, as any unknown one.
    expect((await post(two, a.editor.auth, toolsList, 'not-a-session')).status).toBe(404);
  });

  it('do not outlive a refused initialize', async () => {
    const before = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from mcp_sessions where user_id = ${a.author.user.id}`);
    const refused = await fetch(one.url, {
      method: 'POST',
      headers: { ...a.author.auth, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(initialize),
    });
    expect(refused.status).toBe(406);
    const after = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from mcp_sessions where user_id = ${a.author.user.id}`);
    expect(after).toBe(before);
  });
});
