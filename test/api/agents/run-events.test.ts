// An agent run's events through HTTP (GET .../runs/{run_id}/events), against
// OpenAI's strict fake on 127.0.0.1 streaming the model's answers: a follower
// hears the run start, the tool call start and finish, the text in pieces
// that make the answer, the citations and the end, in order; one who comes
// late hears what the record keeps, the same events with the same ids, and
// nothing at or before its Last-Event-ID. A cancel aborts the model call in
// flight, and stops a run at its next step boundary. Who may follow a run.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { z } from 'zod';
import { comesAfter, eventPlace, runEventSchema, type RunEvent } from '../../../core/agents/run-events.ts';
import { sql } from '../../../db/pool.ts';
import { newAgent } from '../../helpers/agents.ts';
import { startFakeOpenAI, textModelEnv, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { globalAdmin, unique, type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, readJob, startTestWorker } from '../../helpers/jobs.ts';
import { indexCorpus } from '../../helpers/knowledge.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';
import { pollUntil } from '../../helpers/poll.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
const withModel = () => textModelEnv(fake, 10);
const suite = jobsSuite(withModel);
let agentId: string;
let port: number;
let server: http.Server;

beforeAll(async () => {
  const { t, a } = suite;
  const admin = await globalAdmin(t);
  agentId = (
    await newAgent(
      t,
      admin,
      { instructions: 'You help the harbour’s editors.', tools: ['knowledge_search', 'create_post'] },
      [a.tenant.id],
    )
  ).id;
  suite.worker = await startTestWorker(t, withModel());
  await indexCorpus(t, agentId, a.site, a.admin.auth, [
    { title: 'Ferry', content: 'The ferry to the island leaves the harbour at nine every morning.' },
    { title: 'Market', content: 'The fish market opens on Saturdays at six and closes at noon.' },
  ]);
  await giveCredits(t, a.site, 5000, a.editor.user.id);
  // A server of the app, so that a stream can be read as it comes and left halfway.
  server = http.createServer(t.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await fake.close();
});
afterEach(() => fake.reset());

const worker = async () => (suite.worker ??= await startTestWorker(suite.t, withModel()));
const stopWorker = async () => {
  await suite.worker?.stop();
  suite.worker = undefined;
};

const runs = (path = '', site = suite.a.site.slug, agent = agentId) => `/${site}/agents/${agent}/runs${path}`;
const startRun = (body: Record<string, unknown>) =>
  request(suite.t.app).post(runs()).set(suite.a.editor.auth).send(body).expect(202);
const chat = () => fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions');

type Heard = { id: string; event: string; data: RunEvent };

/** Follows a stream as it comes: the events heard so far, a wait for some, its end; `close` leaves it. */
function follow(path: string, headers: Record<string, string>) {
  const heard: Heard[] = [];
  const waiters = new Set<() => void>();
  const req = http.get({ host: '127.0.0.1', port, path, headers });
  const response = once(req, 'response').then(([res]) => res as http.IncomingMessage);
  const ended = response.then(
    (res) =>
      new Promise<void>((resolve) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
            const fields = Object.fromEntries(
              buffer
                .slice(0, at)
                .split('\n')
                .filter((line) => line && !line.startsWith(':'))
                .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
            );
            buffer = buffer.slice(at + 2);
            if (fields.event)
              heard.push({ id: fields.id!, event: fields.event, data: JSON.parse(fields.data!) as RunEvent });
          }
          for (const wake of waiters) wake();
        });
        res.on('close', () => resolve());
      }),
  );
  const until = (done: (events: Heard[]) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!done(heard)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { heard, response, ended, until, close: () => req.destroy() };
}

const eventsOf = (runId: string, auth: Auth = suite.a.editor.auth, lastEventId?: string) =>
  follow(runs(`/${runId}/events`), { ...auth, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) });

/** The text the deltas make, as the document says to put them together. */
const textOf = (events: Heard[]) =>
  events.reduce((text, { data }) => (data.type === 'text.delta' ? text.slice(0, data.offset) + data.text : text), '');

/** The types in order, a run of text deltas as one. */
const shape = (events: Heard[]) =>
  events.map((heard) => heard.event).filter((type, i, all) => type !== 'text.delta' || all[i - 1] !== type);

function expectWellFormed(events: Heard[]) {
  for (const [index, heard] of events.entries()) {
    expect(heard.data.type).toBe(heard.event);
    expect(runEventSchema.safeParse(heard.data).success).toBe(true);
    if (index > 0) expect(comesAfter(eventPlace(heard.id)!, eventPlace(events[index - 1]!.id)!)).toBe(true);
  }
}

