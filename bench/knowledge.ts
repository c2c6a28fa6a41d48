// Knowledge-base figures for npm run bench:
// - indexing: 1,000 Markdown documents of 2,000 words, submitted as
//   compute-rag-index does and run by the platform's job runner (a worker of
//   4), without embeddings: parse, clean, split, full-text index, settle.
//   On a database of its own on the same server, like the jobs section.
// - search over 100,000 chunks of 380 words (about 500 tokens) of one agent,
//   in 10,000 documents of one site, written with SQL as indexing writes them
//   (through the same count triggers), each with a real[] embedding of 384
//   dimensions (the tests' fake model: a hashed bag of its words). Searched
//   through HTTP by the tenant’s admin (a member, not a global admin): full
//   text by the API as it runs, then hybrid by an API with
//   AI_EMBEDDING_MODEL set, the query embedded by a fake server on 127.0.0.1
//   (a real provider adds its own latency to every hybrid search).
// Words are drawn as in the search section: a 20,000-word vocabulary, Zipf
// frequencies, English stop words the commonest. Queries are 3–5 such words,
// as a question's are (stop words included; the english configuration drops
// them).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { normalise, signature } from '../core/knowledge/embeddings.ts';
import { submitIndex } from '../core/knowledge/submit-index.ts';
import { createLogger } from '../core/logger.ts';
import { findSiteAccess } from '../core/tenancy/site-access.ts';
import { createPool, sql, type DatabasePool } from '../db/pool.ts';
import { startWorker } from '../worker/runner.ts';
import { fakeEmbedding } from '../test/helpers/fake-embeddings.ts';
import { closedLoop, describeLatencies } from './closed-loop.ts';
import { withOwnDatabase } from './own-database.ts';
import { api } from './http.ts';
import type { ApiLauncher } from './request-path.ts';
import { vocabulary, zipfIndex } from './search.ts';

type Row = [string, string];

const chunkCount = 100_000;
const chunksPerDocument = 10;
const wordsPerChunk = 380;
const batch = 2_000;
const embeddingModel = 'bench-embed-384';

const idOnly = z.object({ id: z.uuid() });

/** `clients` loops, each posting the next query as soon as its last answer is read, for `seconds`. */
async function searchLoad(url: string, token: string, queries: string[], seconds: number, clients: number) {
  const modes = new Set<string>();
  const latencies = await closedLoop(
    async (n) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: queries[n % queries.length]!, limit: 10 }),
      });
      const body = (await res.json()) as { mode: string };
      if (!res.ok) throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
      modes.add(body.mode);
      return true;
    },
    seconds,
    clients,
  );
  return { latencies, modes: [...modes] };
}

const describe = describeLatencies;

