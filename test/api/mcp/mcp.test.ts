// The MCP server at /mcp, driven by the SDK's own Client and streamable HTTP
// transport against the app listening on 127.0.0.1: the tools listed with
// their schemas, each called for real (the jobs run by a worker with the local
// providers), the REST endpoints' access rules and credits, an agent's tools
// and status, sessions bound to their caller, and callers without a token.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { z } from 'zod';
import { agentTools } from '../../../core/agents/tools.ts';
import { sql } from '../../../db/pool.ts';
import { newAgent as createAgent } from '../../helpers/agents.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { mediaRow } from '../../helpers/content.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Auth, type Staffed } from '../../helpers/identity.ts';
import { giveCredits, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { indexCorpus } from '../../helpers/knowledge.ts';
import { sessionsPerCaller } from '../../../core/mcp/sessions.ts';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';
import { unique } from '../../helpers/identity.ts';

let t: TestApp;
let server: http.Server;
let url: URL;
let worker: WorkerHandle;
let a: Staffed;
let b: Staffed;
let admin: Caller;
const clients: Client[] = [];
let receiver: Receiver;
// Job webhooks may go to the receiver on 127.0.0.1, as in test/api/jobs/webhooks.test.ts.
const env = { FETCH_ALLOW_LOOPBACK: 'true', JOB_WEBHOOK_HTTP_HOSTS: '127.0.0.1' };

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({ env });
  server = http.createServer(t.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  admin = await globalAdmin(t);
  worker = await startTestWorker(t, env);
});
afterAll(async () => {
  await receiver?.close();
  await Promise.all(clients.map((client) => client.close()));
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await stopTestApp(t);
});

async function connect(auth: Auth | Record<string, never>, agentId?: string) {
  const headers = { ...auth, ...(agentId ? { 'MCP-Agent-Id': agentId } : {}) };
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'platform-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** A tool's answer: the REST endpoint's body, as structured content (and as text). */
function answerOf(result: CallToolResult): Record<string, any> {
  expect(result.isError ?? false).toBe(false);
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as Record<string, any>;
}

/** A refused call: a tool error whose text is a problem document. */
function problemOf(result: CallToolResult): Record<string, any> {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const problem = JSON.parse((result.content[0] as { text: string }).text);
  expect(problem).toMatchObject({ type: expect.any(String), title: expect.any(String), status: expect.any(Number) });
  return problem;
}

const newAgent = async (body: Record<string, unknown>, tenants: string[]) =>
  (await createAgent(t, admin, { name: 'MCP agent', ...body }, tenants)).id;

describe('tools/list', () => {
  it('lists the nine tools with the REST endpoints’ argument and answer schemas', async () => {
    const { client } = await connect(a.editor.auth);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...agentTools]);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    const createPost = byName.create_post!;
    expect(createPost.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: expect.arrayContaining(['site_identifier', 'title']),
    });
    // Drafts only: the endpoint's status is not an argument, nor the time only a scheduled post has.
    expect(Object.keys(createPost.inputSchema.properties!)).not.toContain('status');
    expect(Object.keys(createPost.inputSchema.properties!)).not.toContain('scheduled_for');
    // Arguments are JSON: a flag is a boolean, not the text a query string would carry.
    expect(byName.list_media!.inputSchema.properties!.include_total).toMatchObject({ type: 'boolean' });
    expect(createPost.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['id', 'title']),
    });
    expect(Object.keys(byName.generate_image!.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['site_identifier', 'prompt', 'count', 'wait', 'webhook', 'webhook_events']),
    );
    // Only the tools that make a job take a webhook.
    expect(Object.keys(byName.get_job!.inputSchema.properties!)).not.toContain('webhook');
    expect(Object.keys(byName.list_media!.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['site_identifier', 'limit', 'cursor', 'kind']),
    );
    expect(byName.get_job!.annotations).toMatchObject({ readOnlyHint: true });
    expect(client.getServerVersion()).toMatchObject({ name: 'content-agent-platform' });
  });
});

