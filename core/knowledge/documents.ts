// A knowledge-base document as callers see it: where it came from (a post,
// with a link to it and whether it changed since the snapshot, a text, a web
// page or a PDF),
// and its indexing state with a timestamp per stage. Listing, reading and
// removing documents; adding them is ./add.ts.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { requireVisibleAgent, requireWriter, visibleDocuments } from './access.ts';
import { bodyFormats } from './text.ts';

export const indexStates = ['waiting', 'parsing', 'splitting', 'indexing', 'completed', 'error'] as const;
export type IndexState = (typeof indexStates)[number];

/** When the document's index entered each stage (null: not yet, this run). */
const stageTimes = {
  waiting_at: timestamp,
  parsing_at: timestamp.nullable(),
  splitting_at: timestamp.nullable(),
  indexing_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  error_at: timestamp.nullable(),
};

/** Where a document's text comes from; also what a search filters by as `source_kind`. */
export const documentKinds = ['post', 'text', 'url', 'pdf'] as const;
export type DocumentKind = (typeof documentKinds)[number];

const indexSchema = z
  .object({
    state: z
      .enum(indexStates)
      .describe(
        'waiting (for compute-rag-index, or for its job to start) → parsing → splitting → indexing → completed, or error',
      ),
    job_id: z.uuid().nullable().describe('The last compute-rag-index job'),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe('Why the last run failed (state error): document_missing, provider_unavailable, ...'),
    chunk_tokens: z.number().int().nullable().describe('The chunk size the chunks were made with'),
    overlap_tokens: z.number().int().nullable(),
    embedding_model: z.string().nullable().describe('The model the chunks were embedded with; null: full text only'),
    tokens: z
      .number()
      .int()
      .nullable()
      .describe('Tokens of the indexed text (see the search endpoint for how counted)'),
    chunks: z.number().int(),
    ...stageTimes,
  })
  .meta({ id: 'KnowledgeIndexState' });

const postLinkSchema = z
  .object({
    id: z.uuid().nullable().describe('null once the post was deleted (the snapshot stays)'),
    url: z.string().nullable().describe('The post in the API, `/{site}/posts/{post_id}`; null once deleted'),
    version: z.number().int().describe('The version of the post the snapshot took'),
    current_version: z.number().int().nullable().describe('The post’s version now; null once deleted'),
    deleted: z.boolean(),
  })
  .meta({ id: 'KnowledgePostLink' });

const sourceSchema = z
  .object({
    url: z.string().nullable().describe('url: the page (once fetched, where it ended up after redirects)'),
    file_name: z.string().nullable().describe('pdf: the uploaded file’s name'),
    text_pending: z
      .boolean()
      .describe('The text is still to be fetched or read: the first run of the document’s rag_index job does it'),
  })
  .meta({ id: 'KnowledgeSource' });

export const knowledgeDocumentSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    site_id: z.uuid(),
    kind: z
      .enum(documentKinds)
      .describe(
        'post: a snapshot of a post; text: plain text or Markdown given; url: a web page’s article; pdf: an uploaded PDF’s text',
      ),
    title: z.string(),
    locale: z.string().describe('The language its chunks are indexed in'),
    format: z.enum(bodyFormats),
    characters: z.number().int().describe('Length of the snapshot'),
    post: postLinkSchema.nullable().describe('For a post’s snapshot: the post'),
    source: sourceSchema.nullable().describe('For a page’s or a PDF’s document: where its text comes from'),
    stale: z.boolean().describe('The post changed since the snapshot; computing the index again takes its new text'),
    index: indexSchema,
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KnowledgeDocument' });

export type KnowledgeDocument = z.infer<typeof knowledgeDocumentSchema>;

export const knowledgeDocumentWithBodySchema = knowledgeDocumentSchema
  .extend({ body: z.string().describe('The snapshot as stored, in `format`') })
  .meta({ id: 'KnowledgeDocumentWithBody' });

const documentRow = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  tenant_id: z.uuid(),
  site_id: z.uuid(),
  site_slug: z.string(),
  kind: z.enum(documentKinds),
  title: z.string(),
  locale: z.string(),
  body_format: z.enum(bodyFormats),
  characters: z.number(),
  post_id: z.uuid().nullable(),
  post_version: z.number().nullable(),
  current_version: z.number().nullable(),
  source_url: z.string().nullable(),
  file_name: z.string().nullable(),
  text_pending: z.boolean(),
  index_state: z.enum(indexStates),
  index_job_id: z.uuid().nullable(),
  index_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  chunk_tokens: z.number().nullable(),
  overlap_tokens: z.number().nullable(),
  embedding_model: z.string().nullable(),
  tokens: z.number().nullable(),
  chunks: z.number(),
  ...stageTimes,
  created_by: z.uuid().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
type DocumentRow = z.infer<typeof documentRow>;

/** The columns of documentRow, over `d` joined with its site `s` and its post `p`. */
const documentColumns = sql.fragment`
  d.id, d.agent_id, d.tenant_id, d.site_id, s.slug as site_slug, d.kind, d.title, d.locale, d.body_format,
  length(d.body) as characters, d.post_id, d.post_version, p.version as current_version, d.source_url, d.file_name,
  d.text_pending,
  d.index_state, d.index_job_id, d.index_error, d.chunk_tokens, d.overlap_tokens, d.embedding_model, d.tokens, d.chunks,
  d.waiting_at, d.parsing_at, d.splitting_at, d.indexing_at, d.completed_at, d.error_at,
  d.created_by, d.created_at, d.updated_at`;

