// ElevenLabs' text-to-speech models: what each takes in one request and what
// it costs, for the checks at submit and the price of a speech job.
//
// Models and their character limits: ElevenLabs' "Models" page
// (elevenlabs/elevenlabs-docs fern/docs/pages/models.mdx, "Models overview"
// and "Character limits"), except eleven_v3's limit: that page (August 2025)
// says 3,000, ElevenLabs' newer overview (elevenlabs.io/docs/llms-full.txt,
// "Meet the models") says 5,000 since v3 left its alpha; the newer is taken.
// Deprecated models (eleven_monolingual_v1, eleven_multilingual_v1) are left
// out: the same page asks new projects not to use them. The Turbo models are
// "functionally equivalent" to the Flash ones with a higher latency, and
// ElevenLabs recommends Flash "in all use cases" (elevenlabs.io/docs/models,
// "Deprecated models", newer than the repository's page).
//
// Prices are in our credits (1 credit ≈ US$0.01) per 1,000 characters of
// text, from ElevenLabs' API prices (elevenlabs.io/pricing/api, read in June
// 2026 through developer.puter.com/tutorials/elevenlabs-api-pricing and
// truefoundry/models#1892): Flash and Turbo US$0.05, Multilingual v2 and v3
// US$0.10 per 1,000 characters ("50% lower price per character", says the
// overview of Flash and Turbo). A voice from the shared library may cost more
// (its own multiplier), which these prices do not know.
import type { ModelSpec } from '../models.ts';

const speech = (model: string, maxCharacters: number, defaultPrice: number, note?: string): ModelSpec => ({
  vendor: 'elevenlabs',
  capability: 'speech',
  model,
  unit: '1k_characters',
  defaultPrice,
  maxCharacters,
  ...(note ? { note } : {}),
});

export const elevenLabsModels: readonly ModelSpec[] = [
  speech(
    'eleven_multilingual_v2',
    10_000,
    10,
    'The most stable on long texts; 29 languages; ElevenLabs’ default model.',
  ),
  speech(
    'eleven_v3',
    5_000,
    10,
    'The most expressive; 70+ languages; pace and emotion are set by audio tags in the text.',
  ),
  speech('eleven_flash_v2_5', 40_000, 5, 'The fastest; 32 languages.'),
  speech('eleven_flash_v2', 30_000, 5, 'English only.'),
  speech(
    'eleven_turbo_v2_5',
    40_000,
    5,
    'ElevenLabs recommends eleven_flash_v2_5, the same model with a lower latency, in all cases.',
  ),
  speech('eleven_turbo_v2', 30_000, 5, 'English only; ElevenLabs recommends eleven_flash_v2 in all cases.'),
];

/**
 * Characters as ElevenLabs counts them, we take it: code points (an emoji is one, not two UTF-16 units), as
 * Python's len() counts on its servers (uvicorn answers, elevenlabs-docs#1317); not stated by ElevenLabs.
 */
export const characterCount = (text: string) => [...text].length;
