// Knowledge bases with an embedding provider (EMBEDDING_PROVIDERS=openai and
// OPENAI_EMBEDDING_MODELS, against OpenAI's strict fake on 127.0.0.1,
// test/helpers/fakes/openai.ts, whose vectors come from a text's words):
// indexing embeds each chunk and
// is paid per 1,000 tokens embedded (402 when the caller cannot cover the
// estimate; nothing for an unchanged document); provider failures on the job
// and the document; hybrid search fusing the full-text and cosine rankings.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { agentRow } from '../../helpers/agents.ts';
import { serverError, startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { refusal } from '../../helpers/fakes/openai/errors.ts';
import { type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { indexCorpus } from '../../helpers/knowledge.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

let fake: FakeOpenAI;
const model = 'text-embedding-3-small';
// A stalled answer is given up after AI_TIMEOUT_MS: short, since the stall test waits it out, and still far
// above what the fake takes to answer a search's query.
const env: Record<string, string> = {
  EMBEDDING_PROVIDERS: 'openai',
  OPENAI_EMBEDDING_MODELS: model,
  AI_TIMEOUT_MS: '1500',
};
beforeAll(async () => {
  fake = await startFakeOpenAI();
  env.OPENAI_BASE_URL = fake.url;
  env.OPENAI_API_KEY = fake.apiKey;
  // What a real model knows: a guarantee is a warranty.
  fake.synonyms.set('guarantee', 'warranty');
});
const suite = jobsSuite(env);
let agent: string;

beforeAll(async () => {
  agent = await agentRow(suite.t, [suite.a.tenant]);
  await giveCredits(suite.t, suite.a.site, 1000, suite.a.admin.user.id);
});
afterAll(() => fake.close());

const worker = async () => (suite.worker = await startTestWorker(suite.t, env));

/** Paragraphs of about 30 tokens. */
const text = (paragraphs: number) =>
  Array.from(
    { length: paragraphs },
    (_, i) => `Paragraph ${i} tells how the harbour ferry runs in winter, when the sea is rough and cold.`,
  ).join('\n\n');

async function textDocument(content: string, auth: Auth = suite.a.admin.auth) {
  const res = await request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-text`)
    .set(auth)
    .send({ site_identifier: suite.a.site.slug, title: 'Ferry', content, format: 'plain' })
    .expect(201);
  return res.body.id as string;
}

const compute = (id: string, auth: Auth = suite.a.admin.auth) =>
  request(suite.t.app)
    .post(`/api/agents/knowledge-base/${id}/compute-rag-index`)
    .set(auth)
    .set('Prefer', 'wait=25')
    .send({ chunk_tokens: 200, overlap_tokens: 20 });

const embeddingCalls = () => fake.requests.filter((recorded) => recorded.path === '/v1/embeddings').length;

const embeddingRow = z.object({
  content: z.string(),
  model: z.string(),
  dimensions: z.number(),
  norm: z.number(),
  signature_bits: z.number(),
});
const embeddingsOf = (documentId: string) =>
  suite.t.services.db.any(sql.type(embeddingRow)`
    select c.content, s.model, array_length(c.embedding::real[], 1) as dimensions,
           sqrt((select sum(x * x) from unnest(c.embedding::real[]) x))::float8 as norm, length(s.signature) as signature_bits
    from knowledge_chunks c join knowledge_signatures s on s.chunk_id = c.id
    where c.document_id = ${documentId} order by c.ordinal`);

describe('indexing', () => {
  it('embeds every chunk under its title and charges the tokens embedded, per 1,000', async () => {
    await worker();
    const id = await textDocument(text(20));
    const calls = embeddingCalls();
    const job = await compute(id).expect(200);
    expect(job.body).toMatchObject({ status: 'succeeded', output: { embedding_model: model, chunks: 3 } });
    const embeddings = await embeddingsOf(id);
    expect(embeddings).toHaveLength(3);
    for (const row of embeddings) {
      // The model's own length: no `dimensions` is asked for.
      expect(row).toMatchObject({ model, dimensions: 1536, signature_bits: 256 });
      expect(row.norm).toBeCloseTo(1, 5);
    }
    // One call for the three chunks, each sent under the document's title; the fake counts four characters a token.
    expect(embeddingCalls()).toBe(calls + 1);
    const call = fake.requests.filter((recorded) => recorded.path === '/v1/embeddings').at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    const inputs = embeddings.map((row) => `Ferry\n\n${row.content}`);
    // The SDK asks for base64 (openai-node's embeddings.create) and decodes it.
    expect(call.body).toEqual({ model, input: inputs, encoding_format: 'base64' });
    const tokens = inputs.reduce((sum, input) => sum + Math.ceil(input.length / 4), 0);
    expect(job.body.output.embedded_tokens).toBe(tokens);
    // The call is recorded as every job's calls to providers are, for the admin and GET /admin/providers.
    const seen = await request(suite.t.app).get(`/admin/jobs/${job.body.id}`).set(suite.admin.auth).expect(200);
    expect(seen.body.provider_calls).toEqual([
      expect.objectContaining({ capability: 'embeddings', vendor: 'openai', model, outcome: 'succeeded' }),
    ]);
    expect(job.body.credits_charged).toBe(Math.ceil(tokens / 1000));
    expect(job.body.credits_reserved).toBeGreaterThanOrEqual(job.body.credits_charged);
    expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(
      job.body.credits_reserved > job.body.credits_charged
        ? ['reservation', 'debit', 'release']
        : ['reservation', 'debit'],
    );
    const document = await request(suite.t.app)
      .get(`/api/agents/${agent}/knowledge-base/${id}`)
      .set(suite.a.admin.auth)
      .expect(200);
    expect(document.body.index).toMatchObject({ state: 'completed', embedding_model: model, chunks: 3 });

    // Again, unchanged: nothing reserved, embedded or charged.
    const again = await compute(id).expect(200);
    expect(again.body).toMatchObject({ credits_reserved: 0, credits_charged: 0, output: { changed: false } });
    expect(await ledgerFor(suite.t, again.body.id)).toEqual([]);
    expect(embeddingCalls()).toBe(calls + 1);
    await expectLedgerHolds(suite.t);
  });

  it('answers 402 when the caller cannot cover the estimate, leaving the document as it was', async () => {
    const id = await textDocument(text(5));
    const res = await compute(id, suite.admin.auth).expect(402);
    expect(res.body.detail).toBeDefined();
    const document = await request(suite.t.app)
      .get(`/api/agents/${agent}/knowledge-base/${id}`)
      .set(suite.admin.auth)
      .expect(200);
    expect(document.body.index).toMatchObject({ state: 'waiting', job_id: null });
  });

  it('fails on a provider’s refusal, saying so on the job and the document, and charges nothing', async () => {
    await worker();
    const id = await textDocument(text(3));
    fake.script('embeddings', {
      kind: 'refuse',
      refusal: refusal(
        400,
        "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
      ),
    });
    const job = await compute(id).expect(200);
    expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'provider_rejected' } });
    const seen = await request(suite.t.app).get(`/admin/jobs/${job.body.id}`).set(suite.admin.auth).expect(200);
    expect(seen.body.provider_calls).toEqual([
      expect.objectContaining({
        vendor: 'openai',
        outcome: 'failed',
        error_code: 'provider_rejected',
        http_status: 400,
      }),
    ]);
    expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    const document = await request(suite.t.app)
      .get(`/api/agents/${agent}/knowledge-base/${id}`)
      .set(suite.a.admin.auth)
      .expect(200);
    expect(document.body.index).toMatchObject({ state: 'error', error: { code: 'provider_rejected' }, chunks: 0 });
    expect(Date.parse(document.body.index.error_at)).toBeGreaterThanOrEqual(
      Date.parse(document.body.index.indexing_at),
    );
  });

  it.each([
    ['is briefly down', { kind: 'refuse', refusal: serverError() } as const, null],
    ['breaks off its answer', { kind: 'truncated' } as const, 'provider_unavailable'],
    ['stalls halfway through its answer', { kind: 'stall' } as const, 'provider_timeout'],
  ])('retries a provider that %s, and completes', async (_case, failure, code) => {
    await worker();
    const id = await textDocument(text(3));
    fake.script('embeddings', failure);
    const submitted = await compute(id).expect((res) => expect([200, 202]).toContain(res.status));
    const job = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/jobs/${submitted.body.id}`)
      .set(suite.a.admin.auth)
      .set('Prefer', 'wait=25')
      .expect(200);
    expect(job.body).toMatchObject({ status: 'succeeded', attempts: 2 });
    if (code) {
      const seen = await request(suite.t.app).get(`/admin/jobs/${submitted.body.id}`).set(suite.admin.auth).expect(200);
      expect(seen.body.attempts).toMatchObject([{ outcome: 'retrying', error: { code } }, { outcome: 'succeeded' }]);
    }
    const document = await request(suite.t.app)
      .get(`/api/agents/${agent}/knowledge-base/${id}`)
      .set(suite.a.admin.auth)
      .expect(200);
    expect(document.body.index).toMatchObject({ state: 'completed', error: null, error_at: null });
  });
});

