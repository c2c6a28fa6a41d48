// POST /api/agents/knowledge-base/{doc_id}/compute-rag-index without an
// embedding provider: a rag_index job on the document's site that cleans,
// splits and indexes the text for full text, free of charge; the document's
// state through its stages; a stale snapshot renewed from its post; a run on
// an unchanged document changing nothing; who may start it.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { agentRow, newPostRow } from '../../helpers/agents.ts';
import { pathsOf } from '../../helpers/content.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { type Auth } from '../../helpers/identity.ts';
import { jobsSuite, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';

const suite = jobsSuite();
let agent: string;

beforeAll(async () => {
  agent = await agentRow(suite.t, [suite.a.tenant]);
});

/** Paragraphs of 30 tokens each (29 words of at most six characters, and a full stop), each naming itself. */
const paragraphs = (count: number) =>
  Array.from({ length: count }, (_, i) => `${Array.from({ length: 29 }, (_, w) => `p${i}w${w}`).join(' ')}.`).join(
    '\n\n',
  );

async function textDocument(content: string, auth: Auth = suite.a.admin.auth) {
  const res = await request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-text`)
    .set(auth)
    .send({ site_identifier: suite.a.site.slug, title: 'Handbook', content, format: 'plain' })
    .expect(201);
  return res.body.id as string;
}

/** compute-rag-index, waiting for the job unless no worker runs. */
const compute = (id: string, body?: Record<string, unknown>, auth: Auth = suite.a.admin.auth, wait = true) => {
  const call = request(suite.t.app).post(`/api/agents/knowledge-base/${id}/compute-rag-index`).set(auth);
  if (wait) call.set('Prefer', 'wait=20');
  return body ? call.send(body) : call;
};

const documentOf = async (id: string) =>
  (await request(suite.t.app).get(`/api/agents/${agent}/knowledge-base/${id}`).set(suite.a.admin.auth).expect(200))
    .body;

const chunkRow = z.object({
  ordinal: z.number(),
  content: z.string(),
  tokens: z.number(),
  start_offset: z.number(),
  end_offset: z.number(),
  lexemes: z.number(),
});
const chunksOf = (id: string) =>
  suite.t.services.db.any(sql.type(chunkRow)`
    select ordinal, content, tokens, start_offset, end_offset, length(tsv) as lexemes
    from knowledge_chunks where document_id = ${id} order by ordinal`);

it('splits and indexes the text for full text, free, moving the document through its stages', async () => {
  suite.worker = await startTestWorker(suite.t);
  const id = await textDocument(paragraphs(40)); // 1,200 tokens
  const res = await compute(id).expect(200);
  expect(res.headers.location).toBe(`/${suite.a.site.slug}/jobs/${res.body.id}`);
  expect(res.body).toMatchObject({
    kind: 'rag_index',
    status: 'succeeded',
    credits_reserved: 0,
    credits_charged: 0,
    input: { document_id: id, chunk_tokens: 500, overlap_tokens: 50 },
    output: { document_id: id, changed: true, chunks: 3, tokens: 1200, embedded_tokens: 0, embedding_model: null },
  });
  expect(await ledgerFor(suite.t, res.body.id)).toEqual([]);
  const document = await documentOf(id);
  expect(document.index).toMatchObject({
    state: 'completed',
    job_id: res.body.id,
    error: null,
    chunk_tokens: 500,
    overlap_tokens: 50,
    embedding_model: null,
    tokens: 1200,
    chunks: 3,
    error_at: null,
  });
  const stamps = ['waiting_at', 'parsing_at', 'splitting_at', 'indexing_at', 'completed_at'].map((stage) =>
    Date.parse(document.index[stage]),
  );
  expect(stamps.every((stamp) => Number.isFinite(stamp))).toBe(true);
  expect([...stamps].sort((x, y) => x - y)).toEqual(stamps);

  const chunks = await chunksOf(id);
  // 16 paragraphs (480 tokens) a chunk, the next repeating its last paragraph (30 ≤ 50 tokens).
  expect(chunks.map((chunk) => chunk.tokens)).toEqual([480, 480, 300]);
  expect(chunks[1]!.content.startsWith(chunks[0]!.content.split('\n\n').at(-1)!)).toBe(true);
  expect(chunks.every((chunk) => chunk.lexemes > 0 && chunk.end_offset > chunk.start_offset)).toBe(true);
  const embedded = await suite.t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from knowledge_chunks c left join knowledge_signatures s on s.chunk_id = c.id
    where c.document_id = ${id} and (c.embedding is not null or s.chunk_id is not null)`);
  expect(embedded).toBe(0);
});

it('takes the chunk size and overlap asked for, and checks them', async () => {
  suite.worker = await startTestWorker(suite.t);
  const id = await textDocument(paragraphs(10));
  const job = await compute(id, { chunk_tokens: 60, overlap_tokens: 0 }).expect(200);
  expect(job.body.output.chunks).toBe(5);
  expect((await chunksOf(id)).map((chunk) => chunk.tokens)).toEqual([60, 60, 60, 60, 60]);
  // A chunk size alone: the default overlap, cut to half of it.
  const small = await compute(id, { chunk_tokens: 80 }).expect(200);
  expect(small.body.input).toMatchObject({ chunk_tokens: 80, overlap_tokens: 40 });
  for (const [body, paths] of [
    [{ chunk_tokens: 100, overlap_tokens: 60 }, ['body.overlap_tokens']],
    [{ chunk_tokens: 10 }, ['body.chunk_tokens']],
    [{ chunk_tokens: 100.5 }, ['body.chunk_tokens']],
    [{ size: 100 }, ['body']],
  ] as const) {
    const res = await compute(id, body).expect(422);
    expect(pathsOf(res.body)).toEqual(paths);
  }
});

