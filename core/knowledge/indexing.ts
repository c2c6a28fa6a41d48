// The work of a rag_index job: a document's text taken (a post's as it is
// now, so a stale snapshot is renewed), parsed and cleaned, split into
// chunks, indexed for full text and, when a provider is configured, embedded.
// The document's state moves waiting → parsing → splitting → indexing →
// completed (or error), each stage stamped. The chunks replace the old ones
// in the job's settling transaction, with the debit: until then searches
// keep finding the previous chunks, and a canceled or taken-over run leaves
// them alone. A document whose text, settings and embedding model are those
// it was indexed with is left as it is, and nothing is charged.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import type { Success } from '../jobs/settle.ts';
import { splitIntoChunks, type Chunk } from './chunking.ts';
import { embedTexts, embeddingModel, KnowledgeError, signature } from './embeddings.ts';
import type { IndexState } from './documents.ts';
import {
  embeddingInput,
  indexHash,
  isCurrent,
  loadStored,
  sourceOf,
  type Source,
  type StoredDocument,
} from './source.ts';
import { cleanText, countTokens, paragraphsOf } from './text.ts';

export const ragIndexKind = 'rag_index';

export const ragIndexInput = z.object({
  document_id: z.uuid(),
  chunk_tokens: z.number().int().positive(),
  overlap_tokens: z.number().int().nonnegative(),
});
export type RagIndexInput = z.infer<typeof ragIndexInput>;

const embeddingBatch = 64;
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
    with unhurried as (select set_config('synchronous_commit', 'off', true))
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

export async function indexDocument(context: IndexContext, input: RagIndexInput): Promise<Success> {
  const { db, config, signal } = context;
  const stored = await loadStored(db, input.document_id);
  if (!stored) throw new KnowledgeError('document_missing', 'The document was removed before it was indexed.', false);
  // What earlier runs changed of the agent's word counts, folded in (see 0027): outside any run's commit,
  // and at most every few seconds, so a bulk of runs sums each common word's changes once.
  await db.query(sql.typeAlias('void')`select from knowledge_counts_fold(${stored.agent_id}, ${foldEvery})`);
  const options = { chunkTokens: input.chunk_tokens, overlapTokens: input.overlap_tokens };
  const model = embeddingModel(config);
  const source = await sourceOf(db, stored);
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
  const vectors: number[][] = [];
  let embeddedTokens = 0;
  if (model) {
    // Embedding is the long part: the job says how far it got.
    await context.progress(0.3, `embedding ${chunks.length} chunks`);
    for (let from = 0; from < chunks.length; from += embeddingBatch) {
      signal.throwIfAborted();
      const inputs = chunks.slice(from, from + embeddingBatch).map((chunk) => embeddingInput(source.title, chunk));
      const embedded = await embedTexts(config, inputs, signal, {
        db,
        job: { id: context.jobId, tenant_id: context.tenantId },
      });
      vectors.push(...embedded.vectors);
      embeddedTokens += embedded.tokens ?? inputs.reduce((sum, text) => sum + countTokens(text), 0);
      await context.progress(
        0.3 + (0.6 * vectors.length) / chunks.length,
        `embedded ${vectors.length} of ${chunks.length} chunks`,
      );
    }
  }
  const tokens = chunks.reduce((sum, chunk) => sum + chunk.tokens, 0);
  return {
    units: embeddedTokens / 1000,
    output: {
      document_id: stored.id,
      changed: true,
      chunks: chunks.length,
      tokens: countTokens(clean.text),
      chunk_tokens: tokens,
      embedded_tokens: embeddedTokens,
      embedding_model: model,
    },
    commit: async (tx) => {
      const written = await replaceChunks(tx, context.jobId, stored, source, chunks, vectors, model);
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

const chunkIds = z.object({ id: z.uuid(), ordinal: z.number() });

/** PostgreSQL array text of each vector (null: not embedded), cast to the embedding column's type on insert. */
const vectorTexts = (chunks: Chunk[], vectors: number[][]) =>
  chunks.map((_, i) => (vectors[i] ? `{${vectors[i].join(',')}}` : null));

/** The document's chunks (and their signatures) replaced, if this job is still the one indexing it; false otherwise. */
async function replaceChunks(
  tx: CommonQueryMethods,
  jobId: string,
  stored: StoredDocument,
  source: Source,
  chunks: Chunk[],
  vectors: number[][],
  model: string | null,
): Promise<boolean> {
  const ours = await tx.exists(sql.type(z.object({}))`
    select 1 from knowledge_documents where id = ${stored.id} and index_job_id = ${jobId} for update`);
  if (!ours) return false;
  await tx.query(sql.typeAlias('void')`delete from knowledge_chunks where document_id = ${stored.id}`);
  if (chunks.length === 0) return true;
  const column = <T>(pick: (chunk: Chunk) => T) => chunks.map(pick);
  const made = await tx.any(sql.type(chunkIds)`
    insert into knowledge_chunks (document_id, agent_id, tenant_id, site_id, locale, ordinal, content, tokens,
                                  start_offset, end_offset, tsv, embedding)
    select ${stored.id}, ${stored.agent_id}, ${stored.tenant_id}, ${stored.site_id}, ${source.locale}, c.ordinal,
           c.content, c.tokens, c.start_offset, c.end_offset,
           setweight(to_tsvector(search_config(${source.locale}), ${source.title}), 'B')
             || to_tsvector(search_config(${source.locale}), c.content),
           c.embedding::real[]
    from unnest(${sql.array(
      column((chunk) => chunk.ordinal),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.content),
      'text',
    )}, ${sql.array(
      column((chunk) => chunk.tokens),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.start),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.end),
      'int4',
    )}, ${sql.array(vectorTexts(chunks, vectors), 'text')}) as c (ordinal, content, tokens, start_offset, end_offset, embedding)
    returning id, ordinal`);
  if (!model || vectors.length === 0) return true;
  const byOrdinal = new Map(made.map((row) => [row.ordinal, row.id]));
  await tx.query(sql.typeAlias('void')`
    insert into knowledge_signatures (chunk_id, agent_id, tenant_id, site_id, model, signature)
    select s.chunk_id, ${stored.agent_id}, ${stored.tenant_id}, ${stored.site_id}, ${model}, s.signature::bit(256)
    from unnest(${sql.array(
      column((chunk) => byOrdinal.get(chunk.ordinal)!),
      'uuid',
    )}, ${sql.array(vectors.map(signature), 'text')}) as s (chunk_id, signature)`);
  return true;
}