describe('hybrid search', () => {
  let shop: string;
  let warrantyTerms: string;
  beforeAll(async () => {
    shop = await agentRow(suite.t, [suite.a.tenant]);
    suite.worker = await startTestWorker(suite.t, env);
    warrantyTerms = (await indexCorpus(suite.t, shop, suite.a.site, suite.a.admin.auth)).byTitle['Warranty terms']!;
  });
  const search = (query: string, limit = 5) =>
    request(suite.t.app)
      .post(`/api/agents/${shop}/knowledge-base/search`)
      .set(suite.a.editor.auth)
      .send({ query, limit })
      .expect(200);

  it('ranks the chunk holding the answer first when both rankings find it', async () => {
    const res = await search('How long is the warranty on the kettle?');
    expect(res.body).toMatchObject({ mode: 'hybrid', embedding_model: model, notice: null });
    const [best] = res.body.items;
    expect(best.content).toContain('The kettle has a two-year warranty');
    expect(best).toMatchObject({ method: 'both', document: { id: warrantyTerms } });
    expect(best.text_rank).toBeGreaterThan(0);
    expect(best.similarity).toBeGreaterThan(0);
    // First in both: 1/61 + 1/61.
    expect(best.score).toBeCloseTo(2 / 61, 10);
    const scores = res.body.items.map((hit: { score: number }) => hit.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
  });

  it('finds by meaning what full text cannot: a word the corpus never uses', async () => {
    const res = await search('guarantee', 3);
    expect(res.body.mode).toBe('hybrid');
    expect(res.body.items).toHaveLength(3);
    for (const hit of res.body.items) {
      expect(hit).toMatchObject({ method: 'vector', text_rank: null, document: { title: 'Warranty terms' } });
      expect(hit.similarity).toBeGreaterThan(0);
    }
  });

  it('falls back to full text, saying why, when the query cannot be embedded', async () => {
    fake.script('embeddings', { kind: 'refuse', refusal: serverError() });
    const res = await search('How long is the warranty on the kettle?');
    expect(res.body).toMatchObject({ mode: 'full_text', embedding_model: null });
    expect(res.body.notice).toMatch(/provider_unavailable/);
    expect(res.body.items[0].content).toContain('The kettle has a two-year warranty');
    expect(res.body.items[0].method).toBe('full_text');
  });

  it('searches full text alone, without asking the provider, where nothing is embedded', async () => {
    const empty = await agentRow(suite.t, [suite.a.tenant]);
    // A document not indexed yet: there is a site to search, and nothing embedded in it.
    await request(suite.t.app)
      .post(`/api/agents/${empty}/knowledge-base/from-text`)
      .set(suite.a.admin.auth)
      .send({ site_identifier: suite.a.site.slug, title: 'Kettle', content: 'The kettle boils.' })
      .expect(201);
    const calls = embeddingCalls();
    const res = await request(suite.t.app)
      .post(`/api/agents/${empty}/knowledge-base/search`)
      .set(suite.a.editor.auth)
      .send({ query: 'kettle' })
      .expect(200);
    expect(res.body).toEqual({ mode: 'full_text', embedding_model: null, notice: null, items: [] });
    expect(embeddingCalls()).toBe(calls);
  });
});
