// The work of a rag_index job: a document's text taken (a post's as it is
// now, so a stale snapshot is renewed), parsed and cleaned, split into
// chunks, indexed for full text and, when a provider is configured, embedded.
// The document's state moves waiting → parsing → splitting → indexing →
// completed (or error), each stage stamped. The chunks replace the old ones
// in the job's settling transaction, with the debit: until then searches
// keep finding the previous chunks, and a canceled or taken-over run leaves
// them alone. A document whose text, settings and embedding model are those
// it was indexed with is left as it is, and nothing is charged; a changed
// one has only its changed chunks embedded (./chunk-embeddings.ts). A page's
// or a PDF's document has its text taken first (./source-text.ts).
import { z } from 'zod';
import { unhurried } from '../../db/unhurried.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import type { Success } from '../jobs/settle.ts';
import { embedChunks } from './chunk-embeddings.ts';
import { replaceChunks } from './chunk-writes.ts';
import { splitIntoChunks } from './chunking.ts';
import { embeddingModel, KnowledgeError } from './embeddings.ts';
import type { IndexState } from './documents.ts';
import { indexHash, isCurrent, loadStored, sourceOf, type Source, type StoredDocument } from './source.ts';
import { cleanText, countTokens, paragraphsOf } from './text.ts';

export const ragIndexKind = 'rag_index';

export const ragIndexInput = z.object({
  document_id: z.uuid(),
  chunk_tokens: z.number().int().positive(),
  overlap_tokens: z.number().int().nonnegative(),
  // A PDF document's first run: the upload to read (kept in storage until read) and the most pages to read.
  file_key: z.string().min(1).optional(),
  max_pages: z.number().int().positive().optional(),
});
export type RagIndexInput = z.infer<typeof ragIndexInput>;

/** How often indexing runs fold an agent's word-count changes at most. */
const foldEvery = '5 seconds';

export type IndexContext = {
  db: CommonQueryMethods;
  config: Config;
  jobId: string;
  tenantId: string;
  signal: AbortSignal;
  progress(fraction: number, stage: string): Promise<void>;
};

/**
 * Moves the document to a stage, stamped, if this job is still the one
 * indexing it. Parsing starts a run: what an earlier attempt reached or the
 * error it ended with is cleared. A stage is news for pollers, not a record
 * to keep: its commit does not wait for the disk (a crash loses at most the
 * stamp, and the run is retried anyway).
 */
async function enter(db: CommonQueryMethods, jobId: string, documentId: string, state: IndexState) {
  const restart =
    state === 'parsing'
      ? sql.fragment`, splitting_at = null, indexing_at = null, completed_at = null, error_at = null, index_error = null`
      : sql.fragment``;
  // One statement, its own transaction: the setting (local to it) is in force when it commits.
  await db.query(sql.typeAlias('void')`
    ${unhurried}
    update knowledge_documents set index_state = ${state}, ${sql.identifier([`${state}_at`])} = now() ${restart}
    where id = ${documentId} and index_job_id = ${jobId} and exists (select from unhurried)`);
}

/** Marks the document's run failed with the error's code (a retried run starts it over). */
export async function markFailed(
  db: CommonQueryMethods,
  documentId: string,
  jobId: string,
  code: string,
  message: string,
) {
  await db.query(sql.typeAlias('void')`
    update knowledge_documents
    set index_state = 'error', error_at = now(), index_error = ${sql.jsonb({ code, message })}
    where id = ${documentId} and index_job_id = ${jobId}`);
}

/** The text to index: the document's (a post's as it is now); a page's or a PDF's once its run took it. */
async function textOf(db: CommonQueryMethods, stored: StoredDocument): Promise<Source> {
  if (stored.text_pending)
    throw new KnowledgeError(
      'source_not_read',
      'The document’s text is not fetched or read yet; its indexing runs again from the start.',
      false,
    );
  return sourceOf(db, stored);
}

/** The document as stored, before a run starts: the worker reads it to know whether a source is to be fetched or read. */
export async function documentToIndex(db: CommonQueryMethods, documentId: string): Promise<StoredDocument> {
  const stored = await loadStored(db, documentId);
  if (!stored) throw new KnowledgeError('document_missing', 'The document was removed before it was indexed.', false);
  return stored;
}

export async function indexDocument(context: IndexContext, input: RagIndexInput): Promise<Success> {
  const { db, config } = context;
  const stored = await documentToIndex(db, input.document_id);
  // What earlier runs changed of the agent's word counts, folded in (see 0027): outside any run's commit,
  // and at most every few seconds, so a bulk of runs sums each common word's changes once.
  await db.query(sql.typeAlias('void')`select from knowledge_counts_fold(${stored.agent_id}, ${foldEvery})`);
  const options = { chunkTokens: input.chunk_tokens, overlapTokens: input.overlap_tokens };
  const model = embeddingModel(config);
  const source = await textOf(db, stored);
  const hash = indexHash(source, options, model);
  if (isCurrent(stored, hash)) {
    // The post may have changed without its text changing (its tags, say): the snapshot is current again.
    const renewed = source.postVersion !== stored.post_version;
    return {
      units: 0,
      output: { document_id: stored.id, changed: false, chunks: stored.chunks, embedding_model: model },
      ...(renewed
        ? {
            commit: async (tx: CommonQueryMethods) => {
              await tx.query(sql.typeAlias('void')`
                update knowledge_documents set post_version = ${source.postVersion} where id = ${stored.id}`);
            },
          }
        : {}),
    };
  }

  await enter(db, context.jobId, stored.id, 'parsing');
  const clean = cleanText(paragraphsOf(source.body, source.format));
  await enter(db, context.jobId, stored.id, 'splitting');
  const chunks = splitIntoChunks(clean, options);
  await enter(db, context.jobId, stored.id, 'indexing');
  const embedded = model
    ? await embedChunks(
        { ...context, job: { id: context.jobId, tenant_id: context.tenantId } },
        stored.id,
        model,
        source.title,
        chunks,
      )
    : null;
  const tokens = chunks.reduce((sum, chunk) => sum + chunk.tokens, 0);
  const embeddedTokens = embedded?.embeddedTokens ?? 0;
  return {
    units: embeddedTokens / 1000,
    output: {
      document_id: stored.id,
      changed: true,
      chunks: chunks.length,
      tokens: countTokens(clean.text),
      chunk_tokens: tokens,
      embedded_tokens: embeddedTokens,
      reused_embeddings: embedded?.reused ?? 0,
      embedding_model: model,
    },
    commit: async (tx) => {
      const written = await replaceChunks(
        tx,
        context.jobId,
        stored,
        source,
        chunks,
        embedded && model ? { model, vectors: embedded.vectors, hashes: embedded.hashes } : null,
      );
      if (!written) return { discarded: 'The document was removed or is being indexed by a later job.' };
      // The snapshot is written only when the post's text renewed it (a 1 MB body is not rewritten for nothing).
      const renewed =
        source.postVersion !== stored.post_version
          ? sql.fragment`, title = ${source.title}, body = ${source.body}, body_format = ${source.format},
              locale = ${source.locale}, post_version = ${source.postVersion}`
          : sql.fragment``;
      await tx.query(sql.typeAlias('void')`
        update knowledge_documents
        set index_state = 'completed', completed_at = now(), index_error = null, indexed_hash = ${hash},
            chunk_tokens = ${options.chunkTokens}, overlap_tokens = ${options.overlapTokens}, embedding_model = ${model},
            tokens = ${countTokens(clean.text)}, chunks = ${chunks.length} ${renewed}
        where id = ${stored.id}`);
    },
  };
}
