// POST /api/agents/{agent_id}/knowledge-base/search without an embedding
// provider: full text alone. On a small corpus the test writes, the chunk
// holding the answer ranks first; searches see only the documents of the
// sites the caller reaches; a removed document is no longer found.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { agentRow } from '../../helpers/agents.ts';
import { pathsOf } from '../../helpers/content.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { type Auth } from '../../helpers/identity.ts';
import { jobsSuite, startTestWorker } from '../../helpers/jobs.ts';
import { indexCorpus, type Indexed } from '../../helpers/knowledge.ts';

const suite = jobsSuite();
let agent: string;
let indexed: Indexed;

beforeAll(async () => {
  const { t, a, b } = suite;
  agent = await agentRow(t, [a.tenant, b.tenant]);
  suite.worker = await startTestWorker(t);
  indexed = await indexCorpus(t, agent, a.site, a.admin.auth);
  // B's document says the same as A's answer: only B sees it.
  await indexCorpus(t, agent, b.site, b.admin.auth, [
    { title: 'Kettle warranty (B)', content: 'The kettle has a two-year warranty in tenant B too.' },
  ]);
});

const search = (body: Record<string, unknown>, auth: Auth = suite.a.editor.auth, agentId = agent) =>
  request(suite.t.app).post(`/api/agents/${agentId}/knowledge-base/search`).set(auth).send(body);

it('ranks the chunk holding the answer first, full text alone, with its document', async () => {
  const res = await search({ query: 'How long is the warranty on the kettle?' }).expect(200);
  expect(res.body).toMatchObject({ mode: 'full_text', embedding_model: null, notice: null });
  const [best, ...rest] = res.body.items;
  expect(best.content).toContain('The kettle has a two-year warranty');
  expect(best).toMatchObject({
    method: 'full_text',
    similarity: null,
    document: { id: indexed.byTitle['Warranty terms'], title: 'Warranty terms', kind: 'text', post_id: null },
  });
  expect(best.text_rank).toBe(best.score);
  expect(res.body.items).toHaveLength(5);
  expect(rest.every((hit: { score: number }) => hit.score <= best.score)).toBe(true);
  // Of tenant B's identical passage, nothing.
  expect(res.body.items.map((hit: { content: string }) => hit.content).join(' ')).not.toMatch(/tenant B/);
});

it('finds other answers first too, in any form of the words (stemmed)', async () => {
  for (const [query, answer] of [
    ['descaling with vinegar', 'Descale the kettle every month'],
    ['when do orders ship?', 'Orders ship within two working days'],
    ['return unused items', 'return any item within thirty days'],
    ['keep the receipts', 'Keep your receipt'],
  ]) {
    const res = await search({ query, limit: 1 }).expect(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0].content).toContain(answer);
  }
  const nothing = await search({ query: 'helicopter' }).expect(200);
  expect(nothing.body.items).toEqual([]);
  const stopWordsOnly = await search({ query: 'what is the' }).expect(200);
  expect(stopWordsOnly.body.items).toEqual([]);
});

it('searches the documents of the sites the caller reaches: global admins all of them', async () => {
  const res = await search({ query: 'kettle warranty', limit: 10 }, suite.admin.auth).expect(200);
  const contents = res.body.items.map((hit: { content: string }) => hit.content).join(' ');
  expect(contents).toMatch(/tenant B/);
  const ofB = await search({ query: 'kettle warranty', limit: 10 }, suite.b.admin.auth).expect(200);
  expect(ofB.body.items.map((hit: { document: { title: string } }) => hit.document.title)).toEqual([
    'Kettle warranty (B)',
  ]);
  // A's author is assigned to no site: nothing to search.
  const none = await search({ query: 'kettle warranty' }, suite.a.author.auth).expect(200);
  expect(none.body.items).toEqual([]);
});

it('stops finding a removed document', async () => {
  const { t, a } = suite;
  suite.worker = await startTestWorker(t);
  const [extra] = (
    await indexCorpus(t, agent, a.site, a.admin.auth, [
      { title: 'Parking', content: 'Visitors park behind the warehouse, next to the loading bay.' },
    ])
  ).ids;
  expect((await search({ query: 'where can visitors park' }).expect(200)).body.items[0].document.id).toBe(extra);
  const counts = () =>
    t.services.db.one(sql.type(z.object({ visitor: z.number(), chunks: z.number(), counted: z.number() }))`
      select knowledge_lexeme_chunks(${agent}, 'visitor') as visitor,
             (select count(*) from knowledge_chunks where agent_id = ${agent})::int as chunks,
             (select sum(chunks) from knowledge_locale_counts where agent_id = ${agent})::int as counted`);
  const before = await counts();
  expect(before).toMatchObject({ visitor: 1, counted: before.chunks });
  await request(t.app).delete(`/api/agents/${agent}/knowledge-base/${extra}`).set(a.admin.auth).expect(204);
  expect((await search({ query: 'where can visitors park' }).expect(200)).body.items).toEqual([]);
  // The counts searches weigh words by follow the chunks, folded or not.
  expect(await counts()).toEqual({ visitor: 0, chunks: before.chunks - 1, counted: before.chunks - 1 });
  await t.services.db.query(sql.typeAlias('void')`select from knowledge_counts_fold(${agent})`);
  expect(await counts()).toEqual({ visitor: 0, chunks: before.chunks - 1, counted: before.chunks - 1 });
  const left = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from knowledge_count_changes where agent_id = ${agent}`);
  expect(left).toBe(0);
});

it('is for whoever sees the agent, with a query', async () => {
  const { t, a, b } = suite;
  await request(t.app).post(`/api/agents/${agent}/knowledge-base/search`).send({ query: 'kettle' }).expect(401);
  const noScope = await serviceAccount(t, a.tenant, ['sites:read']);
  await search({ query: 'kettle' }, noScope.auth).expect(403);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'content:read']);
  expect((await search({ query: 'kettle' }, reader.auth).expect(200)).body.items.length).toBeGreaterThan(0);
  const onlyA = await agentRow(t, [a.tenant]);
  await search({ query: 'kettle' }, b.admin.auth, onlyA).expect(404);
  await search({ query: 'kettle' }, a.admin.auth, crypto.randomUUID()).expect(404);
  for (const [body, paths] of [
    [{}, ['body.query']],
    [{ query: '   ' }, ['body.query']],
    [{ query: 'kettle', limit: 0 }, ['body.limit']],
    [{ query: 'kettle', limit: 51 }, ['body.limit']],
    [{ query: 'kettle', mode: 'vector' }, ['body']],
  ] as const) {
    const res = await search(body).expect(422);
    expect(pathsOf(res.body)).toEqual(paths);
  }
});