describe('the tools, called for real', () => {
  it('search_content searches a public site as its endpoint does', async () => {
    const site = await staffedTenant(t);
    await request(t.app)
      .post(`/${site.site.slug}/posts/`)
      .set(site.editor.auth)
      .send({ title: 'Lighthouse keepers of the north', body: 'A story of lamps and storms.', status: 'published' })
      .expect(201);
    await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.site.id}`);
    await accessChangeHeard(t);
    const { client } = await connect(a.author.auth);
    const found = answerOf(await call(client, 'search_content', { site_identifier: site.site.slug, q: 'lighthouse' }));
    expect(found.total).toBe(1);
    expect(found.items[0]).toMatchObject({ kind: 'post', title: 'Lighthouse keepers of the north' });
    // A private site is not found, as on GET /search/sites/{site}.
    expect(problemOf(await call(client, 'search_content', { site_identifier: a.site.slug, q: 'x' })).status).toBe(404);
  });

  it('knowledge_search ranks an agent’s chunks as its endpoint does, and only the session agent’s', async () => {
    const agentId = await newAgent({ tools: ['knowledge_search'] }, [a.tenant.id]);
    await indexCorpus(t, agentId, a.site, a.admin.auth);
    const { client } = await connect(a.editor.auth);
    const found = answerOf(
      await call(client, 'knowledge_search', { agent_id: agentId, query: 'kettle warranty', limit: 1 }),
    );
    expect(found).toMatchObject({ mode: 'full_text' });
    expect(found.items[0].content).toContain('The kettle has a two-year warranty');
    // Another tenant's member does not see the agent.
    const outsider = (await connect(b.editor.auth)).client;
    expect(problemOf(await call(outsider, 'knowledge_search', { agent_id: agentId, query: 'kettle' })).status).toBe(
      404,
    );
    // A session with an agent searches that agent's base only.
    const other = await newAgent({ tools: ['knowledge_search'] }, [a.tenant.id]);
    const scoped = (await connect(a.editor.auth, other)).client;
    expect(problemOf(await call(scoped, 'knowledge_search', { agent_id: agentId, query: 'kettle' })).status).toBe(404);
    expect(answerOf(await call(scoped, 'knowledge_search', { agent_id: other, query: 'kettle' })).items).toEqual([]);
  });

  it('get_page and list_media read the site as their endpoints do', async () => {
    const page = await request(t.app)
      .post(`/${a.site.slug}/pages/`)
      .set(a.editor.auth)
      .send({ slug: 'about', title: 'About us' })
      .expect(201);
    const image = await mediaRow(t, a.site);
    const { client } = await connect(a.editor.auth);
    const read = answerOf(await call(client, 'get_page', { site_identifier: a.site.id, page_id: page.body.id }));
    expect(read).toMatchObject({ id: page.body.id, title: 'About us', elements: [] });
    const media = answerOf(
      await call(client, 'list_media', { site_identifier: a.site.slug, kind: 'image', include_total: true }),
    );
    expect(media.items.map((item: { id: string }) => item.id)).toContain(image);
    expect(media.total).toBeGreaterThanOrEqual(1);
    // Each with its file's URL, as the endpoint answers it (a private site's: signed, expiring).
    const listed = media.items.find((item: { id: string }) => item.id === image);
    expect(listed).toMatchObject({
      url: expect.stringMatching(new RegExp(`/${a.site.id}/media/${image}/signed-view\\?expires=\\d+&signature=`)),
      url_expires_at: expect.any(String),
    });
    // Another tenant's site is not found, as over REST.
    const other = await call(client, 'get_page', { site_identifier: b.site.slug, page_id: page.body.id });
    expect(problemOf(other).status).toBe(404);
  });

  it('create_post writes drafts only and update_post changes them, with the posts endpoints’ rules', async () => {
    const writer = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
    const { client } = await connect(writer.auth);
    const post = answerOf(
      await call(client, 'create_post', { site_identifier: a.site.slug, title: 'Agent notes', body: '# Hello' }),
    );
    expect(post).toMatchObject({ title: 'Agent notes', status: 'draft', slug: 'agent-notes' });
    const refused = problemOf(
      await call(client, 'create_post', { site_identifier: a.site.slug, title: 'Live', status: 'published' }),
    );
    expect(refused).toMatchObject({ status: 422, errors: [{ path: 'arguments', message: expect.any(String) }] });

    const changed = answerOf(
      await call(client, 'update_post', {
        site_identifier: a.site.slug,
        post_id: post.id,
        title: 'Agent notes, revised',
      }),
    );
    expect(changed).toMatchObject({ id: post.id, title: 'Agent notes, revised', version: post.version + 1 });
    const stored = await request(t.app).get(`/${a.site.slug}/posts/${post.id}`).set(a.editor.auth).expect(200);
    expect(stored.body).toMatchObject({ title: 'Agent notes, revised', status: 'draft' });
    // The endpoint's refinement: at least one field.
    const empty = problemOf(await call(client, 'update_post', { site_identifier: a.site.slug, post_id: post.id }));
    expect(empty.status).toBe(422);

    // Authors change only their own posts: 403, as PATCH answers.
    const other = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
    const { client: otherAuthor } = await connect(other.auth);
    const denied = await call(otherAuthor, 'update_post', {
      site_identifier: a.site.slug,
      post_id: post.id,
      title: 'Mine',
    });
    expect(problemOf(denied).status).toBe(403);
  });

  it('generate_image, text_to_speech and get_job make and read paid jobs, charged as their endpoints charge', async () => {
    await giveCredits(t, a.site, 1000, a.editor.user.id);
    const { client } = await connect(a.editor.auth);
    // While it waits, the client hears the job's progress (it passed a progress token by asking for it).
    const progress: number[] = [];
    const image = answerOf(
      (await client.callTool(
        {
          name: 'generate_image',
          arguments: { site_identifier: a.site.slug, prompt: 'A red kite', size: '256x256', wait: 30 },
        },
        undefined,
        { onprogress: (event) => progress.push(event.progress) },
      )) as CallToolResult,
    );
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort());
    expect(image).toMatchObject({ kind: 'image', status: 'succeeded', media_ids: [expect.any(String)] });
    // The job as its endpoint answers it, with its media's file URLs (answered once the wait, after the commit, ends).
    expect(image.media_urls).toEqual([
      expect.stringContaining(`/${a.site.id}/media/${image.media_ids[0]}/signed-view?`),
    ]);
    expect(image.media_urls_expire_at).toEqual(expect.any(String));
    const rest = await request(t.app)
      .post(`/${a.site.slug}/media/generate`)
      .set(a.editor.auth)
      .set('Prefer', 'wait=30')
      .send({ prompt: 'A red kite', size: '256x256' })
      .expect(200);
    expect([image.credits_reserved, image.credits_charged]).toEqual([
      rest.body.credits_reserved,
      rest.body.credits_charged,
    ]);
    expect(image.credits_charged).toBeGreaterThan(0);
    expect((await ledgerFor(t, image.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);
    const made = await request(t.app).get(`/${a.site.slug}/media/${image.media_ids[0]}`).set(a.editor.auth).expect(200);
    expect(made.body).toMatchObject({ kind: 'image', width: 256, job_id: image.id });

    // Without waiting: the job as submitted, then read back with get_job, waiting for its end.
    const speech = answerOf(
      await call(client, 'text_to_speech', {
        site_identifier: a.site.slug,
        text: 'Hello from the agent.',
        format: 'wav',
      }),
    );
    expect(speech).toMatchObject({
      kind: 'speech',
      credits_reserved: expect.any(Number),
      media_url: null,
      media_urls: [],
    });
    const spoken = answerOf(
      await call(client, 'get_job', { site_identifier: a.site.slug, job_id: speech.id, wait: 30 }),
    );
    expect(spoken).toMatchObject({ id: speech.id, status: 'succeeded', media_id: expect.any(String) });
    expect(spoken.media_url).toContain(`/${a.site.id}/media/${spoken.media_id}/signed-view?`);
    const audio = await request(t.app).get(`/${a.site.slug}/media/${spoken.media_id}`).set(a.editor.auth).expect(200);
    expect(audio.body).toMatchObject({ kind: 'audio', mime_type: 'audio/wav' });

    // Another tenant's member does not find the job.
    const { client: outsider } = await connect(b.admin.auth);
    expect(problemOf(await call(outsider, 'get_job', { site_identifier: a.site.slug, job_id: speech.id })).status).toBe(
      404,
    );
  });

  it('sends a job’s events to the webhook a job tool names, signed as for its endpoint, and refuses one it may not', async () => {
    await giveCredits(t, a.site, 1000, a.editor.user.id);
    const { client } = await connect(a.editor.auth);
    const path = `/hooks/${unique()}`;
    const speech = answerOf(
      await call(client, 'text_to_speech', {
        site_identifier: a.site.slug,
        text: 'Tell me when it is done.',
        format: 'wav',
        webhook: `${receiver.url}${path}`,
        webhook_events: ['start', 'completed'],
      }),
    );
    const [started, completed] = await receiver.waitFor(path, 2);
    const { body: secret } = await request(t.app)
      .get(`/api/tenants/${a.tenant.id}/webhook-secret`)
      .set(a.admin.auth)
      .expect(200);
    const payloads = [started!, completed!].map(
      (delivery) => new Webhook(secret.secret).verify(delivery.body, delivery.headers) as Record<string, unknown>,
    );
    expect(payloads).toMatchObject([
      { type: 'job.started', data: { id: speech.id } },
      { type: 'job.completed', data: { id: speech.id, status: 'succeeded' } },
    ]);
    // As the endpoint refuses them: plain http to a host not allowed, and events without a webhook.
    const http = problemOf(
      await call(client, 'text_to_speech', {
        site_identifier: a.site.slug,
        text: 'No.',
        webhook: 'http://example.com/hook',
      }),
    );
    expect(http).toMatchObject({ status: 422, errors: [{ path: 'arguments.webhook' }] });
    const eventsAlone = problemOf(
      await call(client, 'generate_image', {
        site_identifier: a.site.slug,
        prompt: 'A kite',
        webhook_events: ['start'],
      }),
    );
    expect(eventsAlone).toMatchObject({ status: 422, errors: [{ path: 'arguments.webhook_events' }] });
  });

  it('answers 402 when the caller cannot pay, reserving nothing, and 422 past the speech limit', async () => {
    const poor = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    const { client } = await connect(poor.auth);
    const refused = problemOf(await call(client, 'generate_image', { site_identifier: a.site.slug, prompt: 'A kite' }));
    expect(refused.status).toBe(402);
    const jobs = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from jobs where user_id = ${poor.user.id}`);
    expect(jobs).toBe(0);
    const tooLong = problemOf(
      await call(client, 'text_to_speech', {
        site_identifier: a.site.slug,
        text: 'x'.repeat(t.config.speech.maxCharacters + 1),
      }),
    );
    expect(tooLong).toMatchObject({ status: 422, errors: [{ path: 'arguments.text' }] });
  });
});

