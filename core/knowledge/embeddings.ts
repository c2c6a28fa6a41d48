// Embeddings from the provider EMBEDDING_PROVIDERS names (its first model),
// used by the indexing job for chunks and by a
// search for its query. Vectors are normalised to length 1, so cosine
// similarity is their dot product, and each gets a 256-bit sign signature:
// bit i says on which side of random hyperplane i the vector lies, and the
// share of bits two signatures differ in estimates the angle between the
// vectors (random-hyperplane LSH). Without pgvector, a search ranks an
// agent's chunks by that Hamming distance, a cheap scan of narrow rows, and
// computes exact cosine similarity only for the nearest.
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { recordProviderCall, type CallOutcome } from '../providers/calls.ts';
import { JobError } from '../jobs/errors.ts';
import { adapterFor, type RemoteVendor } from '../providers/registry.ts';

/**
 * Why indexing or an embedding call failed, with a stable code: `transient`
 * ones (unreachable, timed out, 429, 5xx) are worth retrying.
 */
export class KnowledgeError extends Error {
  override name = 'KnowledgeError';
  readonly code: string;
  readonly transient: boolean;

  constructor(code: string, message: string, transient: boolean, cause?: unknown) {
    super(message, cause === undefined ? {} : { cause });
    this.code = code;
    this.transient = transient;
  }
}

/**
 * The provider and model chunks are embedded with: the first of
 * EMBEDDING_PROVIDERS and its first model; null when none is named (full
 * text alone). One model embeds a knowledge base, so that its vectors
 * compare; a base indexed with another model is indexed again.
 */
export function embeddingProvider(config: Pick<Config, 'providers'>) {
  const vendor = config.providers.chains.embeddings.find((name): name is RemoteVendor => name !== 'local');
  const model = vendor && config.providers.models[vendor]?.embeddings?.[0];
  return vendor && model ? { vendor, model } : null;
}

/** The model chunks are embedded with; null when no embedding provider is configured (full text alone). */
export const embeddingModel = (config: Pick<Config, 'providers'>): string | null =>
  embeddingProvider(config)?.model ?? null;

export type Embedded = { vectors: number[][]; tokens: number | null };

/** Where a job's embedding calls are recorded (provider_calls), as its other calls to providers are. */
export type CallRecord = { db: CommonQueryMethods; job: { id: string; tenant_id: string } };

/**
 * Texts embedded by the provider, in order, normalised; `tokens` as the
 * provider reports them. Not passed on to another provider on failure: one
 * model embeds a knowledge base, and another's vectors would not compare.
 */
export async function embedTexts(
  config: Config,
  texts: string[],
  signal: AbortSignal,
  recordFor?: CallRecord,
): Promise<Embedded> {
  const provider = embeddingProvider(config);
  if (!provider)
    throw new KnowledgeError('not_configured', 'No embedding provider: name one in EMBEDDING_PROVIDERS.', false);
  const startedAt = new Date();
  const record = (outcome: CallOutcome, error?: JobError) =>
    recordFor &&
    recordProviderCall(recordFor.db, recordFor.job, {
      capability: 'embeddings',
      ...provider,
      startedAt,
      durationMs: Date.now() - startedAt.getTime(),
      outcome,
      errorCode: error?.code,
      httpStatus: error?.status,
    });
  let embedded: Embedded;
  try {
    embedded = await adapterFor(config, 'embeddings', provider.vendor).embed(texts, { model: provider.model, signal });
    await record('succeeded');
  } catch (error) {
    if (signal.aborted) {
      await record('canceled');
      throw signal.reason ?? error;
    }
    if (error instanceof JobError) {
      await record('failed', error);
      throw new KnowledgeError(error.code, error.message, error.transient, error);
    }
    throw error;
  }
  const dimensions = embedded.vectors[0]?.length;
  if (embedded.vectors.length !== texts.length || embedded.vectors.some((vector) => vector.length !== dimensions))
    throw new KnowledgeError(
      'provider_invalid_response',
      'The embedding provider did not answer one vector of one size per text.',
      false,
    );
  return { vectors: embedded.vectors.map(normalise), tokens: embedded.tokens };
}

export function normalise(vector: number[]): number[] {
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

export const signatureBits = 256;

/** A small deterministic generator (mulberry32), so every process draws the same hyperplanes. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hyperplanes = new Map<number, Float64Array>();

/** `signatureBits` Gaussian hyperplanes of `dimensions` (Box–Muller), the same for a given size everywhere. */
function planesFor(dimensions: number): Float64Array {
  let planes = hyperplanes.get(dimensions);
  if (!planes) {
    const random = generator(dimensions * 2654435761);
    planes = new Float64Array(signatureBits * dimensions);
    for (let i = 0; i < planes.length; i++)
      planes[i] = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    hyperplanes.set(dimensions, planes);
  }
  return planes;
}

/** The vector's signature as PostgreSQL bit-string text (`bit(256)`). */
export function signature(vector: number[]): string {
  const planes = planesFor(vector.length);
  let bits = '';
  for (let plane = 0; plane < signatureBits; plane++) {
    let dot = 0;
    const offset = plane * vector.length;
    for (let i = 0; i < vector.length; i++) dot += planes[offset + i]! * vector[i]!;
    bits += dot >= 0 ? '1' : '0';
  }
  return bits;
}
