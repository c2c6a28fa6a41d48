// A tool call made over MCP shows in the same step records as one made by an
// agent run: each tools/call through the real /mcp endpoint (the SDK's client
// on the app listening on 127.0.0.1) is recorded with its arguments and
// answer, or the problem it was refused with, and who made it, in which
// session; a tool that writes is recorded once, with its write. Global admins
// list the records of both sources at GET /admin/agent-steps, newest first.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { z } from 'zod';
import { recordStep } from '../../../core/agents/run-steps.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { mediaRow } from '../../helpers/content.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { giveCredits, newJob } from '../../helpers/jobs.ts';
import { closeMcpClients, connectMcp, listen, type Listening } from '../../helpers/mcp.ts';

let t: TestApp;
let mcp: Listening;
let a: Staffed;
let b: Staffed;
let admin: Caller;

beforeAll(async () => {
  t = await startTestApp();
  mcp = await listen(t.app);
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  admin = await globalAdmin(t);
});
afterAll(async () => {
  await closeMcpClients();
  await mcp?.close();
  await stopTestApp(t);
});

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** The records GET /admin/agent-steps lists for `query`, as a global admin reads them. */
async function steps(query: Record<string, string>) {
  const res = await request(t.app).get('/admin/agent-steps').query(query).set(admin.auth).expect(200);
  return res.body.items as Record<string, any>[];
}

/** A session of the caller, and its id. */
async function session(auth: Caller['auth'] | { Authorization: string }) {
  const { client, transport } = await connectMcp(mcp.url, auth);
  return { client, id: transport.sessionId! };
}

it('records a tools/call with its arguments, its answer and who made it, in which session', async () => {
  const image = await mediaRow(t, a.site);
  const { client, id } = await session(a.editor.auth);
  const args = { site_identifier: a.site.slug, kind: 'image' };
  const result = await call(client, 'list_media', args);
  expect(result.isError ?? false).toBe(false);

  const [step, ...more] = await steps({ mcp_session_id: id });
  expect(more).toEqual([]);
  expect(step).toEqual({
    id: expect.any(String),
    source: 'mcp',
    step: null,
    job_id: null,
    mcp_session_id: id,
    tenant_id: a.tenant.id,
    user_id: a.editor.user.id,
    service_account_id: null,
    kind: 'tool',
    name: 'list_media',
    input: args,
    output: result.structuredContent,
    tool_call_id: expect.any(String),
    status: 'ok',
    input_tokens: 0,
    output_tokens: 0,
    duration_ms: expect.any(Number),
    cost: 0,
    created_at: expect.any(String),
  });
  expect(step!.output.items.map((item: { id: string }) => item.id)).toContain(image);
});

it('records a refusal as refused, with the problem the client was told', async () => {
  const post = await request(t.app)
    .post(`/${a.site.slug}/posts/`)
    .set(a.editor.auth)
    .send({ title: `Editor’s ${unique()}` })
    .expect(201);
  const author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  const { client, id } = await session(author.auth);
  const denied = await call(client, 'update_post', {
    site_identifier: a.site.slug,
    post_id: post.body.id,
    title: 'Mine',
  });
  expect(denied.isError).toBe(true);
  const told = JSON.parse((denied.content[0] as { text: string }).text);
  expect(told.status).toBe(403);
  const invalid = await call(client, 'list_media', { site_identifier: a.site.slug, limit: 0 });
  expect(invalid.isError).toBe(true);
  // Not a tool call at all: the protocol's error, and no record.
  await expect(call(client, 'delete_everything', {})).rejects.toMatchObject({ code: -32602 });

  const recorded = await steps({ mcp_session_id: id });
  expect(recorded).toMatchObject([
    // Arguments are checked before the site is looked up: no tenant is known yet.
    { name: 'list_media', status: 'refused', output: { problem: { status: 422 } }, tenant_id: null },
    {
      name: 'update_post',
      status: 'refused',
      input: { post_id: post.body.id, title: 'Mine' },
      output: { problem: told },
      tenant_id: a.tenant.id,
      user_id: author.user.id,
    },
  ]);
  // The post is as it was.
  const stored = await request(t.app).get(`/${a.site.slug}/posts/${post.body.id}`).set(a.editor.auth).expect(200);
  expect(stored.body.title).toBe(post.body.title);
  // Another tenant's site is not admitted either.
  const outside = await call(client, 'list_media', { site_identifier: b.site.slug });
  expect(JSON.parse((outside.content[0] as { text: string }).text).status).toBe(404);
  const [latest] = await steps({ mcp_session_id: id });
  expect(latest).toMatchObject({ name: 'list_media', status: 'refused', tenant_id: null });
});