it('changes nothing when run again on an unchanged document', async () => {
  suite.worker = await startTestWorker(suite.t);
  const id = await textDocument(paragraphs(5));
  await compute(id).expect(200);
  const before = await documentOf(id);
  const chunksBefore = await suite.t.services.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from knowledge_chunks where document_id = ${id} order by ordinal`);
  const again = await compute(id).expect(200);
  expect(again.body).toMatchObject({ status: 'succeeded', credits_reserved: 0, credits_charged: 0 });
  expect(again.body.output).toMatchObject({ changed: false, chunks: 1 });
  const after = await documentOf(id);
  expect(after.index).toEqual({ ...before.index, job_id: again.body.id });
  expect(
    await suite.t.services.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from knowledge_chunks where document_id = ${id} order by ordinal`),
  ).toEqual(chunksBefore);
  // Other settings make other chunks: that is a change.
  const resized = await compute(id, { chunk_tokens: 60, overlap_tokens: 10 }).expect(200);
  expect(resized.body.output).toMatchObject({ changed: true });
});

it('renews a stale snapshot from its post when indexing again', async () => {
  suite.worker = await startTestWorker(suite.t);
  const { t, a } = suite;
  const post = await newPostRow(t, a.site, { title: 'Ferry times', body: 'The ferry leaves at noon.' });
  const added = await request(t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-post/${post}`)
    .set(a.admin.auth)
    .expect(201);
  const id = added.body.id as string;
  await compute(id).expect(200);
  expect((await chunksOf(id)).map((chunk) => chunk.content)).toEqual(['The ferry leaves at noon.']);

  await request(t.app)
    .patch(`/${a.site.slug}/posts/${post}`)
    .set(a.admin.auth)
    .send({ body: 'The ferry leaves at one.' })
    .expect(200);
  expect(await documentOf(id)).toMatchObject({ stale: true, post: { version: 1, current_version: 2 } });
  const renewed = await compute(id).expect(200);
  expect(renewed.body.output).toMatchObject({ changed: true });
  expect(await documentOf(id)).toMatchObject({
    stale: false,
    post: { version: 2, current_version: 2 },
    body: 'The ferry leaves at one.',
  });
  expect((await chunksOf(id)).map((chunk) => chunk.content)).toEqual(['The ferry leaves at one.']);

  // A change that leaves the text as it was (tags): the snapshot is current again, nothing reindexed.
  await request(t.app)
    .patch(`/${a.site.slug}/posts/${post}`)
    .set(a.admin.auth)
    .send({ tags: ['ferry'] })
    .expect(200);
  const retagged = await compute(id).expect(200);
  expect(retagged.body.output).toMatchObject({ changed: false });
  expect(await documentOf(id)).toMatchObject({ stale: false, post: { version: 3, current_version: 3 } });

  // The post gone: the snapshot is what is indexed.
  await request(t.app).delete(`/${a.site.slug}/posts/${post}`).set(a.admin.auth).expect(204);
  const orphan = await compute(id, { chunk_tokens: 100, overlap_tokens: 0 }).expect(200);
  expect(orphan.body.status).toBe('succeeded');
  expect((await chunksOf(id)).map((chunk) => chunk.content)).toEqual(['The ferry leaves at one.']);
});

it('fails with document_missing when the document goes before the job runs, saying so on the job', async () => {
  const id = await textDocument(paragraphs(2));
  const submitted = await compute(id, undefined, suite.a.admin.auth, false).expect(202);
  expect(await documentOf(id)).toMatchObject({ index: { state: 'waiting', job_id: submitted.body.id } });
  await request(suite.t.app).delete(`/api/agents/${agent}/knowledge-base/${id}`).set(suite.a.admin.auth).expect(204);
  suite.worker = await startTestWorker(suite.t);
  const job = await request(suite.t.app)
    .get(`/${suite.a.site.slug}/jobs/${submitted.body.id}`)
    .set(suite.a.admin.auth)
    .set('Prefer', 'wait=20')
    .expect(200);
  expect(job.body).toMatchObject({ status: 'failed', error: { code: 'document_missing' } });
});

it('replays a repeated Idempotency-Key, and refuses it with another body', async () => {
  const id = await textDocument(paragraphs(2));
  const once = (body?: Record<string, unknown>) =>
    compute(id, body, suite.a.admin.auth, false).set('Idempotency-Key', `kb-${id}`);
  const first = await once().expect(202);
  const again = await once().expect(202);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
  await once({ chunk_tokens: 100 }).expect(422);
});

it('is for global admins and the document’s tenant admins', async () => {
  const { t, a, b, admin } = suite;
  const id = await textDocument(paragraphs(1));
  await request(t.app).post(`/api/agents/knowledge-base/${id}/compute-rag-index`).expect(401);
  const bot = await serviceAccount(t, a.tenant, ['sites:read', 'content:read', 'content:write', 'jobs:write']);
  for (const auth of [a.editor.auth, bot.auth]) await compute(id, undefined, auth, false).expect(403);
  // B's admin does not see the agent; A's author is assigned to no site, so sees none of its documents.
  for (const auth of [b.admin.auth, a.author.auth]) await compute(id, undefined, auth, false).expect(404);
  await compute(crypto.randomUUID(), undefined, admin.auth, false).expect(404);
  await request(t.app).post(`/api/agents/knowledge-base/nope/compute-rag-index`).set(admin.auth).expect(422);
  const byAdmin = await compute(id, undefined, admin.auth, false).expect(202);
  expect(byAdmin.body.user_id).toBe(admin.user.id);
});
