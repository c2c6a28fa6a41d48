// The embeddings of a document's chunks for an indexing run: a chunk whose
// text (under the document's title) was embedded by the same model before
// keeps its stored vector; only the others are sent to the provider. Each
// chunk's embedding is stored with the hash of the model and the text sent
// (knowledge_chunks.embedding_hash, 0047), so a post whose one paragraph
// changed has one chunk embedded again, not all of them, and pays for one.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import type { Chunk } from './chunking.ts';
import { embedTexts } from './embeddings.ts';
import { embeddingInput } from './source.ts';
import { countTokens } from './text.ts';

const embeddingBatch = 64;

/** What says an embedding can be reused: the model and the exact text it embedded. */
export const embeddingHash = (model: string, input: string) =>
  createHash('sha256')
    .update(JSON.stringify([model, input]))
    .digest('base64url');

const storedRow = z.object({ embedding_hash: z.string(), embedding: z.array(z.number()) });

/** The document's stored embeddings, by hash (the vectors are normalised already). */
async function storedEmbeddings(db: CommonQueryMethods, documentId: string): Promise<Map<string, number[]>> {
  const rows = await db.any(sql.type(storedRow)`
    select embedding_hash, embedding::real[] as embedding from knowledge_chunks
    where document_id = ${documentId} and embedding_hash is not null and embedding is not null`);
  return new Map(rows.map((row) => [row.embedding_hash, row.embedding]));
}

export type ChunkEmbeddings = {
  /** One per chunk, in order. */
  vectors: number[][];
  hashes: string[];
  /** Tokens sent to the provider (what is charged), and how many chunks kept their stored vector. */
  embeddedTokens: number;
  reused: number;
};

export type EmbeddingRun = {
  db: CommonQueryMethods;
  config: Config;
  signal: AbortSignal;
  /** The job the calls are recorded for (provider_calls). */
  job: { id: string; tenant_id: string };
  progress(fraction: number, stage: string): Promise<void>;
};

export async function embedChunks(
  run: EmbeddingRun,
  documentId: string,
  model: string,
  title: string,
  chunks: Chunk[],
): Promise<ChunkEmbeddings> {
  const inputs = chunks.map((chunk) => embeddingInput(title, chunk));
  const hashes = inputs.map((input) => embeddingHash(model, input));
  const stored = await storedEmbeddings(run.db, documentId);
  const vectors: (number[] | undefined)[] = hashes.map((hash) => stored.get(hash));
  const missing = vectors.flatMap((vector, i) => (vector ? [] : [i]));
  let embeddedTokens = 0;
  // Embedding is the long part: the job says how far it got.
  await run.progress(0.3, `embedding ${missing.length} of ${chunks.length} chunks`);
  for (let from = 0; from < missing.length; from += embeddingBatch) {
    run.signal.throwIfAborted();
    const batch = missing.slice(from, from + embeddingBatch);
    const texts = batch.map((i) => inputs[i]!);
    const embedded = await embedTexts(run.config, texts, run.signal, { db: run.db, job: run.job });
    batch.forEach((i, at) => (vectors[i] = embedded.vectors[at]));
    embeddedTokens += embedded.tokens ?? texts.reduce((sum, text) => sum + countTokens(text), 0);
    const done = Math.min(from + embeddingBatch, missing.length);
    await run.progress(0.3 + (0.6 * done) / missing.length, `embedded ${done} of ${missing.length} chunks`);
  }
  return { vectors: vectors as number[][], hashes, embeddedTokens, reused: chunks.length - missing.length };
}