it('records a tool that writes once, committed with its write', async () => {
  const { client, id } = await session(a.editor.auth);
  const title = `Drafted over MCP ${unique()}`;
  const made = await call(client, 'create_post', { site_identifier: a.site.slug, title, body: 'Hello' });
  expect(made.isError ?? false).toBe(false);
  const posts = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select id from posts where title = ${title}`);
  expect(posts).toEqual([(made.structuredContent as { id: string }).id]);

  const recorded = await steps({ mcp_session_id: id, name: 'create_post' });
  expect(recorded).toHaveLength(1);
  expect(recorded[0]).toMatchObject({ status: 'ok', output: { id: posts[0], title, status: 'draft' } });
});

it('leaves no write when its record fails, and records the call as failed', async () => {
  const title = `Unrecorded ${unique()}`;
  // The database refuses this call's record of success, as if it failed between the write and its record.
  await t.services.db.query(sql.unsafe`
    create function refuse_record() returns trigger language plpgsql as $$
    begin
      if new.status = 'ok' and new.input->>'title' = ${sql.literalValue(title)} then
        raise exception 'simulated failure of the record';
      end if;
      return new;
    end $$`);
  await t.services.db.query(
    sql.unsafe`create trigger refuse_record before insert on agent_run_steps for each row execute function refuse_record()`,
  );
  try {
    const { client, id } = await session(a.editor.auth);
    const failed = await call(client, 'create_post', { site_identifier: a.site.slug, title });
    expect(failed.isError).toBe(true);
    expect(JSON.parse((failed.content[0] as { text: string }).text).status).toBe(500);
    const posts = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
      select id from posts where title = ${title}`);
    expect(posts).toEqual([]);
    expect(await steps({ mcp_session_id: id })).toMatchObject([
      { name: 'create_post', status: 'failed', output: { problem: { status: 500 } } },
    ]);
  } finally {
    await t.services.db.query(sql.unsafe`drop trigger refuse_record on agent_run_steps`);
  }
});

it('records a job tool with the job as submitted, and the client still waits for it', async () => {
  await giveCredits(t, a.site, 1000, a.editor.user.id);
  const { client, id } = await session(a.editor.auth);
  // No worker runs here: the job stays queued, and the wait of one second passes.
  const result = await call(client, 'text_to_speech', { site_identifier: a.site.slug, text: 'Hello.', wait: 1 });
  const job = result.structuredContent as { id: string; status: string };
  expect(job.status).toBe('queued');
  const [step] = await steps({ mcp_session_id: id });
  expect(step).toMatchObject({ name: 'text_to_speech', status: 'ok', output: { id: job.id, kind: 'speech' } });
  expect(step!.duration_ms).toBeLessThan(1000);
});

it('keeps the records once the session is over, and names a service account as the caller', async () => {
  const bot = await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin);
  const { client, transport } = await connectMcp(mcp.url, bot.auth);
  const id = transport.sessionId!;
  await call(client, 'list_media', { site_identifier: a.site.slug });
  await transport.terminateSession();
  const [step] = await steps({ mcp_session_id: id });
  expect(step).toMatchObject({
    source: 'mcp',
    name: 'list_media',
    status: 'ok',
    tenant_id: a.tenant.id,
    user_id: null,
    service_account_id: bot.account.id,
  });
});

describe('GET /admin/agent-steps', () => {
  it('lists both sources newest first, with filters, in cursor pages', async () => {
    const run = await newJob(t, b.site, { kind: 'agent_run', userId: b.editor.user.id, status: 'running' });
    await recordStep(t.services.db, run, {
      step: 1,
      kind: 'model',
      name: 'openai/gpt-5.4-mini',
      input: { messages: 2 },
      output: { text: 'Hello' },
      status: 'ok',
      input_tokens: 100,
      output_tokens: 10,
      duration_ms: 5,
      cost: 1.1,
    });
    const { client, id } = await session(b.editor.auth);
    await call(client, 'list_media', { site_identifier: b.site.slug });
    await call(client, 'list_media', { site_identifier: b.site.slug, kind: 'video' });

    const ofB = await steps({ tenant_id: b.tenant.id });
    expect(ofB.map((step) => [step.source, step.name])).toEqual([
      ['mcp', 'list_media'],
      ['mcp', 'list_media'],
      ['run', 'openai/gpt-5.4-mini'],
    ]);
    expect(ofB[0]!.input).toEqual({ site_identifier: b.site.slug, kind: 'video' });
    // A run's caller is whoever started it.
    expect(ofB[2]).toMatchObject({
      job_id: run.id,
      step: 1,
      mcp_session_id: null,
      user_id: b.editor.user.id,
      input_tokens: 100,
      cost: 1.1,
    });
    expect(await steps({ source: 'run', job_id: run.id })).toHaveLength(1);
    expect(await steps({ source: 'mcp', job_id: run.id })).toEqual([]);
    expect(await steps({ mcp_session_id: id, name: 'create_post' })).toEqual([]);
    expect(await steps({ tenant_id: b.tenant.id, status: 'refused' })).toEqual([]);

    const walked = await expectPaginates(t, admin.auth, `/admin/agent-steps?tenant_id=${b.tenant.id}`);
    expect(walked).toEqual(ofB.map((step) => step.id));
  });

  it('is for global admins only', async () => {
    await request(t.app).get('/admin/agent-steps').expect(401);
    await request(t.app).get('/admin/agent-steps').set(a.admin.auth).expect(403);
    const bot = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    await request(t.app).get('/admin/agent-steps').set(bot.auth).expect(403);
  });

  it('refuses a filter it does not know the shape of', async () => {
    for (const query of [{ source: 'cron' }, { job_id: 'not-a-job' }, { mcp_session_id: '42' }, { status: 'fine' }]) {
      const res = await request(t.app).get('/admin/agent-steps').query(query).set(admin.auth).expect(422);
      expect(res.body.errors[0].path).toBe(`query.${Object.keys(query)[0]}`);
    }
  });
});