describe('who may call', () => {
  it('refuses a service account the scopes its endpoint needs', async () => {
    const reader = await serviceAccount(t, a.tenant, ['sites:read', 'content:read', 'media:read'], a.admin);
    const { client } = await connect(reader.auth);
    answerOf(await call(client, 'list_media', { site_identifier: a.site.slug }));
    const denied = problemOf(await call(client, 'create_post', { site_identifier: a.site.slug, title: 'Bot post' }));
    expect(denied).toMatchObject({ status: 403, detail: expect.stringContaining('content:write') });
  });

  it('refuses a session without a token, as the REST API does', async () => {
    await expect(connect({})).rejects.toMatchObject({ code: 401 });
    await expect(connect({ Authorization: 'Bearer not-a-token' })).rejects.toMatchObject({ code: 401 });
    const res = await request(t.app)
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      .expect(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });

  it('answers an unknown tool with a JSON-RPC error and bad arguments with a 422 problem', async () => {
    const { client } = await connect(a.editor.auth);
    await expect(call(client, 'delete_everything', {})).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    const bad = problemOf(await call(client, 'list_media', { site_identifier: a.site.slug, limit: 0, colour: 'red' }));
    expect(bad).toMatchObject({ status: 422 });
    expect(bad.errors.map((error: { path: string }) => error.path).sort()).toEqual(['arguments', 'arguments.limit']);
    // Text PostgreSQL cannot store is refused by the request path, as for any body.
    const nul = call(client, 'create_post', { site_identifier: a.site.slug, title: 'Nul \u0000' });
    await expect(nul).rejects.toMatchObject({ code: 422 });
    // A refusal without field errors has none to list.
    const missingPage = problemOf(
      await call(client, 'get_page', { site_identifier: a.site.slug, page_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(missingPage).not.toHaveProperty('errors');
    expect(missingPage.status).toBe(404);
  });
});

describe('a session configured with an agent', () => {
  it('lists and calls only the agent’s tools, with its instructions', async () => {
    const agentId = await newAgent({ instructions: 'Keep it short.', tools: ['list_media', 'get_job'] }, [a.tenant.id]);
    const { client } = await connect(a.editor.auth, agentId);
    expect(client.getInstructions()).toBe('Keep it short.');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['list_media', 'get_job']);
    answerOf(await call(client, 'list_media', { site_identifier: a.site.slug }));
    const denied = problemOf(await call(client, 'create_post', { site_identifier: a.site.slug, title: 'Nope' }));
    expect(denied).toMatchObject({ status: 403, detail: expect.stringContaining('create_post') });
    // Changes to the agent apply to the open session at once.
    await request(t.app)
      .patch(`/api/agents/${agentId}`)
      .set(admin.auth)
      .send({ tools: ['get_job'] })
      .expect(200);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['get_job']);
    expect(problemOf(await call(client, 'list_media', { site_identifier: a.site.slug })).status).toBe(403);
  });

  it('is told the system prompt of the agent’s type before the agent’s own instructions', async () => {
    const type = `support-${Date.now()}`;
    await request(t.app)
      .post(`/system-prompts/${type}`)
      .set(admin.auth)
      .send({ content: 'You help readers.' })
      .expect(201);
    const agentId = await newAgent(
      { instructions: 'Answer in French.', system_prompt_type: type, tools: ['get_job'] },
      [a.tenant.id],
    );
    expect((await connect(a.editor.auth, agentId)).client.getInstructions()).toBe(
      'You help readers.\n\nAnswer in French.',
    );
  });

  it('works only on the sites of the tenants the agent is assigned to', async () => {
    const agentId = await newAgent({ tools: ['list_media'] }, [a.tenant.id]);
    const { client } = await connect(admin.auth, agentId);
    answerOf(await call(client, 'list_media', { site_identifier: a.site.slug }));
    expect(problemOf(await call(client, 'list_media', { site_identifier: b.site.slug })).status).toBe(404);
  });

  it('refuses an agent the caller does not see, and a disabled agent, also one disabled mid-session', async () => {
    const agentId = await newAgent({ tools: ['list_media'] }, [a.tenant.id]);
    await expect(connect(b.admin.auth, agentId)).rejects.toMatchObject({ code: 404 });
    await expect(connect(a.editor.auth, 'not-an-agent-id')).rejects.toMatchObject({ code: 422 });
    const { client } = await connect(a.editor.auth, agentId);
    await request(t.app).patch(`/api/agents/${agentId}`).set(admin.auth).send({ status: 'disabled' }).expect(200);
    const refused = problemOf(await call(client, 'list_media', { site_identifier: a.site.slug }));
    expect(refused).toMatchObject({ status: 403, detail: expect.stringContaining('disabled') });
    await expect(client.listTools()).rejects.toBeInstanceOf(McpError);
    await expect(connect(a.editor.auth, agentId)).rejects.toMatchObject({ code: 403 });
  });
});

describe('sessions', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (auth: Auth, body: unknown, session?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        ...auth,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(session ? { 'Mcp-Session-Id': session } : {}),
      },
      body: JSON.stringify(body),
    });

  it('take one message a request: a batch is a 422, not a hundred tool calls for one', async () => {
    const batch = await post(a.editor.auth, [initialize, { ...initialize, id: 2 }]);
    expect(batch.status).toBe(422);
    expect(((await batch.json()) as { status: number }).status).toBe(422);
  });

  it('belong to the caller who opened them, give a stream on GET and end on DELETE', async () => {
    const opened = await post(a.editor.auth, initialize);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/text\/event-stream/);
    const session = opened.headers.get('mcp-session-id')!;
    expect(await opened.text()).toMatch(/"serverInfo"/);
    expect((await post(a.editor.auth, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(
      202,
    );

    // Someone else's token does not find it.
    const stranger = await post(a.admin.auth, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
    expect(stranger.status).toBe(404);
    expect(stranger.headers.get('content-type')).toMatch(/problem\+json/);

    const controller = new AbortController();
    const stream = await fetch(url, {
      headers: { ...a.editor.auth, Accept: 'text/event-stream', 'Mcp-Session-Id': session },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    controller.abort();

    await request(t.app).delete('/mcp').set(a.admin.auth).set('Mcp-Session-Id', session).expect(404);
    await request(t.app).delete('/mcp').set(a.editor.auth).expect(400);
    await request(t.app).delete('/mcp').set(a.editor.auth).set('Mcp-Session-Id', session).expect(204);
    expect((await post(a.editor.auth, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session)).status).toBe(404);
  });

  it('are kept to a few per caller, the least recently used closing first', async () => {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const open = async (auth: Auth) => {
      const res = await post(auth, initialize);
      await res.text();
      return res.headers.get('mcp-session-id')!;
    };
    const someoneElses = await open(a.editor.auth);
    const caller = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    const opened: string[] = [];
    for (let i = 0; i <= sessionsPerCaller; i++) opened.push(await open(caller.auth));
    expect((await post(caller.auth, list, opened[0])).status).toBe(404);
    const newest = await post(caller.auth, list, opened.at(-1));
    expect(newest.status).toBe(200);
    expect(await newest.text()).toMatch(/"tools"/);
    // Another caller's session is not among those closed.
    const kept = await post(a.editor.auth, list, someoneElses);
    expect(kept.status).toBe(200);
    await kept.text();
  });

  it('are ended by the SDK client’s terminateSession', async () => {
    const { client, transport } = await connect(a.editor.auth);
    const session = transport.sessionId!;
    await transport.terminateSession();
    await request(t.app).delete('/mcp').set(a.editor.auth).set('Mcp-Session-Id', session).expect(404);
    await client.close();
  });
});