const answer =
  'The ferry leaves the harbour at nine every morning [1]. ' +
  'It sails past the lighthouse and the old fish market, and reaches the island an hour later. '.repeat(30);

describe('a run followed from before it starts', () => {
  let runId: string;
  let live: Heard[];

  it('streams run.started, the tool call, the text in pieces, the citations and run.finished, in order', async () => {
    await stopWorker();
    fake.script(
      'chat/completions',
      {
        kind: 'ok',
        reply: {
          toolCalls: [{ id: 'call_search', name: 'knowledge_search', arguments: '{"query":"ferry"}' }],
          usage: { promptTokens: 400, completionTokens: 20 },
        },
      },
      { kind: 'ok', reply: { content: answer, usage: { promptTokens: 700, completionTokens: 680 } } },
    );
    runId = (await startRun({ input: 'When does the ferry leave?' })).body.id;
    const stream = eventsOf(runId);
    const res = await stream.response;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    // The worker takes the run once the stream follows it, so every event is heard live.
    await pollUntil(
      async () => suite.t.services.runEvents.followed,
      (count) => count === 1,
    );
    await worker();
    await stream.ended;
    live = stream.heard;

    expectWellFormed(live);
    expect(shape(live)).toEqual([
      'run.started',
      'tool_call.started',
      'tool_call.finished',
      'text.delta',
      'citations',
      'run.finished',
    ]);
    const run = await request(suite.t.app)
      .get(runs(`/${runId}`))
      .set(suite.a.editor.auth)
      .expect(200);
    expect(live[0]!.data).toEqual({
      type: 'run.started',
      run_id: runId,
      agent_id: agentId,
      conversation_id: run.body.conversation_id,
      started_at: run.body.run.started_at,
    });
    expect(live[1]!.data).toEqual({
      type: 'tool_call.started',
      step: 2,
      tool_call_id: 'call_search',
      name: 'knowledge_search',
      arguments: '{"query":"ferry"}',
    });
    expect(live[2]!.data).toMatchObject({
      type: 'tool_call.finished',
      step: 2,
      tool_call_id: 'call_search',
      status: 'ok',
      duration_ms: run.body.steps[1].duration_ms,
    });
    // The text came in several pieces, none too large for a notification, and they make the answer.
    const deltas = live.filter((heard) => heard.event === 'text.delta');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.every((heard) => heard.data.type === 'text.delta' && heard.data.text.length <= 1000)).toBe(true);
    expect(textOf(live)).toBe(answer);
    expect(live.at(-2)!.data).toMatchObject({
      type: 'citations',
      citations: [{ marker: 1, document_title: 'Ferry' }],
    });
    expect(live.at(-1)!.data).toEqual({
      type: 'run.finished',
      status: 'succeeded',
      answer,
      stopped: null,
      stopped_because: null,
      credits_charged: run.body.run.credits_charged,
      error: null,
    });
    // 1,800 tokens at 10 credits a thousand.
    expect(run.body.run.credits_charged).toBe(18);
    expect(
      await pollUntil(
        async () => suite.t.services.runEvents.followed,
        (count) => count === 0,
      ),
    ).toBe(0);
  });

  it('tells a subscriber who comes after the end what the record keeps: the same events, with the same ids', async () => {
    const late = eventsOf(runId);
    await late.ended;
    expect(late.heard).toEqual(live.filter((heard) => heard.event !== 'text.delta'));
  });

  it('sends nothing at or before the Last-Event-ID it is given', async () => {
    const after = async (id: string) => {
      const resumed = eventsOf(runId, suite.a.editor.auth, id);
      await resumed.ended;
      return resumed.heard.map((heard) => heard.event);
    };
    expect(await after(live.find((heard) => heard.event === 'tool_call.finished')!.id)).toEqual([
      'citations',
      'run.finished',
    ]);
    expect(await after(live.findLast((heard) => heard.event === 'text.delta')!.id)).toEqual([
      'citations',
      'run.finished',
    ]);
    expect(await after(live.at(-1)!.id)).toEqual([]);
    // An id that is not one of the run's is no place in it: everything is sent.
    expect(await after('not-an-id')).toHaveLength(5);
  });
});

