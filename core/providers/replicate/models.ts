// The Replicate models the platform knows, from each model's own input
// schema: which sizes it makes (a model takes an aspect ratio, not pixels, so
// the sizes are the pixels each of its aspect ratios makes), how many images
// or seconds, and how Replicate bills it. Prices are in credits at 1 credit ≈
// US$0.01, Replicate's list price passed through (an operator adds a margin
// with a global price). The tables here are what images.ts and video.ts turn
// a width × height into, so a size listed is a size the adapter can ask for.
import type { ModelSpec } from '../models.ts';

export const vendor = 'replicate';

export type AspectPixels = Readonly<Record<string, readonly [width: number, height: number]>>;

/**
 * black-forest-labs/flux-schnell and flux-dev: the pixels of each
 * `aspect_ratio` at `megapixels: "1"` (replicate/cog-flux predict.py
 * ASPECT_RATIOS @51e81e0); `megapixels: "0.25"` halves both sides
 * (Predictor.size_from_aspect_megapixels).
 */
export const fluxAspectRatios: AspectPixels = {
  '1:1': [1024, 1024],
  '16:9': [1344, 768],
  '21:9': [1536, 640],
  '3:2': [1216, 832],
  '2:3': [832, 1216],
  '4:5': [896, 1088],
  '5:4': [1088, 896],
  '3:4': [896, 1152],
  '4:3': [1152, 896],
  '9:16': [768, 1344],
  '9:21': [640, 1536],
};

export type FluxSize = { aspect_ratio: string; megapixels: '1' | '0.25' };

/** Each size flux makes, as the input that makes it. */
export const fluxSizes: ReadonlyMap<string, FluxSize> = new Map(
  Object.entries(fluxAspectRatios).flatMap(([ratio, [width, height]]): [string, FluxSize][] => [
    [`${width}x${height}`, { aspect_ratio: ratio, megapixels: '1' }],
    [`${width / 2}x${height / 2}`, { aspect_ratio: ratio, megapixels: '0.25' }],
  ]),
);

/**
 * bytedance/seedance-1-pro-fast at `resolution: "720p"`: the pixels of each
 * `aspect_ratio` (its enum: Replicate's model schema). Replicate publishes no
 * pixel table; these are ByteDance's Seedance 1.0 frame sizes as other
 * gateways list them (Leonardo's Seedance docs: 1248x704 at 720p 16:9), so a
 * video may come back a few pixels off the size asked, which the platform's
 * encoder scales anyway. Only 720p is offered: Replicate bills 480p, 720p and
 * 1080p at different prices per second, and a model has one price here.
 */
export const seedanceAspectRatios: AspectPixels = {
  '16:9': [1248, 704],
  '4:3': [1120, 832],
  '1:1': [960, 960],
  '3:4': [832, 1120],
  '9:16': [704, 1248],
  '21:9': [1504, 640],
  '9:21': [640, 1504],
};

const sizesOf = (table: AspectPixels) => Object.values(table).map(([width, height]) => `${width}x${height}`);

export const replicateModels: readonly ModelSpec[] = [
  {
    vendor,
    capability: 'image',
    model: 'black-forest-labs/flux-schnell',
    unit: 'item',
    // US$0.003 per image (Replicate's model page).
    defaultPrice: 0.3,
    sizes: { list: [...fluxSizes.keys()] },
    // num_outputs: 1–4 (cog-flux Inputs.num_outputs).
    maxCount: 4,
  },
  {
    vendor,
    capability: 'image',
    model: 'black-forest-labs/flux-dev',
    unit: 'item',
    // US$0.025 per image (Replicate's model page).
    defaultPrice: 2.5,
    sizes: { list: [...fluxSizes.keys()] },
    maxCount: 4,
  },
  {
    vendor,
    capability: 'video',
    model: 'bytedance/seedance-1-pro-fast',
    unit: 'second',
    // US$0.025 per second at 720p (Replicate's model page; 480p 0.015, 1080p 0.06).
    defaultPrice: 2.5,
    sizes: { list: sizesOf(seedanceAspectRatios) },
    // duration: an integer from 2 to 12 (the model's schema).
    seconds: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    note: 'Made at 720p. Text to video, or from a first frame.',
  },
  {
    vendor,
    capability: 'speech',
    model: 'minimax/speech-02-hd',
    unit: '1k_characters',
    // US$0.10 per thousand input tokens, a token being a character (the model's page and schema).
    defaultPrice: 10,
    // "Maximum 5000 characters" in earlier versions' schema, 10,000 in later ones: the lower holds for both.
    maxCharacters: 5000,
  },
];

/** The aspect ratio of `table` nearest in shape to width × height (exact when the size is one it lists). */
export function nearestAspectRatio(table: AspectPixels, width: number, height: number): string {
  const wanted = Math.log(width / height);
  let best = '1:1';
  let distance = Number.POSITIVE_INFINITY;
  for (const [ratio, [w, h]] of Object.entries(table)) {
    const d = Math.abs(Math.log(w / h) - wanted);
    if (d < distance) [best, distance] = [ratio, d];
  }
  return best;
}
