// Embeddings from OpenAI's POST /embeddings (openai/openai-openapi,
// components.schemas.CreateEmbeddingRequest, which allows no other keys).
// Texts go in batches within OpenAI's bounds: at most 2048 inputs, and 300,000
// tokens summed over a request (held to as many characters, since a token is
// rarely shorter than one). The SDK asks for base64 (four bytes a float, half
// the size of JSON numbers) and decodes it; a compatible server that answers
// floats anyway is read the same. `dimensions` goes only to the models that take it:
// text-embedding-3 and later, not ada-002, which refuses it even at its own 1536.
import { z } from 'zod';
import { permanent } from '../../jobs/errors.ts';
import type { Call, Embedder, Embeddings, VendorSettings } from '../capabilities.ts';
import { connect } from './client.ts';

const maxInputs = 2048;
const maxCharacters = 300_000;
const adaDimensions = 1536;

/** Consecutive texts, each batch within OpenAI's bounds. */
export function batches(texts: string[]): string[][] {
  const result: string[][] = [];
  let current: string[] = [];
  let characters = 0;
  for (const text of texts) {
    if (current.length > 0 && (current.length === maxInputs || characters + text.length > maxCharacters)) {
      result.push(current);
      current = [];
      characters = 0;
    }
    current.push(text);
    characters += text.length;
  }
  if (current.length > 0) result.push(current);
  return result;
}

// SPEC CreateEmbeddingResponse; `embedding` is what the SDK left after decoding base64.
const answerSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
  usage: z.object({ prompt_tokens: z.number() }).nullish(),
});

export function openaiEmbeddings(settings: VendorSettings): Embedder {
  const openai = connect(settings);
  return {
    async embed(texts, call) {
      const dimensions = dimensionsFor(call.model, call.dimensions);
      if (texts.some((text) => text.length === 0))
        throw permanent('provider_rejected', 'OpenAI cannot embed an empty text.');
      const result: Embeddings = { vectors: [], tokens: 0 };
      for (const batch of batches(texts)) {
        const answer = await openai.send(call, (client, options) =>
          client.embeddings.create({ model: call.model, input: batch, ...(dimensions ? { dimensions } : {}) }, options),
        );
        const parsed = answerSchema.safeParse(answer);
        if (!parsed.success || parsed.data.data.length !== batch.length)
          throw permanent(
            'provider_invalid_response',
            `${openai.name} did not answer one vector a text.`,
            parsed.error,
          );
        const vectors = parsed.data.data.toSorted((a, b) => a.index - b.index).map((item) => item.embedding);
        if (call.dimensions && vectors.some((vector) => vector.length !== call.dimensions))
          throw permanent('provider_invalid_response', `${openai.name} answered vectors of another length than asked.`);
        result.vectors.push(...vectors);
        result.tokens =
          result.tokens === null || !parsed.data.usage ? null : result.tokens + parsed.data.usage.prompt_tokens;
      }
      return result;
    },
  };
}

function dimensionsFor(model: Call['model'], dimensions: number | undefined): number | undefined {
  if (!/^text-embedding-ada-/.test(model)) return dimensions;
  if (dimensions === undefined || dimensions === adaDimensions) return undefined;
  throw permanent('provider_rejected', `${model} makes vectors of ${adaDimensions} dimensions only.`);
}