const documentSource = sql.fragment`
  knowledge_documents d join sites s on s.id = d.site_id left join posts p on p.id = d.post_id`;

/** Whether the post changed since the snapshot, as SQL over `d` and `p`. */
const staleCondition = sql.fragment`(d.kind = 'post' and p.id is not null and p.version <> d.post_version)`;

function toDocument(row: DocumentRow): KnowledgeDocument {
  const post =
    row.kind === 'post'
      ? {
          id: row.post_id,
          url: row.post_id ? `/${row.site_slug}/posts/${row.post_id}` : null,
          version: row.post_version ?? 0,
          current_version: row.current_version,
          deleted: row.post_id === null,
        }
      : null;
  return {
    id: row.id,
    agent_id: row.agent_id,
    site_id: row.site_id,
    kind: row.kind,
    title: row.title,
    locale: row.locale,
    format: row.body_format,
    characters: row.characters,
    post,
    source:
      row.kind === 'url' || row.kind === 'pdf'
        ? { url: row.source_url, file_name: row.file_name, text_pending: row.text_pending }
        : null,
    stale: post !== null && post.current_version !== null && post.current_version !== post.version,
    index: {
      state: row.index_state,
      job_id: row.index_job_id,
      error: row.index_error,
      chunk_tokens: row.chunk_tokens,
      overlap_tokens: row.overlap_tokens,
      embedding_model: row.embedding_model,
      tokens: row.tokens,
      chunks: row.chunks,
      waiting_at: row.waiting_at,
      parsing_at: row.parsing_at,
      splitting_at: row.splitting_at,
      indexing_at: row.indexing_at,
      completed_at: row.completed_at,
      error_at: row.error_at,
    },
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const documentListQuery = pageQuery.extend({
  state: z.enum(indexStates).optional().describe('Only documents in this indexing state'),
  stale: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .describe('true: only snapshots whose post changed since; false: only the others'),
});
export type DocumentListQuery = z.output<typeof documentListQuery>;

/** The agent's documents the caller sees, oldest first. */
export async function listDocuments(db: CommonQueryMethods, actor: Actor, agentId: string, query: DocumentListQuery) {
  await requireVisibleAgent(db, actor, agentId);
  const conditions = [
    sql.fragment`d.agent_id = ${agentId}`,
    visibleDocuments(actor),
    ...(query.state ? [sql.fragment`d.index_state = ${query.state}`] : []),
    ...(query.stale === undefined ? [] : [query.stale ? staleCondition : sql.fragment`not ${staleCondition}`]),
  ];
  const where = sql.join(conditions, sql.fragment` and `);
  const rows = await db.any(sql.type(documentRow)`
    select ${documentColumns} from ${documentSource}
    where ${where} and ${after(query, 'd')}
    order by d.created_at, d.id limit ${query.limit + 1}`);
  const page = await toPage(rows, query, () =>
    countOf(db, sql.fragment`select 1 from ${documentSource} where ${where}`),
  );
  return { ...page, items: page.items.map(toDocument) };
}

/** The document as stored, with the tenant it belongs to; null when absent or not the caller's to see. */
export async function findDocument(
  db: CommonQueryMethods,
  actor: Actor,
  documentId: string,
  agentId?: string,
): Promise<(KnowledgeDocument & { tenant_id: string; body: string }) | null> {
  const row = await db.maybeOne(sql.type(documentRow.extend({ body: z.string() }))`
    select ${documentColumns}, d.body from ${documentSource}
    where d.id = ${documentId} and ${agentId ? sql.fragment`d.agent_id = ${agentId}` : sql.fragment`true`}
      and ${visibleDocuments(actor)}`);
  return row ? { ...toDocument(row), tenant_id: row.tenant_id, body: row.body } : null;
}

/** Reads one document (with its snapshot). */
export async function getDocument(db: CommonQueryMethods, actor: Actor, agentId: string, documentId: string) {
  await requireVisibleAgent(db, actor, agentId);
  const found = await findDocument(db, actor, documentId, agentId);
  if (!found) throw notFound('No such document in this knowledge base.');
  const { tenant_id: _tenant, ...document } = found;
  return document;
}

/** Removes the document; its chunks and embeddings go with it (cascade). */
export async function deleteDocument(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  documentId: string,
): Promise<void> {
  await requireVisibleAgent(db, actor, agentId);
  const found = await findDocument(db, actor, documentId, agentId);
  if (!found) throw notFound('No such document in this knowledge base.');
  await requireWriter(db, actor, found.site_id);
  await db.query(sql.typeAlias('void')`delete from knowledge_documents where id = ${documentId}`);
}

/** The document by id alone, for the agent's routes that do not name it (compute-rag-index) and for the job. */
export async function documentById(db: CommonQueryMethods, actor: Actor, documentId: string) {
  const agentId = await db.maybeOneFirst(
    sql.type(z.object({ agent_id: z.uuid() }))`select agent_id from knowledge_documents where id = ${documentId}`,
  );
  if (!agentId) throw notFound('No such document.');
  // An agent the caller does not see: the document is not theirs to know of either.
  await requireVisibleAgent(db, actor, agentId, 'No such document.');
  const found = await findDocument(db, actor, documentId, agentId);
  if (!found) throw notFound('No such document.');
  return found;
}
