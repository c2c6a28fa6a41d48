// What a document's index is made from: the stored document, its text now
// (a post's as it is now, so a stale snapshot is renewed; else the
// snapshot), and the hash of all that with the chunk settings and the
// embedding model, which says whether indexing again would change anything.
// A page's or a PDF's document has no text until its first run fetches or
// reads it (worker/knowledge/extract.ts): what indexing it may cost is
// estimated from the most it may hold.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { findPostSource, postSnapshot } from './add.ts';
import type { Chunk, ChunkOptions } from './chunking.ts';
import { documentKinds } from './documents.ts';
import { bodyFormats, countTokens, type BodyFormat } from './text.ts';

const storedRow = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  tenant_id: z.uuid(),
  site_id: z.uuid(),
  kind: z.enum(documentKinds),
  title: z.string(),
  locale: z.string(),
  body: z.string(),
  body_format: z.enum(bodyFormats),
  post_id: z.uuid().nullable(),
  post_version: z.number().nullable(),
  index_state: z.string(),
  index_job_id: z.uuid().nullable(),
  indexed_hash: z.string().nullable(),
  chunks: z.number(),
  chunk_tokens: z.number().nullable(),
  overlap_tokens: z.number().nullable(),
  embedding_model: z.string().nullable(),
  source_url: z.string().nullable(),
  file_name: z.string().nullable(),
  text_pending: z.boolean(),
  title_from_source: z.boolean(),
  locale_from_source: z.boolean(),
});
export type StoredDocument = z.infer<typeof storedRow>;

export const loadStored = (db: CommonQueryMethods, documentId: string) =>
  db.maybeOne(sql.type(storedRow)`
    select id, agent_id, tenant_id, site_id, kind, title, locale, body, body_format, post_id, post_version, index_state,
           index_job_id, indexed_hash, chunks, chunk_tokens, overlap_tokens, embedding_model, source_url, file_name,
           text_pending, title_from_source, locale_from_source
    from knowledge_documents where id = ${documentId}`);

export type Source = { title: string; body: string; format: BodyFormat; locale: string; postVersion: number | null };

/** What is to be indexed: a post's text as it is now (while the post exists), else the snapshot. */
export async function sourceOf(db: CommonQueryMethods, document: StoredDocument): Promise<Source> {
  const post = document.post_id ? await findPostSource(db, document.post_id) : null;
  if (!post)
    return {
      title: document.title,
      body: document.body,
      format: document.body_format,
      locale: document.locale,
      postVersion: document.post_version,
    };
  const snapshot = postSnapshot(post);
  return { ...snapshot, locale: post.locale, postVersion: snapshot.version };
}

/** Everything the chunks are made from: when it is the same, indexing again would change nothing. */
export const indexHash = (source: Source, options: ChunkOptions, model: string | null) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        source.title,
        source.body,
        source.format,
        source.locale,
        options.chunkTokens,
        options.overlapTokens,
        model,
      ]),
    )
    .digest('base64url');

export const isCurrent = (document: StoredDocument, hash: string) =>
  document.index_state === 'completed' && document.indexed_hash === hash;

/** What a chunk is embedded as: under its document's title, which says what the passage is about. */
export const embeddingInput = (title: string, chunk: Pick<Chunk, 'content'>) => `${title}\n\n${chunk.content}`;

/** Tokens the embedding of a text of `tokens` tokens will send, in chunks of this size: overlaps and titles included. */
function embeddingTokens(tokens: number, titleTokens: number, options: ChunkOptions): number {
  const stride = options.chunkTokens - options.overlapTokens;
  const chunks = Math.max(1, Math.ceil(Math.max(0, tokens - options.overlapTokens) / stride));
  return chunks * (options.overlapTokens + titleTokens) + tokens;
}

export const estimatedEmbeddingTokens = (source: Source, options: ChunkOptions): number =>
  embeddingTokens(countTokens(source.body), countTokens(source.title), options);

/**
 * The most a page's text is taken to hold for what its indexing reserves (a
 * long article, some 16,000 words); a longer one is charged no more than
 * that, as no job is charged more than it reserved.
 */
export const pageTokens = 20_000;
/** The most a PDF page is taken to hold (a full page of small type), times the pages it may read. */
export const pdfPageTokens = 1_000;
/** A title as the estimate counts it, before the source gives the real one. */
const titleTokens = 20;

/** What embedding a document whose text is not taken yet may cost, in tokens: a page's, or `maxPages` of a PDF's. */
export function pendingEmbeddingTokens(kind: 'url' | 'pdf', maxPages: number, options: ChunkOptions): number {
  return embeddingTokens(kind === 'url' ? pageTokens : maxPages * pdfPageTokens, titleTokens, options);
}
