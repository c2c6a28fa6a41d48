// The OpenAI models the platform knows, from OpenAI's reference: the OpenAPI
// document in openai/openai-openapi (f85dbe2, August 2026) for what each model
// takes, and OpenAI's deprecation notices (quoted in /work/notes/vendors/openai.md)
// for what has been shut down.
//
// Prices are credits per unit, 1 credit ≈ $0.01, from OpenAI's list prices
// rounded up a little. Chat bills the tokens a model reads and those it writes
// at different rates, and so does the platform: two prices a model. Images are
// priced at the model's `high` quality for 1024x1024, since a request that names
// no quality gets `auto`, which is billed like high; larger pictures cost OpenAI
// more.
//
// Shut down, so not listed: dall-e-2 and dall-e-3 (2026-05-12), whose size
// rules (square 256–1024; 1024x1024, 1792x1024, 1024x1792 with n = 1) the
// OpenAPI document still carries.
import type { ModelSpec, Sizes } from '../models.ts';

const vendor = 'openai';

/** GPT image models before gpt-image-2: three sizes (CreateImageRequest.size). */
const fixedSizes: Sizes = { list: ['1024x1024', '1536x1024', '1024x1536'] };

/**
 * gpt-image-2: any size on a 16-pixel grid, ratio within 1:3–3:1, up to 3840 a side
 * (CreateImageRequest.size), between 655,360 and 8,294,400 pixels (OpenAI's
 * image guide as quoted by its resellers, and confirmed against the live API in
 * openclaw/openclaw#118476). Above 2560x1440 OpenAI calls the result experimental.
 */
const gptImage2Sizes: Sizes = {
  multipleOf: 16,
  minRatio: 1 / 3,
  maxRatio: 3,
  maxWidth: 3840,
  maxHeight: 3840,
  minPixels: 655_360,
  maxPixels: 8_294_400,
};

const image = (model: string, defaultPrice: number, sizes: Sizes, note?: string): ModelSpec[] => [
  { vendor, capability: 'image', model, unit: 'item', defaultPrice, sizes, maxCount: 10, note },
  // An edit also reads the picture it is given (image input tokens): about a cent more.
  { vendor, capability: 'image_edit', model, unit: 'item', defaultPrice: defaultPrice + 1, sizes, maxCount: 10, note },
];

const retiring = 'OpenAI shuts it down on 2026-12-01; use gpt-image-2.';

/** CreateSpeechRequest.input: at most 4096 characters. */
const speech = (model: string, defaultPrice: number): ModelSpec => ({
  vendor,
  capability: 'speech',
  model,
  unit: '1k_characters',
  defaultPrice,
  maxCharacters: 4096,
});

/** Priced per 1,000 tokens read and written; the context window at three characters a token (English: four). */
const chat = (model: string, input: number, output: number, contextTokens: number, note?: string): ModelSpec => ({
  vendor,
  capability: 'text',
  model,
  unit: '1k_tokens',
  defaultPrice: input,
  outputPrice: output,
  maxCharacters: contextTokens * 3,
  note,
});

const reasoning = 'A reasoning model: it takes no temperature, so none is sent.';

export const openaiModels: readonly ModelSpec[] = [
  // $0.211 for a high-quality 1024x1024 picture.
  ...image('gpt-image-2', 22, gptImage2Sizes),
  // $0.133, $0.036, $0.167.
  ...image('gpt-image-1.5', 14, fixedSizes, retiring),
  ...image('gpt-image-1-mini', 4, fixedSizes, retiring),
  ...image(
    'gpt-image-1',
    17,
    fixedSizes,
    'Reported shut down on 2026-10-23 (a third-party report; the OpenAPI document still lists it); use gpt-image-2.',
  ),

  // Speech: tts-1 and tts-1-hd are billed per character ($15 and $30 a million).
  // gpt-4o-mini-tts is billed in tokens ($0.60 a million text in, $12 a million
  // audio out), which OpenAI estimates at $0.015 a minute: about 1,000 characters.
  speech('gpt-4o-mini-tts', 2),
  speech('tts-1', 2),
  speech('tts-1-hd', 3),

  // Chat, with the context window in tokens. $0.75 in / $4.50 out a million tokens.
  chat('gpt-5.4-mini', 0.08, 0.45, 400_000, reasoning),
  // $0.20 / $1.25.
  chat('gpt-5.4-nano', 0.02, 0.13, 400_000, reasoning),
  // $0.40 / $1.60.
  chat('gpt-4.1-mini', 0.04, 0.16, 1_000_000),
  // $0.15 / $0.60.
  chat('gpt-4o-mini', 0.02, 0.06, 128_000),

  // Embeddings: $0.02, $0.13 and $0.10 a million tokens.
  { vendor, capability: 'embeddings', model: 'text-embedding-3-small', unit: '1k_tokens', defaultPrice: 0.002 },
  { vendor, capability: 'embeddings', model: 'text-embedding-3-large', unit: '1k_tokens', defaultPrice: 0.014 },
  {
    vendor,
    capability: 'embeddings',
    model: 'text-embedding-ada-002',
    unit: '1k_tokens',
    defaultPrice: 0.01,
    note: 'Makes 1536 dimensions only: it refuses `dimensions` (CreateEmbeddingRequest.dimensions).',
  },
];
