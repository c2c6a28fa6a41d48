// POST /api/agents/{agent_id}/knowledge-base/search with filters: `site_id`,
// `locale` and `source_kind` narrow both halves of a hybrid search (the
// embeddings from OpenAI's fake on 127.0.0.1, whose vectors come from a
// text's words): a query every document answers finds only the documents the
// filter takes, by full text and by meaning alike. Bad values are 422s.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { agentRow, newPostRow } from '../../helpers/agents.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { newSite } from '../../helpers/factories.ts';
import type { Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, startTestWorker } from '../../helpers/jobs.ts';

let fake: FakeOpenAI;
const model = 'text-embedding-3-small';
const env: Record<string, string> = { EMBEDDING_PROVIDERS: 'openai', OPENAI_EMBEDDING_MODELS: model };
beforeAll(async () => {
  fake = await startFakeOpenAI();
  env.OPENAI_BASE_URL = fake.url;
  env.OPENAI_API_KEY = fake.apiKey;
  // What a real model knows: a guarantee is a warranty.
  fake.synonyms.set('guarantee', 'warranty');
});
afterAll(() => fake.close());
const suite = jobsSuite(env);

let agent: string;
let other: Site;
/** The documents by name: what site, language and kind each is, to check what a filter lets through. */
const ids: Record<string, string> = {};

const index = async (id: string) => {
  const job = await request(suite.t.app)
    .post(`/api/agents/knowledge-base/${id}/compute-rag-index`)
    .set(suite.a.admin.auth)
    .set('Prefer', 'wait=20')
    .send({ chunk_tokens: 50, overlap_tokens: 0 })
    .expect(200);
  expect(job.body.status).toBe('succeeded');
};

async function textDocument(site: Site, title: string, content: string, locale: string) {
  const added = await request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-text`)
    .set(suite.a.admin.auth)
    .send({ site_identifier: site.slug, title, content, format: 'plain', locale })
    .expect(201);
  await index(added.body.id);
  return added.body.id as string;
}

beforeAll(async () => {
  const { t, a } = suite;
  agent = await agentRow(t, [a.tenant]);
  other = await newSite(t, a.tenant);
  for (const site of [a.site, other]) await giveCredits(t, site, 1000, a.admin.user.id);
  suite.worker = await startTestWorker(t, env);
  ids.kettle = await textDocument(a.site, 'Kettle', 'The kettle has a two-year warranty on its heating element.', 'en');
  ids.toaster = await textDocument(other, 'Toaster', 'The toaster has a one-year warranty on parts and labour.', 'en');
  ids.oven = await textDocument(a.site, 'Backofen', 'Der Backofen hat drei Jahre Garantie auf die Heizung.', 'de');
  const post = await newPostRow(t, a.site, {
    title: 'Fridge',
    body: 'The fridge has a three-year warranty on its compressor.',
    locale: 'en-GB',
  });
  const added = await request(t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-post/${post}`)
    .set(a.admin.auth)
    .expect(201);
  await index(added.body.id);
  ids.fridge = added.body.id;
  await suite.worker.stop();
  suite.worker = undefined;
});

const search = (body: Record<string, unknown>, auth: Auth = suite.a.admin.auth) =>
  request(suite.t.app).post(`/api/agents/${agent}/knowledge-base/search`).set(auth).send(body);

/** The documents (by name) a search found, and the rankings that found them. */
async function found(body: Record<string, unknown>) {
  const res = await search({ limit: 20, ...body }).expect(200);
  expect(res.body.mode).toBe('hybrid');
  const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
  type Hit = { document: { id: string }; method: string };
  return {
    documents: [...new Set(res.body.items.map((hit: Hit) => names[hit.document.id]))].sort(),
    methods: new Set(res.body.items.map((hit: Hit) => hit.method)),
  };
}

it('finds every document unfiltered, by both rankings', async () => {
  const all = await found({ query: 'warranty' });
  expect(all.documents).toEqual(['fridge', 'kettle', 'oven', 'toaster']);
  expect(all.methods).toContain('both');
});

it('filters by site, in both rankings', async () => {
  expect(await found({ query: 'warranty', site_id: other.id })).toEqual({
    documents: ['toaster'],
    methods: new Set(['both']),
  });
  // By meaning alone (full text finds no "guarantee"): the vector half is filtered too.
  expect(await found({ query: 'guarantee', site_id: suite.a.site.id })).toEqual({
    documents: ['fridge', 'kettle', 'oven'],
    methods: new Set(['vector']),
  });
  // A site the caller does not reach finds nothing; nor does a site of another tenant.
  const editor = await search({ query: 'warranty', site_id: other.id }, suite.a.editor.auth).expect(200);
  expect(editor.body.items).toEqual([]);
  const elsewhere = await search({ query: 'warranty', site_id: suite.b.site.id }).expect(200);
  expect(elsewhere.body.items).toEqual([]);
});

it('filters by locale, a language taking its regional variants, in both rankings', async () => {
  expect((await found({ query: 'warranty', locale: 'en' })).documents).toEqual(['fridge', 'kettle', 'toaster']);
  expect(await found({ query: 'warranty', locale: 'en-GB' })).toEqual({
    documents: ['fridge'],
    methods: new Set(['both']),
  });
  // German stemming finds "Garantie"; by meaning, only the German document is ranked.
  expect((await found({ query: 'Garantien', locale: 'de' })).documents).toEqual(['oven']);
  expect(await found({ query: 'guarantee', locale: 'de' })).toEqual({
    documents: ['oven'],
    methods: new Set(['vector']),
  });
});

it('filters by kind of source, in both rankings', async () => {
  expect(await found({ query: 'warranty', source_kind: 'post' })).toEqual({
    documents: ['fridge'],
    methods: new Set(['both']),
  });
  expect((await found({ query: 'guarantee', source_kind: 'text' })).documents).toEqual(['kettle', 'oven', 'toaster']);
  const none = await search({ query: 'warranty', source_kind: 'url' }).expect(200);
  expect(none.body.items).toEqual([]);
  // Filters combine.
  expect(
    (await found({ query: 'warranty', source_kind: 'text', locale: 'en', site_id: suite.a.site.id })).documents,
  ).toEqual(['kettle']);
});

it('answers 422 for bad filter values', async () => {
  for (const body of [
    { query: 'warranty', site_id: 'not-a-uuid' },
    { query: 'warranty', locale: 'EN_gb' },
    { query: 'warranty', locale: 7 },
    { query: 'warranty', source_kind: 'video' },
  ]) {
    const res = await search(body).expect(422);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.errors[0].path).toBe(`body.${Object.keys(body)[1]}`);
  }
});