/** A tenant with a site, administered by a new user (not a global admin) whose token the searches use. */
async function benchTenant(url: string, token: string, name: string) {
  const tenant = await api<{ id: string }>(`${url}/admin/tenants/`, token, 'POST', { name });
  const slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Date.now()}`;
  const site = await api<{ id: string; slug: string }>(`${url}/sites/`, token, 'POST', {
    tenant_id: tenant.id,
    name,
    slug,
  });
  const email = `knowledge-bench-${Date.now()}@example.com`;
  const password = 'knowledge bench password';
  const user = await api<{ id: string }>(`${url}/users/`, token, 'POST', { email, password, full_name: 'Bench' });
  await api(`${url}/admin/tenants/${tenant.id}/users/${user.id}`, token, 'POST', { role: 'admin' });
  const login = await api<{ access_token: string }>(`${url}/auth/login`, token, 'POST', {
    username: email,
    password,
  });
  return { tenantId: tenant.id, siteId: site.id, memberToken: login.access_token };
}

async function newAgent(db: DatabasePool, tenantId: string): Promise<string> {
  const id = await db.oneFirst(sql.type(idOnly)`insert into agents (name) values ('Bench agent') returning id`);
  await db.query(sql.typeAlias('void')`insert into agent_tenants (agent_id, tenant_id) values (${id}, ${tenantId})`);
  return id;
}

const zipfText = (words: readonly string[], count: number) =>
  Array.from({ length: count }, () => words[zipfIndex()]!).join(' ');

/**
 * 10,000 documents of 10 chunks each, as indexing writes them (the full-text
 * vector made by PostgreSQL, through the count triggers), each chunk with an
 * embedding of its text under its document's title and the embedding's
 * signature, in batches; returns the seconds it took.
 */
async function writeChunks(
  db: DatabasePool,
  words: readonly string[],
  ids: { agentId: string; tenantId: string; siteId: string },
) {
  const { agentId, tenantId, siteId } = ids;
  const began = performance.now();
  const documents = await db.anyFirst(sql.type(idOnly)`
    insert into knowledge_documents
      (agent_id, tenant_id, site_id, kind, title, locale, body, body_format, index_state, completed_at, chunks,
       embedding_model)
    select ${agentId}, ${tenantId}, ${siteId}, 'text', 'Document ' || g, 'en', '', 'plain', 'completed', now(),
           ${chunksPerDocument}, ${embeddingModel}
    from generate_series(1, ${chunkCount / chunksPerDocument}::int) g
    returning id`);
  for (let from = 0; from < chunkCount; from += batch) {
    const numbers = Array.from({ length: batch }, (_, i) => from + i);
    const chunkIds = numbers.map(() => randomUUID());
    const titles = numbers.map((n) => `Document ${Math.floor(n / chunksPerDocument) + 1}`);
    const contents = numbers.map(() => zipfText(words, wordsPerChunk));
    const vectors = contents.map((content, i) => normalise(fakeEmbedding(`${titles[i]}\n\n${content}`)));
    await db.query(sql.typeAlias('void')`
      insert into knowledge_chunks (id, document_id, agent_id, tenant_id, site_id, locale, source_kind, ordinal, content,
                                    tokens, start_offset, end_offset, tsv, embedding)
      select c.id, (${sql.array(documents, 'uuid')})[c.n / ${chunksPerDocument} + 1], ${agentId}, ${tenantId}, ${siteId},
             'en', 'text', c.n % ${chunksPerDocument}, c.content, 500, 0, length(c.content),
             setweight(to_tsvector('english', c.title), 'B') || to_tsvector('english', c.content), c.embedding::real[]
      from unnest(${sql.array(chunkIds, 'uuid')}, ${sql.array(numbers, 'int4')}, ${sql.array(titles, 'text')},
                  ${sql.array(contents, 'text')},
                  ${sql.array(
                    vectors.map((vector) => `{${vector.map((value) => value.toFixed(5)).join(',')}}`),
                    'text',
                  )}) as c (id, n, title, content, embedding)`);
    await db.query(sql.typeAlias('void')`
      insert into knowledge_signatures (chunk_id, agent_id, tenant_id, site_id, locale, source_kind, model, signature)
      select s.chunk_id, ${agentId}, ${tenantId}, ${siteId}, 'en', 'text', ${embeddingModel}, s.signature::bit(256)
      from unnest(${sql.array(chunkIds, 'uuid')}, ${sql.array(vectors.map(signature), 'text')}) as s (chunk_id, signature)`);
  }
  // As the next indexing run would.
  await db.query(sql.typeAlias('void')`select from knowledge_counts_fold(${agentId})`);
  for (const table of ['knowledge_chunks', 'knowledge_signatures', 'knowledge_terms', 'knowledge_count_changes'])
    await db.query(sql.typeAlias('void')`vacuum analyze ${sql.identifier([table])}`);
  return (performance.now() - began) / 1000;
}

/** The fake embedding model over HTTP, as an OpenAI-compatible /embeddings. */
async function embeddingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const { input } = JSON.parse(raw) as { input: string[] };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: fakeEmbedding(text) })) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Markdown of `words` words: a heading every five paragraphs, paragraphs of 100 words, sentences of 8–20. */
function markdownDocument(words: readonly string[], count: number, seed: number): string {
  const parts: string[] = [];
  let sentence: string[] = [];
  let paragraph: string[] = [];
  for (let i = 0; i < count; i++) {
    sentence.push(words[zipfIndex()]!);
    if (sentence.length >= 8 + ((seed + i) % 13)) {
      paragraph.push(`${sentence.join(' ')}.`);
      sentence = [];
    }
    if ((i + 1) % 100 === 0) {
      if ((i + 1) % 500 === 0) parts.push(`## Part ${(i + 1) / 500}`);
      parts.push([...paragraph, sentence.length ? `${sentence.join(' ')}.` : ''].join(' ').trim());
      paragraph = [];
      sentence = [];
    }
  }
  return parts.join('\n\n');
}