it('a client that comes back mid-run hears the rest, live; an event too large for a notification is read from the record', async () => {
  await stopWorker();
  const title = `Ferry times ${unique()}`;
  // Arguments of more than 8,000 bytes: more than a PostgreSQL notification carries.
  const args = JSON.stringify({ title, body: 'The ferry leaves at nine. '.repeat(400) });
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  fake.script(
    'chat/completions',
    { kind: 'ok', reply: { toolCalls: [{ id: 'call_post', name: 'create_post', arguments: args }] } },
    // A model that writes slowly: its text goes out in pieces as it comes, not at its end.
    { kind: 'ok', until: held, chunkDelayMs: 60, reply: { content: 'I wrote the draft.' } },
  );
  const runId = (await startRun({ input: 'Write a draft about the ferry.' })).body.id as string;
  const first = eventsOf(runId);
  await first.response;
  await pollUntil(
    async () => suite.t.services.runEvents.followed,
    (count) => count === 1,
  );
  await worker();
  await first.until((events) => events.some((heard) => heard.event === 'tool_call.finished'));
  await pollUntil(
    async () => chat().length,
    (count) => count === 2,
    { tries: 300, everyMs: 50 },
  );
  first.close();
  // The stream that was left stops following the run.
  await pollUntil(
    async () => suite.t.services.runEvents.followed,
    (count) => count === 0,
  );
  expect(shape(first.heard)).toEqual(['run.started', 'tool_call.started', 'tool_call.finished']);
  expect(first.heard[1]!.data).toMatchObject({ name: 'create_post', arguments: args });
  expect(first.heard[2]!.data).toMatchObject({ name: 'create_post', arguments: args, status: 'ok' });

  const again = eventsOf(runId, suite.a.editor.auth, first.heard.at(-1)!.id);
  await again.response;
  await pollUntil(
    async () => suite.t.services.runEvents.followed,
    (count) => count === 1,
  );
  release();
  await again.ended;
  expectWellFormed(again.heard);
  expect(shape(again.heard)).toEqual(['text.delta', 'citations', 'run.finished']);
  expect(textOf(again.heard)).toBe('I wrote the draft.');
  expect(again.heard.filter((heard) => heard.event === 'text.delta').length).toBeGreaterThan(1);
  expect(again.heard.at(-1)!.data).toMatchObject({ status: 'succeeded', answer: 'I wrote the draft.' });
});

