// Embeddings from an OpenAI-compatible `POST {AI_BASE_URL}/embeddings`
// (model AI_EMBEDDING_MODEL), used by the indexing job for chunks and by a
// search for its query. Vectors are normalised to length 1, so cosine
// similarity is their dot product, and each gets a 256-bit sign signature:
// bit i says on which side of random hyperplane i the vector lies, and the
// share of bits two signatures differ in estimates the angle between the
// vectors (random-hyperplane LSH). Without pgvector, a search ranks an
// agent's chunks by that Hamming distance, a cheap scan of narrow rows, and
// computes exact cosine similarity only for the nearest.
import { z } from 'zod';
import type { Config } from '../config.ts';

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

/** The model chunks are embedded with; null when no embedding provider is configured (full text alone). */
export const embeddingModel = (config: Config): string | null => config.ai.embeddingModel ?? null;

const answer = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()).min(1) })),
  usage: z.object({ total_tokens: z.number().int().nonnegative() }).optional(),
});

export type Embedded = { vectors: number[][]; tokens: number | null };

/** Texts embedded by the provider, in order, normalised; `tokens` as the provider reports them. */
export async function embedTexts(config: Config, texts: string[], signal: AbortSignal): Promise<Embedded> {
  const model = embeddingModel(config);
  if (!model || !config.ai.baseUrl)
    throw new KnowledgeError('not_configured', 'No embedding provider: set AI_EMBEDDING_MODEL and AI_BASE_URL.', false);
  const timeout = AbortSignal.timeout(config.ai.timeoutMs);
  // The time covers the answer's body too: one that stalls or breaks off halfway is worth another try, as
  // one that never came; only a whole answer that is not what was asked is garbage.
  const unanswered = (error: unknown, timedOut: string, broken: string) => {
    if (signal.aborted) return signal.reason ?? error;
    return timeout.aborted
      ? new KnowledgeError(
          'provider_timeout',
          `The embedding provider ${timedOut} within ${config.ai.timeoutMs} ms.`,
          true,
          error,
        )
      : new KnowledgeError('provider_unavailable', `The embedding provider ${broken}.`, true, error);
  };
  let response: Response;
  try {
    response = await fetch(`${config.ai.baseUrl}/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.ai.apiKey ? { authorization: `Bearer ${config.ai.apiKey}` } : {}),
      },
      body: JSON.stringify({ model, input: texts }),
      signal: AbortSignal.any([signal, timeout]),
      // A provider that redirects could send us anywhere (an internal address): not followed.
      redirect: 'manual',
    });
  } catch (error) {
    throw unanswered(error, 'did not answer', 'could not be reached');
  }
  if (!response.ok) {
    const detail = (await response.text().catch(() => '')).slice(0, 300);
    const transient = response.status === 429 || response.status >= 500;
    throw new KnowledgeError(
      transient ? 'provider_unavailable' : 'provider_rejected',
      `The embedding provider answered ${response.status}${detail ? `: ${detail}` : ''}.`,
      transient,
    );
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw unanswered(error, 'did not finish its answer', 'broke off its answer');
  }
  const parsed = answer.safeParse(parseJson(text));
  const byIndex = parsed.success ? [...parsed.data.data].sort((a, b) => a.index - b.index) : [];
  const dimensions = byIndex[0]?.embedding.length;
  if (
    !parsed.success ||
    byIndex.length !== texts.length ||
    byIndex.some((item, i) => item.index !== i || item.embedding.length !== dimensions)
  )
    throw new KnowledgeError(
      'provider_invalid_response',
      'The embedding provider did not answer one vector of one size per text.',
      false,
    );
  return { vectors: byIndex.map((item) => normalise(item.embedding)), tokens: parsed.data.usage?.total_tokens ?? null };
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
};

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