async function until(check: () => Promise<boolean>, ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** 1,000 documents of 2,000 words indexed without embeddings, on a database of its own. */
async function indexingFigures(
  adminUrl: string,
  words: readonly string[],
  count = 1000,
  concurrency = 4,
): Promise<Row[]> {
  return withOwnDatabase(adminUrl, 'bench_knowledge', concurrency, async (databaseUrl, config) => {
    const db = await createPool(databaseUrl, { maxPoolSize: 12 });
    try {
      const made = await db.one(sql.type(z.object({ tenant: z.uuid(), site: z.uuid(), user: z.uuid() }))`
        with t as (insert into tenants (name, slug) values ('Bench', 'bench') returning id),
             s as (insert into sites (tenant_id, name, slug) select id, 'Bench', 'bench' from t returning id),
             u as (insert into users (email, full_name, email_verified) values ('bench@example.com', 'Bench', true) returning id),
             m as (insert into memberships (tenant_id, user_id, role) select t.id, u.id, 'admin' from t, u returning 1)
        select t.id as tenant, s.id as site, u.id as user from t, s, u, (select count(*) from m) mm`);
      const agent = await newAgent(db, made.tenant);
      const bodies = Array.from({ length: count }, (_, i) => markdownDocument(words, 2000, i));
      const documents = await db.anyFirst(sql.type(idOnly)`
        insert into knowledge_documents (agent_id, tenant_id, site_id, kind, title, locale, body, body_format)
        select ${agent}, ${made.tenant}, ${made.site}, 'text', 'Handbook ' || n, 'en', body, 'markdown'
        from unnest(${sql.array(bodies, 'text')}) with ordinality as b (body, n)
        returning id`);
      const actor = { kind: 'user' as const, userId: made.user, sessionId: 'bench', isGlobalAdmin: false };
      const access = await findSiteAccess(db, actor, made.site);
      if (!access) throw new Error('the bench user does not reach its site');
      const worker = await startWorker({ databaseUrl, config, db, logger: createLogger('silent'), crontab: '' });
      const completed = () =>
        db.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from knowledge_documents where agent_id = ${agent} and index_state = 'completed'`);
      const began = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < documents.length) await submitIndex(db, config, access, documents[next++]!, undefined);
        }),
      );
      const submitted = (performance.now() - began) / 1000;
      await until(async () => (await completed()) >= count);
      const seconds = (performance.now() - began) / 1000;
      await worker.stop();
      const chunks = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from knowledge_chunks where agent_id = ${agent}`);
      // How long a job ran (claim to settled), against how long it waited to start.
      const timing = await db.one(sql.type(z.object({ run: z.number(), wait: z.number() }))`
        select percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at) * 1000) as run,
               percentile_cont(0.5) within group (order by extract(epoch from started_at - created_at) * 1000) as wait
        from jobs where kind = 'rag_index'`);
      return [
        [
          `compute-rag-index, ${count.toLocaleString('en')} Markdown documents of 2,000 words, no embeddings, worker of ${concurrency} (as many per tenant) (target ≥ 50 documents/s)`,
          `${(count / seconds).toFixed(1)} documents/s (${(chunks / seconds).toFixed(0)} chunks/s, ${chunks} chunks, ${seconds.toFixed(1)} s, all submitted after ${submitted.toFixed(1)} s; a job waits ${timing.wait.toFixed(0)} ms and runs ${timing.run.toFixed(0)} ms, p50)`,
        ],
      ];
    } finally {
      await db.end();
    }
  });
}

export async function knowledgeFigures(
  apiUrl: string,
  token: string,
  databaseUrl: string,
  adminUrl: string,
  launchApi: ApiLauncher,
): Promise<Row[]> {
  const db = await createPool(databaseUrl, { maxPoolSize: 2 });
  const rows: Row[] = [];
  try {
    const words = await db.anyFirst(sql.type(z.object({ w: z.string() }))`select w from (${vocabulary}) v order by i`);
    rows.push(...(await indexingFigures(adminUrl, words)));

    const { tenantId, siteId, memberToken } = await benchTenant(apiUrl, token, 'Knowledge bench');
    const agent = await newAgent(db, tenantId);
    const writeSeconds = await writeChunks(db, words, { agentId: agent, tenantId, siteId });
    rows.push([
      `knowledge search: ${chunkCount.toLocaleString('en')} chunks of ${wordsPerChunk} words with real[] embeddings of 384 dimensions, written with SQL through the count triggers`,
      `${writeSeconds.toFixed(1)} s`,
    ]);
    const queries = Array.from({ length: 500 }, (_, n) => zipfText(words, 3 + (n % 3)));
    const searchUrl = `${apiUrl}/api/agents/${agent}/knowledge-base/search`;
    await searchLoad(searchUrl, memberToken, queries, 2, 1);
    const alone = await searchLoad(searchUrl, memberToken, queries, 8, 1);
    const loaded = await searchLoad(searchUrl, memberToken, queries, 8, 4);
    rows.push(
      [
        `POST /api/agents/{agent}/knowledge-base/search, full text (${alone.modes.join(', ')}), 3–5 Zipf words, 1 client (target p95 ≤ 30 ms)`,
        describe(alone.latencies),
      ],
      ['The same searches, 4 clients', describe(loaded.latencies)],
    );

    const embedder = await embeddingServer();
    const hybridApi = await launchApi(databaseUrl, { AI_BASE_URL: embedder.url, AI_EMBEDDING_MODEL: embeddingModel });
    try {
      const hybridUrl = `${hybridApi.url}/api/agents/${agent}/knowledge-base/search`;
      await searchLoad(hybridUrl, memberToken, queries, 2, 1);
      const hybrid = await searchLoad(hybridUrl, memberToken, queries, 8, 1);
      const hybridLoaded = await searchLoad(hybridUrl, memberToken, queries, 8, 4);
      rows.push(
        [
          `The same searches, hybrid (${hybrid.modes.join(', ')}: full text + real[] cosine, fused), 1 client (target p95 ≤ 60 ms)`,
          describe(hybrid.latencies),
        ],
        ['The same hybrid searches, 4 clients', describe(hybridLoaded.latencies)],
      );
    } finally {
      await hybridApi.stop();
      await embedder.close();
    }
    return rows;
  } finally {
    await db.end();
  }
}