describe('cancel', () => {
  it('aborts the model call in flight; the stream ends with the run canceled', async () => {
    await worker();
    // The model starts its answer and writes no more: only the cancel ends the call.
    fake.script('chat/completions', { kind: 'stall' });
    const runId = (await startRun({ input: 'When does the ferry leave?' })).body.id as string;
    await pollUntil(
      async () => chat().length,
      (count) => count === 1,
      { tries: 300, everyMs: 50 },
    );
    const stream = eventsOf(runId);
    await stream.until((events) => events.some((heard) => heard.event === 'run.started'));
    const canceled = await request(suite.t.app)
      .post(runs(`/${runId}/cancel`))
      .set(suite.a.editor.auth)
      .expect(200);
    // The job as the job endpoints answer it, with its (here no) media's file URLs.
    expect(canceled.body).toMatchObject({ status: 'canceled', media_url: null, media_urls: [] });
    await stream.ended;
    expect(shape(stream.heard)).toEqual(['run.started', 'run.finished']);
    expect(stream.heard.at(-1)!.data).toMatchObject({ type: 'run.finished', status: 'canceled', answer: null });

    // The call was aborted, not left to run out: it is recorded canceled, and the worker let the run go.
    const outcomes = await pollUntil(
      () =>
        suite.t.services.db.anyFirst(sql.type(z.object({ outcome: z.string() }))`
          select outcome from provider_calls where job_id = ${runId}`),
      (found) => found.length > 0,
      { tries: 300, everyMs: 50 },
    );
    expect(outcomes).toEqual(['canceled']);
    const attempts = await pollUntil(
      () =>
        suite.t.services.db.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
          select outcome from job_attempts where job_id = ${runId}`),
      (found) => found.every((outcome) => outcome !== null),
      { tries: 300, everyMs: 50 },
    );
    expect(attempts).toEqual(['canceled']);
    expect(chat()).toHaveLength(1);
  });

  it('charges the steps it recorded before the cancel, and releases the rest', async () => {
    await worker();
    // 1,000 tokens read and 200 written at 10 credits per 1,000: the first call costs 12; the second never ends.
    fake.script(
      'chat/completions',
      {
        kind: 'ok',
        reply: {
          toolCalls: [{ id: 'call_search', name: 'knowledge_search', arguments: '{"query":"ferry"}' }],
          usage: { promptTokens: 1000, completionTokens: 200 },
        },
      },
      { kind: 'stall' },
    );
    const runId = (await startRun({ input: 'When does the ferry leave?' })).body.id as string;
    await pollUntil(
      async () => chat().length,
      (count) => count === 2,
      { tries: 300, everyMs: 50 },
    );
    const canceled = await request(suite.t.app)
      .post(runs(`/${runId}/cancel`))
      .set(suite.a.editor.auth)
      .expect(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', credits_charged: 12 });
    const reserved = canceled.body.credits_reserved as number;
    const entries = await suite.t.services.db.any(sql.type(
      z.object({ kind: z.string(), amount: z.number(), reserved_change: z.number() }),
    )`
      select kind, amount::int, reserved_change::int from credit_entries where job_id = ${runId} order by created_at, kind`);
    expect(entries).toEqual([
      { kind: 'reservation', amount: 0, reserved_change: reserved },
      { kind: 'debit', amount: -12, reserved_change: -12 },
      { kind: 'release', amount: 0, reserved_change: -(reserved - 12) },
    ]);
    await expectLedgerHolds(suite.t);
  });

  it('stops at the next step boundary: the tool call in flight ends, and no other step begins', async () => {
    await worker();
    const { a } = suite;
    const [first, second] = [`held-${unique()}`, `never-${unique()}`];
    fake.script('chat/completions', {
      kind: 'ok',
      reply: {
        toolCalls: [
          { id: 'call_first', name: 'create_post', arguments: JSON.stringify({ title: 'First', slug: first }) },
          { id: 'call_second', name: 'create_post', arguments: JSON.stringify({ title: 'Second', slug: second }) },
        ],
      },
    });
    // A post with the first slug, written and not committed: the first tool call waits for it to roll back.
    let rollBack = () => {};
    const rolledBack = new Promise<void>((resolve) => (rollBack = resolve));
    const holding = suite.t.services.db
      .transaction(async (tx) => {
        await tx.query(sql.typeAlias('void')`
          insert into posts (tenant_id, site_id, title, slug, excerpt, body, body_format, locale)
          values (${a.site.tenant_id}, ${a.site.id}, 'Held', ${first}, '', '', 'markdown', ${a.site.default_locale})`);
        await rolledBack;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    const runId = (await startRun({ input: 'Write two drafts.' })).body.id as string;
    // The loop names the step before it begins it: past this, the first tool call is under way.
    await pollUntil(
      () => readJob(suite.t, runId),
      (job) => job.stage === 'step 2: create_post',
      { tries: 300, everyMs: 50 },
    );
    await request(suite.t.app)
      .post(runs(`/${runId}/cancel`))
      .set(a.editor.auth)
      .expect(200);
    rollBack();
    await holding;
    const steps = await pollUntil(
      async () =>
        (
          await request(suite.t.app)
            .get(runs(`/${runId}`))
            .set(a.editor.auth)
            .expect(200)
        ).body.steps as {
          kind: string;
          name: string;
        }[],
      (found) => found.length === 2,
      { tries: 300, everyMs: 50 },
    );
    await pollUntil(
      () =>
        suite.t.services.db.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
          select outcome from job_attempts where job_id = ${runId}`),
      (found) => found.length > 0 && found.every((outcome) => outcome !== null),
      { tries: 300, everyMs: 50 },
    );
    expect(steps.map((step) => `${step.kind}:${step.name}`)).toEqual(['model:openai/gpt-5.4-mini', 'tool:create_post']);
    const slugs = await suite.t.services.db.anyFirst(sql.type(z.object({ slug: z.string() }))`
      select slug from posts where slug in (${first}, ${second})`);
    expect(slugs).toEqual([first]);
    expect(chat()).toHaveLength(1);
    expect((await readJob(suite.t, runId)).status).toBe('canceled');
  });
});

it('answers 401 without a token, 403 without jobs:read, 404 for another tenant’s run or another agent’s', async () => {
  await worker();
  const { t, a, b } = suite;
  fake.script('chat/completions', { kind: 'ok', reply: { content: 'Nine.' } });
  const runId = (await startRun({ input: 'When does the ferry leave?' })).body.id as string;
  await request(t.app)
    .get(runs(`/${runId}/events`))
    .expect(401);
  const noJobs = await serviceAccount(t, a.tenant, ['sites:read']);
  await request(t.app)
    .get(runs(`/${runId}/events`))
    .set(noJobs.auth)
    .expect(403);
  await request(t.app)
    .get(runs(`/${runId}/events`))
    .set(b.admin.auth)
    .expect(404);
  await request(t.app)
    .get(runs(`/${runId}/events`, b.site.slug))
    .set(b.admin.auth)
    .expect(404);
  const other = await newAgent(t, await globalAdmin(t), {}, [a.tenant.id]);
  await request(t.app)
    .get(runs(`/${runId}/events`, a.site.slug, other.id))
    .set(a.editor.auth)
    .expect(404);
  await request(t.app)
    .get(runs(`/${a.site.id}/events`))
    .set(a.editor.auth)
    .expect(404);
});
