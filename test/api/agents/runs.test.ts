// Agent runs through the HTTP API: an agent assigned to the tenant, with a
// knowledge base and tools, run against OpenAI's strict fake on 127.0.0.1,
// which scripts the model's tool calls. The run searches the knowledge base,
// writes a draft post through create_post, and answers citing a chunk; its
// steps, its conversation and its credits (the sum of its steps at the
// model's price) are checked. A tool the member may not use answers the
// model 403 and the run goes on; the local runtime quotes the knowledge base.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { newAgent } from '../../helpers/agents.ts';
import { startFakeOpenAI, textModelEnv, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { bearer, globalAdmin, unique, type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { indexCorpus } from '../../helpers/knowledge.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
// Its listening socket would keep a lone run of this file from exiting.
afterAll(() => fake.close());
// 10 credits per 1,000 tokens: a step's cost is easy to reckon.
const withModel = () => textModelEnv(fake, 10);
const suite = jobsSuite(withModel);
let agentId: string;
/** An author of the site (the suite's own author reaches no site). */
let author: Caller;

beforeAll(async () => {
  const { t, a } = suite;
  const admin = await globalAdmin(t);
  const agent = await newAgent(
    t,
    admin,
    {
      instructions: 'You help the harbour’s editors.',
      tools: ['knowledge_search', 'create_post', 'update_post'],
    },
    [a.tenant.id],
  );
  agentId = agent.id;
  suite.worker = await startTestWorker(t, withModel());
  await indexCorpus(t, agentId, a.site, a.admin.auth, [
    { title: 'Ferry', content: 'The ferry to the island leaves the harbour at nine every morning.' },
    { title: 'Market', content: 'The fish market opens on Saturdays at six and closes at noon.' },
  ]);
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  for (const caller of [a.editor, author]) await giveCredits(t, a.site, 1000, caller.user.id);
});
// The suite stops its worker after each test (test/helpers/jobs.ts): each test has one of its own.
beforeEach(async () => {
  suite.worker ??= await startTestWorker(suite.t, withModel());
});
afterEach(() => fake.reset());

const runs = (path = '') => `/${suite.a.site.slug}/agents/${agentId}${path}`;
const startRun = (body: Record<string, unknown>, auth: Auth = suite.a.editor.auth, wait = 30) =>
  request(suite.t.app).post(runs('/runs')).set(auth).set('Prefer', `wait=${wait}`).send(body);
const readRun = (id: string, auth: Auth = suite.a.editor.auth) =>
  request(suite.t.app)
    .get(runs(`/runs/${id}`))
    .set(auth)
    .expect(200);

const chat = () => fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions');

it('searches the knowledge base, writes a draft through create_post, and answers citing the chunk', async () => {
  const title = `Ferry times ${unique()}`;
  fake.script(
    'chat/completions',
    {
      kind: 'ok',
      reply: {
        toolCalls: [{ id: 'call_search', name: 'knowledge_search', arguments: '{"query":"ferry"}' }],
        usage: { promptTokens: 400, completionTokens: 20 },
      },
    },
    {
      kind: 'ok',
      reply: {
        toolCalls: [
          {
            id: 'call_post',
            name: 'create_post',
            arguments: JSON.stringify({ title, body: 'The ferry leaves at nine.' }),
          },
        ],
        usage: { promptTokens: 600, completionTokens: 40 },
      },
    },
    {
      kind: 'ok',
      reply: {
        content: 'The ferry leaves at nine [1]. I wrote a draft post about it.',
        usage: { promptTokens: 700, completionTokens: 40 },
      },
    },
  );
  const res = await startRun({ input: 'When does the ferry leave? Write a short draft about it.' }).expect(200);
  expect(res.body).toMatchObject({ kind: 'agent_run', status: 'succeeded' });
  expect(res.body.output).toMatchObject({
    answer: 'The ferry leaves at nine [1]. I wrote a draft post about it.',
    runtime: 'model',
    provider: 'openai',
    model: 'gpt-5.4-mini',
    steps: 5,
    tokens: 1800,
    stopped: null,
    citations: [{ marker: 1, document_title: 'Ferry', excerpt: expect.stringContaining('leaves the harbour at nine') }],
  });

  // The model was offered the agent's tools, less what the run decides itself (the site, the agent).
  const [first] = chat();
  const offered = (first!.body as { tools: { function: { name: string; parameters: { properties: object } } }[] })
    .tools;
  expect(offered.map((tool) => tool.function.name)).toEqual(['create_post', 'update_post', 'knowledge_search']);
  for (const tool of offered) {
    expect(tool.function.parameters.properties).not.toHaveProperty('site_identifier');
    expect(tool.function.parameters.properties).not.toHaveProperty('agent_id');
  }
  // The second call carried the passages with their markers.
  const second = chat()[1]!.body as { messages: { role: string; content: string }[] };
  expect(second.messages.find((message) => message.role === 'tool')?.content).toContain('"marker":1');

  // The post exists once, a draft, written by the editor who started the run.
  const posts = await suite.t.services.db.any(sql.type(z.object({ status: z.string(), author_id: z.string() }))`
    select status, author_id from posts where title = ${title}`);
  expect(posts).toEqual([{ status: 'draft', author_id: suite.a.editor.user.id }]);

  // Its steps: model, tool, model, tool, model; the run's credits are their costs' sum, rounded up.
  const run = await readRun(res.body.id);
  expect(run.body.steps.map((step: { kind: string; name: string }) => `${step.kind}:${step.name}`)).toEqual([
    'model:openai/gpt-5.4-mini',
    'tool:knowledge_search',
    'model:openai/gpt-5.4-mini',
    'tool:create_post',
    'model:openai/gpt-5.4-mini',
  ]);
  // A global admin sees the same steps in the job tables.
  const admin = await request(suite.t.app).get(`/admin/jobs/${res.body.id}`).set(suite.admin.auth).expect(200);
  expect(admin.body.agent_steps).toEqual(run.body.steps);
  const cost = run.body.steps.reduce((sum: number, step: { cost: number }) => sum + step.cost, 0);
  expect(cost).toBeCloseTo(18, 6);
  expect(res.body).toMatchObject({ credits_reserved: 200, credits_charged: 18 });
  expect((await ledgerFor(suite.t, res.body.id)).map((entry) => entry.kind)).toEqual([
    'reservation',
    'debit',
    'release',
  ]);

  // The conversation keeps the question and the answer with its citation.
  const conversation = run.body.conversation_id as string;
  const messages = await request(suite.t.app)
    .get(runs(`/conversations/${conversation}/messages`))
    .set(suite.a.editor.auth)
    .expect(200);
  expect(messages.body.items).toMatchObject([
    { role: 'user', content: 'When does the ferry leave? Write a short draft about it.', run_id: res.body.id },
    { role: 'assistant', run_id: res.body.id, citations: [{ marker: 1, document_title: 'Ferry' }] },
  ]);
  await expectLedgerHolds(suite.t);
});

it('goes on with a conversation: the next run reads what was said', async () => {
  fake.script('chat/completions', { kind: 'ok', reply: { content: 'Hello.' } });
  const first = await startRun({ input: 'My name is Ada.' }).expect(200);
  const conversation = first.body.input.conversation_id as string;
  fake.script('chat/completions', { kind: 'ok', reply: { content: 'You are Ada.' } });
  const second = await startRun({ input: 'Who am I?', conversation_id: conversation }).expect(200);
  expect(second.body.output).toMatchObject({ answer: 'You are Ada.', conversation_id: conversation });
  const sent = chat().at(-1)!.body as { messages: { role: string; content: string }[] };
  expect(sent.messages.slice(1).map((message) => [message.role, message.content])).toEqual([
    ['user', 'My name is Ada.'],
    ['assistant', 'Hello.'],
    ['user', 'Who am I?'],
  ]);
  // Private to whoever began it: another member is told there is no such conversation.
  const other = await startRun({ input: 'Hi', conversation_id: conversation }, author.auth, 0).expect(422);
  expect(other.body.errors).toEqual([{ path: 'body.conversation_id', message: expect.any(String) }]);
  await request(suite.t.app)
    .get(runs(`/conversations/${conversation}/messages`))
    .set(author.auth)
    .expect(404);
  const listed = await request(suite.t.app).get(runs('/conversations')).set(suite.a.editor.auth).expect(200);
  expect(listed.body.items.map((item: { id: string }) => item.id)).toContain(conversation);
});

it('acts with the member’s access: an author’s run cannot change an editor’s post, and goes on', async () => {
  const post = await request(suite.t.app)
    .post(`/${suite.a.site.slug}/posts/`)
    .set(suite.a.editor.auth)
    .send({ title: `Editor’s ${unique()}`, body: 'Theirs.' })
    .expect(201);
  fake.script(
    'chat/completions',
    {
      kind: 'ok',
      reply: {
        toolCalls: [
          {
            id: 'call_update',
            name: 'update_post',
            arguments: JSON.stringify({ post_id: post.body.id, title: 'Mine' }),
          },
        ],
      },
    },
    { kind: 'ok', reply: { content: 'I may not change that post.' } },
  );
  const res = await startRun({ input: 'Rename the editor’s post.' }, author.auth).expect(200);
  expect(res.body).toMatchObject({ status: 'succeeded', output: { answer: 'I may not change that post.' } });
  const run = await readRun(res.body.id, author.auth);
  expect(run.body.steps[1]).toMatchObject({
    kind: 'tool',
    name: 'update_post',
    status: 'refused',
    output: { problem: { status: 403 } },
  });
  // The model was told.
  const told = chat().at(-1)!.body as { messages: { role: string; content: string }[] };
  expect(told.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('403') });
  const unchanged = await request(suite.t.app)
    .get(`/${suite.a.site.slug}/posts/${post.body.id}`)
    .set(suite.a.editor.auth)
    .expect(200);
  expect(unchanged.body.title).toBe(post.body.title);
});

it('acts within the API key it was started with: a key without content:write cannot write a post, and a revoked key ends the run', async () => {
  const { t, a } = suite;
  const keyFor = async (scopes: string[]) => {
    const made = await request(t.app)
      .post(`/api/tenants/${a.tenant.id}/api-keys`)
      .set(a.admin.auth)
      .send({ name: 'runs', user_id: a.editor.user.id, scopes })
      .expect(201);
    return { id: made.body.id as string, auth: bearer(made.body.key as string) };
  };
  const title = `Keyed ${unique()}`;
  fake.script(
    'chat/completions',
    {
      kind: 'ok',
      reply: { toolCalls: [{ id: 'call_post', name: 'create_post', arguments: JSON.stringify({ title, body: 'x' }) }] },
    },
    { kind: 'ok', reply: { content: 'The key may not write posts.' } },
  );
  // The editor may write posts; her key names jobs only.
  const narrow = await keyFor(['sites:read', 'jobs:read', 'jobs:write']);
  const res = await startRun({ input: 'Write a post.' }, narrow.auth).expect(200);
  expect(res.body).toMatchObject({ status: 'succeeded', output: { answer: 'The key may not write posts.' } });
  const run = await readRun(res.body.id, narrow.auth);
  expect(run.body.steps[1]).toMatchObject({
    kind: 'tool',
    name: 'create_post',
    status: 'refused',
    output: { problem: { status: 403 } },
  });
  const written = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select id from posts where title = ${title}`);
  expect(written).toEqual([]);

  // Queued while no worker runs; the key is revoked before a worker takes it.
  await suite.worker?.stop();
  suite.worker = undefined;
  const revoked = await keyFor(['sites:read', 'jobs:read', 'jobs:write', 'content:write']);
  const queued = await startRun({ input: 'Write a post.' }, revoked.auth, 0).expect(202);
  await request(t.app).delete(`/api/tenants/${a.tenant.id}/api-keys/${revoked.id}`).set(a.admin.auth).expect(204);
  suite.worker = await startTestWorker(t, withModel());
  const ended = await request(t.app)
    .get(`/${a.site.slug}/jobs/${queued.body.id}`)
    .set(a.editor.auth)
    .set('Prefer', 'wait=30')
    .expect(200);
  expect(ended.body).toMatchObject({ status: 'failed', error: { code: 'actor_unavailable' } });
  expect(chat()).toHaveLength(2);
});

it('searches before the first model call when the agent says so, handing the model the passages to cite', async () => {
  const admin = await globalAdmin(suite.t);
  const searcher = await newAgent(suite.t, admin, { knowledge_first: true, tools: [] }, [suite.a.tenant.id]);
  await indexCorpus(suite.t, searcher.id, suite.a.site, suite.a.admin.auth, [
    { title: 'Market', content: 'The fish market opens on Saturdays at six and closes at noon.' },
  ]);
  fake.script('chat/completions', { kind: 'ok', reply: { content: 'On Saturdays at six [1].' } });
  const res = await request(suite.t.app)
    .post(`/${suite.a.site.slug}/agents/${searcher.id}/runs`)
    .set(suite.a.editor.auth)
    .set('Prefer', 'wait=30')
    .send({ input: 'When does the fish market open?' })
    .expect(200);
  expect(res.body.output).toMatchObject({
    answer: 'On Saturdays at six [1].',
    citations: [{ marker: 1, document_title: 'Market' }],
  });
  const sent = chat()[0]!.body as { messages: { role: string; content: string }[] };
  expect(sent.messages.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining('"marker":1') });
  const run = await request(suite.t.app)
    .get(`/${suite.a.site.slug}/agents/${searcher.id}/runs/${res.body.id}`)
    .set(suite.a.editor.auth)
    .expect(200);
  expect(run.body.steps.map((step: { kind: string }) => step.kind)).toEqual(['retrieval', 'model']);
});

it('stops at max_steps, saying why', async () => {
  const search = {
    kind: 'ok' as const,
    reply: { toolCalls: [{ name: 'knowledge_search', arguments: '{"query":"x"}' }] },
  };
  fake.script('chat/completions', search, search, search);
  const res = await startRun({ input: 'Search forever.', max_steps: 2 }).expect(200);
  expect(res.body.output).toMatchObject({
    stopped: 'max_steps',
    stopped_because: expect.stringContaining('max_steps'),
  });
  expect(chat()).toHaveLength(2);
});

it('answers 404 for another tenant’s agent or site, 403 for a role or scope that may not, 401 without a token, 422 for a bad body', async () => {
  const { t, a, b } = suite;
  await request(t.app)
    .post(`/${b.site.slug}/agents/${agentId}/runs`)
    .set(b.admin.auth)
    .send({ input: 'x' })
    .expect(404);
  await request(t.app).post(runs('/runs')).set(b.admin.auth).send({ input: 'x' }).expect(404);
  await request(t.app).post(runs('/runs')).send({ input: 'x' }).expect(401);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read']);
  await request(t.app).post(runs('/runs')).set(reader.auth).send({ input: 'x' }).expect(403);
  for (const body of [
    {},
    { input: '' },
    { input: 'x', prompt_id: a.site.id },
    { input: 'x', max_steps: 0 },
    { input: 'x', y: 1 },
    { input: 'x', priority: 11 },
  ])
    await startRun(body, a.editor.auth, 0).expect(422);
  // An earlier turn than others' work takes an administrator of the tenant (core/jobs/request-priority.ts).
  await startRun({ input: 'x', priority: -5 }, a.editor.auth, 0).expect(403);
  await request(t.app)
    .get(runs(`/runs/${a.site.id}`))
    .set(a.editor.auth)
    .expect(404);
});

describe('the local runtime', () => {
  const local = jobsSuite();
  let localAgent: string;
  beforeAll(async () => {
    const admin = await globalAdmin(local.t);
    localAgent = (await newAgent(local.t, admin, { tools: ['create_post'] }, [local.a.tenant.id])).id;
    local.worker = await startTestWorker(local.t);
    await indexCorpus(local.t, localAgent, local.a.site, local.a.admin.auth, [
      { title: 'Market', content: 'The fish market opens on Saturdays at six and closes at noon.' },
    ]);
  });

  it('quotes the best passages with their citations, calls no tool, says what it is, and is free', async () => {
    const res = await request(local.t.app)
      .post(`/${local.a.site.slug}/agents/${localAgent}/runs`)
      .set(local.a.editor.auth)
      .set('Prefer', 'wait=30')
      .send({ input: 'When does the fish market open?' })
      .expect(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      credits_reserved: 0,
      credits_charged: 0,
      output: {
        runtime: 'local',
        placeholder: true,
        answer: expect.stringMatching(/local runtime[\s\S]*\[1\] Market: The fish market opens on Saturdays/),
        citations: [{ marker: 1, document_title: 'Market' }],
      },
    });
    const run = await request(local.t.app)
      .get(`/${local.a.site.slug}/agents/${localAgent}/runs/${res.body.id}`)
      .set(local.a.editor.auth)
      .expect(200);
    expect(run.body.steps).toMatchObject([{ kind: 'retrieval', name: 'knowledge_search', cost: 0 }]);
  });

  it('takes the priority asked for: a later turn from anyone, an earlier one from the tenant’s admins', async () => {
    const start = (auth: Auth, priority: number) =>
      request(local.t.app)
        .post(`/${local.a.site.slug}/agents/${localAgent}/runs`)
        .set(auth)
        .set('Prefer', 'wait=30')
        .send({ input: 'When does the fish market open?', priority });
    // Each test of a jobs suite starts with its worker stopped (jobsSuite's afterEach).
    local.worker = await startTestWorker(local.t);
    expect((await start(local.a.editor.auth, 3).expect(200)).body).toMatchObject({ status: 'succeeded', priority: 3 });
    await start(local.a.editor.auth, -2).expect(403);
    expect((await start(local.a.admin.auth, -2).expect(200)).body).toMatchObject({ status: 'succeeded', priority: -2 });
  });
});

describe('a run that resumes after its worker died', () => {
  /** A run queued with no worker to take it, and the steps a worker recorded before it died. */
  async function interrupted(steps: { kind: string; name: string; output: unknown; tool_call_id?: string }[]) {
    await suite.worker?.stop();
    suite.worker = undefined;
    const res = await startRun({ input: 'Write a draft about the ferry.' }, suite.a.editor.auth, 0).expect(202);
    for (const [index, step] of steps.entries())
      await suite.t.services.db.query(sql.typeAlias('void')`
        insert into agent_run_steps (job_id, step, tenant_id, kind, name, input, output, tool_call_id, status,
                                     input_tokens, output_tokens, duration_ms, cost)
        values (${res.body.id}, ${index + 1}, ${suite.a.tenant.id}, ${step.kind}, ${step.name}, '{}',
                ${sql.jsonb(step.output as never)}, ${step.tool_call_id ?? null}, 'ok', 500, 500, 10, 10)`);
    return res.body.id as string;
  }
  const finish = async (id: string) => {
    suite.worker = await startTestWorker(suite.t, withModel());
    const done = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/jobs/${id}`)
      .set(suite.a.editor.auth)
      .set('Prefer', 'wait=30')
      .expect(200);
    expect(done.body.status).toBe('succeeded');
    return done.body;
  };
  const model = 'openai/gpt-5.4-mini';

  it('goes on from its last step: the tool the recorded model call asked for, then the model once', async () => {
    const title = `Resumed ${unique()}`;
    const id = await interrupted([
      {
        kind: 'model',
        name: model,
        output: {
          content: null,
          tool_calls: [{ id: 'call_post', name: 'create_post', arguments: JSON.stringify({ title, body: 'Nine.' }) }],
        },
      },
    ]);
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { content: 'Done.', usage: { promptTokens: 900, completionTokens: 100 } },
    });
    const done = await finish(id);
    expect(chat()).toHaveLength(1);
    const run = await readRun(id);
    expect(run.body.steps.map((step: { kind: string; name: string }) => `${step.kind}:${step.name}`)).toEqual([
      `model:${model}`,
      'tool:create_post',
      `model:${model}`,
    ]);
    const posts = await suite.t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
      select id from posts where title = ${title}`);
    expect(posts).toHaveLength(1);
    // The recorded step's 10 credits and the new call's 1,000 tokens at 10 a thousand: each billed once.
    expect(done).toMatchObject({ credits_charged: 20, output: { answer: 'Done.', steps: 3 } });
  });

  it('settles with the answer it recorded when the worker died before settling, asking the model nothing', async () => {
    const id = await interrupted([
      { kind: 'model', name: model, output: { content: 'Nine o’clock.', tool_calls: [] } },
    ]);
    const done = await finish(id);
    expect(chat()).toHaveLength(0);
    expect(done).toMatchObject({
      credits_charged: 10,
      output: { answer: 'Nine o’clock.', runtime: 'model', provider: 'openai', model: 'gpt-5.4-mini', steps: 1 },
    });
  });

  it('never calls again a tool whose step was recorded: its write committed with it', async () => {
    const title = `Written once ${unique()}`;
    const call = { id: 'call_post', name: 'create_post', arguments: JSON.stringify({ title, body: 'Nine.' }) };
    const id = await interrupted([
      { kind: 'model', name: model, output: { content: null, tool_calls: [call] } },
      { kind: 'tool', name: 'create_post', output: { id: 'written-before' }, tool_call_id: 'call_post' },
    ]);
    fake.script('chat/completions', { kind: 'ok', reply: { content: 'Done.' } });
    await finish(id);
    // The write the recorded step stands for is not made again (it was made, with its record, before the worker died).
    expect(
      await suite.t.services.db.anyFirst(
        sql.type(z.object({ id: z.string() }))`select id from posts where title = ${title}`,
      ),
    ).toEqual([]);
    const sent = chat()[0]!.body as { messages: { role: string; tool_call_id?: string }[] };
    expect(sent.messages.filter((message) => message.role === 'tool')).toEqual([
      expect.objectContaining({ tool_call_id: 'call_post' }),
    ]);
  });
});
