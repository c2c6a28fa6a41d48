// POST /v1/embeddings, as OpenAI's reference describes it (openai/openai-openapi
// f85dbe2, components.schemas.CreateEmbeddingRequest and
// CreateEmbeddingResponse, "SPEC" below): a JSON body with no other keys
// (additionalProperties: false), answered with one vector a text, as floats or
// as base64 (little-endian float32, what openai-node decodes: src/lib/embeddings.ts).
import { createHash } from 'node:crypto';
import { fakeEmbedding } from '../../fake-embeddings.ts';
import {
  invalidType,
  invalidValue,
  missingParameter,
  modelNotFound,
  outOfRange,
  type Refusal,
  refusal,
  tooMany,
  unrecognizedArgument,
} from './errors.ts';

const keys = ['input', 'model', 'encoding_format', 'dimensions', 'user'];
/** SPEC model, with each model's own dimensions (OpenAI's embeddings guide). */
const models: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** A text's tokens, estimated at four characters a token (the fake has no tokenizer). */
const tokensOf = (input: string | number[]) => (typeof input === 'string' ? Math.ceil(input.length / 4) : input.length);

export type EmbeddingPlan = { inputs: (string | number[])[]; model: string; dimensions: number; base64: boolean };

/** The first thing OpenAI would refuse in this request; else what to answer. */
export function checkEmbeddings(body: Record<string, unknown>): Refusal | EmbeddingPlan {
  // additionalProperties: false. OpenAI's words for it here are not verified; chat's are used.
  const unknown = Object.keys(body).find((key) => !keys.includes(key));
  if (unknown) return unrecognizedArgument(unknown);
  if (body.model === undefined) return missingParameter('model');
  if (body.input === undefined) return missingParameter('input');
  if (typeof body.model !== 'string') return invalidType('model', 'a string', body.model);
  const native = models[body.model];
  if (!native) return modelNotFound(body.model);
  // SPEC input: a string, or an array (1–2048) of strings, of tokens, or of token arrays; never empty.
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]) as unknown[];
  const wellFormed =
    inputs.length > 0 &&
    inputs.every(
      (input) =>
        (typeof input === 'string' && input.length > 0) ||
        (Array.isArray(input) && input.length > 0 && input.every((token) => Number.isInteger(token))) ||
        (Number.isInteger(input) && Array.isArray(body.input)),
    );
  // Observed for an empty string: "'$.input' is invalid. Please check the API reference: …" (find_string 25259291160).
  if (!wellFormed)
    return refusal(
      400,
      "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
    );
  if (inputs.length > 2048) return tooMany('input', 2048, inputs.length);
  const texts = (inputs.every((input) => Number.isInteger(input)) ? [inputs] : inputs) as (string | number[])[];
  // SPEC input: "8192 tokens for all embedding models", "300,000 tokens summed across all inputs"; wording not verified.
  const tooBig = texts.find((input) => tokensOf(input) > 8192);
  if (tooBig !== undefined)
    return refusal(
      400,
      `This model's maximum context length is 8192 tokens, however you requested ${tokensOf(tooBig)} tokens. Please reduce your prompt.`,
    );
  const total = texts.reduce((sum, input) => sum + tokensOf(input), 0);
  if (total > 300_000)
    return refusal(400, `Requested ${total} tokens, max 300000 tokens per request`, { param: 'input' });
  const encoding = body.encoding_format ?? 'float';
  if (!['float', 'base64'].includes(String(encoding)))
    return invalidValue('encoding_format', encoding, ['float', 'base64']);
  let dimensions = native;
  if (body.dimensions !== undefined) {
    // SPEC dimensions: "Only supported in text-embedding-3 and later models". Observed: find_string 58918737536
    // (ada-002 refuses it even at its own 1536: 69567165540); param and code not verified.
    if (body.model === 'text-embedding-ada-002')
      return refusal(400, 'This model does not support specifying dimensions.', { param: 'dimensions' });
    if (typeof body.dimensions !== 'number' || !Number.isInteger(body.dimensions))
      return invalidType('dimensions', 'an integer', body.dimensions);
    // SPEC dimensions: minimum 1; above the model's own it cannot shorten to (not verified).
    if (body.dimensions < 1 || body.dimensions > native)
      return outOfRange('dimensions', body.dimensions, { min: 1, max: native, integer: true });
    dimensions = body.dimensions;
  }
  return { inputs: texts, model: body.model, dimensions, base64: encoding === 'base64' };
}

/**
 * SPEC CreateEmbeddingResponse: unit vectors from each text's words (a hashed
 * bag of words, `synonyms` taken as one word: test/helpers/fake-embeddings.ts),
 * so equal texts embed equally and texts sharing words point alike, as a
 * real model's texts sharing a meaning do (a test affordance, not OpenAI's);
 * a text without words (tokens, punctuation) from its hash.
 */
export function embeddingsAnswer(plan: EmbeddingPlan, synonyms: Map<string, string> = new Map()) {
  return {
    object: 'list',
    data: plan.inputs.map((input, index) => {
      const vector = vectorOf(input, plan.dimensions, synonyms);
      const embedding = plan.base64 ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector);
      return { object: 'embedding', index, embedding };
    }),
    model: plan.model,
    usage: {
      prompt_tokens: plan.inputs.reduce((sum: number, input) => sum + tokensOf(input), 0),
      total_tokens: plan.inputs.reduce((sum: number, input) => sum + tokensOf(input), 0),
    },
  };
}

function vectorOf(input: string | number[], dimensions: number, synonyms: Map<string, string>): Float32Array {
  const words = typeof input === 'string' ? fakeEmbedding(input, synonyms, dimensions) : [];
  const vector = words.some((value) => value !== 0) ? Float32Array.from(words) : hashVector(input, dimensions);
  const norm = Math.hypot(...vector);
  // Float32Array's buffer is little-endian on every machine Node runs on here (x64, arm64), as OpenAI's is.
  return vector.map((value) => value / norm);
}

function hashVector(input: string | number[], dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let seed = createHash('sha256').update(JSON.stringify(input)).digest();
  for (let i = 0; i < dimensions; i++) {
    if (i % 32 === 0 && i > 0) seed = createHash('sha256').update(seed).digest();
    vector[i] = seed[i % 32]! / 255 - 0.5;
  }
  return vector;
}
