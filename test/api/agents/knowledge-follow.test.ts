// A knowledge document taken from a post follows the post: a change of the
// post's text queues, in its own transaction, a refresh that indexes the
// document again, paid from the tenant's pool; only the chunks whose text
// changed are sent to the embedding provider (OpenAI's fake on 127.0.0.1,
// test/helpers/fakes/openai.ts), the others keep their stored vectors. A
// change that leaves the text alone (tags) queues nothing; a pool that cannot
// pay leaves the document stale, saying why.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { agentRow, newPostRow } from '../../helpers/agents.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, readJob, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

let fake: FakeOpenAI;
const model = 'text-embedding-3-small';
const env: Record<string, string> = { EMBEDDING_PROVIDERS: 'openai', OPENAI_EMBEDDING_MODELS: model };
beforeAll(async () => {
  fake = await startFakeOpenAI();
  env.OPENAI_BASE_URL = fake.url;
  env.OPENAI_API_KEY = fake.apiKey;
});
afterAll(() => fake.close());
const suite = jobsSuite(env);

/** A paragraph of about 40 tokens about `topic`: one chunk of 50 tokens each, with no overlap. */
const paragraph = (topic: string) =>
  `The ${topic} is open every day of the week from nine in the morning until six in the evening, ` +
  `and the ${topic} closes early on public holidays, when the staff of the ${topic} take their rest.`;
const body = (topics: string[]) => topics.map(paragraph).join('\n\n');

const embeddingCalls = () => fake.requests.filter((recorded) => recorded.path === '/v1/embeddings');

const documentOf = async (agent: string, id: string, staffed: Staffed) =>
  (await request(suite.t.app).get(`/api/agents/${agent}/knowledge-base/${id}`).set(staffed.admin.auth).expect(200))
    .body;

/** A post of the tenant's site in the agent's knowledge base, indexed in one chunk a paragraph. */
async function followedPost(staffed: Staffed, topics: string[]) {
  const agent = await agentRow(suite.t, [staffed.tenant]);
  const post = await newPostRow(suite.t, staffed.site, { title: 'Opening hours', body: body(topics) });
  const added = await request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-post/${post}`)
    .set(staffed.admin.auth)
    .expect(201);
  const job = await request(suite.t.app)
    .post(`/api/agents/knowledge-base/${added.body.id}/compute-rag-index`)
    .set(staffed.admin.auth)
    .set('Prefer', 'wait=20')
    .send({ chunk_tokens: 50, overlap_tokens: 0 })
    .expect(200);
  expect(job.body).toMatchObject({ status: 'succeeded', output: { chunks: topics.length } });
  return { agent, post, document: added.body.id as string, firstJob: job.body.id as string };
}

const editPost = (staffed: Staffed, post: string, changes: Record<string, unknown>) =>
  request(suite.t.app).patch(`/${staffed.site.slug}/posts/${post}`).set(staffed.editor.auth).send(changes).expect(200);

/** The document's index job once it is another than `before`, finished. */
async function nextIndexJob(document: string, before: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const job = await suite.t.services.db.maybeOneFirst(sql.type(z.object({ index_job_id: z.uuid().nullable() }))`
      select index_job_id from knowledge_documents where id = ${document}`);
    if (job && job !== before) return waitForJob(suite.t, job, ['succeeded', 'failed', 'canceled']);
    if (Date.now() > deadline) throw new Error('no new index job');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const refreshQueued = (post: string) =>
  suite.t.services.db.exists(sql.type(z.object({}))`
    select 1 from graphile_worker.jobs where key = ${`knowledge-refresh:${post}`}`);

const accountOfJob = (job: string) =>
  suite.t.services.db.one(sql.type(z.object({ user_id: z.uuid().nullable(), site_id: z.uuid().nullable() }))`
    select a.user_id, a.site_id from jobs j join credit_accounts a on a.id = j.account_id where j.id = ${job}`);

it('indexes the document again when its post’s text changes, embedding only the changed chunk, paid from the pool', async () => {
  const { a } = suite;
  await giveCredits(suite.t, a.site, 100, a.admin.user.id);
  await giveCredits(suite.t, a.site, 100); // the tenant's pool
  suite.worker = await startTestWorker(suite.t, env);
  const { agent, post, document, firstJob } = await followedPost(a, ['library', 'museum', 'harbour office']);
  const calls = embeddingCalls().length;

  const changed = paragraph('town hall');
  await editPost(a, post, { body: body(['library', 'town hall', 'harbour office']) });
  const job = await nextIndexJob(document, firstJob);

  expect(job).toMatchObject({ status: 'succeeded', kind: 'rag_index', user_id: null });
  expect(job.output).toMatchObject({ changed: true, chunks: 3, reused_embeddings: 2, embedding_model: model });
  // One call, with the one chunk whose text changed, under the post's title.
  expect(embeddingCalls().slice(calls)).toHaveLength(1);
  expect(embeddingCalls().at(-1)!.body).toMatchObject({ model, input: [`Opening hours\n\n${changed}`] });
  expect(job.output!.embedded_tokens).toBe(Math.ceil(`Opening hours\n\n${changed}`.length / 4));
  // Charged to the tenant's pool (no site, no user), for the one chunk's tokens.
  expect(await accountOfJob(job.id)).toEqual({ user_id: null, site_id: null });
  expect(job.credits_charged).toBe(1);

  const renewed = await documentOf(agent, document, a);
  expect(renewed).toMatchObject({ stale: false, index: { state: 'completed', job_id: job.id, chunks: 3 } });
  expect(renewed.post.version).toBe(renewed.post.current_version);
  const found = await request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/search`)
    .set(a.admin.auth)
    .send({ query: 'town hall', limit: 1 })
    .expect(200);
  expect(found.body.items[0].content).toBe(changed);
  await expectLedgerHolds(suite.t);
});

it('queues nothing when the post changes but not its text', async () => {
  const { a } = suite;
  await giveCredits(suite.t, a.site, 100, a.admin.user.id);
  suite.worker = await startTestWorker(suite.t, env);
  const { agent, post, document, firstJob } = await followedPost(a, ['bakery']);
  await suite.worker.stop();
  suite.worker = undefined;
  await editPost(a, post, { tags: ['hours'] });
  expect(await refreshQueued(post)).toBe(false);
  await editPost(a, post, { title: 'Bakery hours' });
  expect(await refreshQueued(post)).toBe(true);
  // Still the first job until a worker takes the refresh (none will: it is removed, for the next test).
  expect((await documentOf(agent, document, a)).index.job_id).toBe(firstJob);
  await suite.t.services.db.query(sql.typeAlias('void')`
    select from graphile_worker.remove_job(${`knowledge-refresh:${post}`})`);
});

it('leaves the document stale, saying why, when the tenant’s pool cannot pay', async () => {
  const { b } = suite;
  await giveCredits(suite.t, b.site, 100, b.admin.user.id);
  suite.worker = await startTestWorker(suite.t, env);
  const { agent, post, document, firstJob } = await followedPost(b, ['ferry', 'bridge']);
  const calls = embeddingCalls().length;
  await editPost(b, post, { body: body(['ferry', 'tunnel']) });
  const deadline = Date.now() + 20_000;
  let seen = await documentOf(agent, document, b);
  while (seen.index.state !== 'error' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await documentOf(agent, document, b);
  }
  expect(seen).toMatchObject({
    stale: true,
    index: { state: 'error', job_id: firstJob, chunks: 2, error: { code: 'insufficient_credits' } },
  });
  expect(embeddingCalls()).toHaveLength(calls);
  expect((await readJob(suite.t, firstJob)).status).toBe('succeeded');
});
