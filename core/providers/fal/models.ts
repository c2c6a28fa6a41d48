// The fal models the platform knows, from fal's own pages: the inputs each
// takes (fal-ai/fal-js libs/client/src/types/endpoints.ts, generated from
// fal's schemas; fal.ai/models/<id>/llms.txt) and what fal bills for them
// (the same pages' "Pricing"). Prices are in credits, 1 credit ≈ $0.01, at
// fal's list price without margin: an operator sets the real ones.
import type { ModelSpec } from '../models.ts';

/**
 * FLUX's named sizes and the pixels each means (docs.fal.ai/documentation/
 * model-apis/model-arguments, "image_size"); any other size is sent as
 * `{width, height}`.
 */
export const imageSizePresets: Record<string, string> = {
  '1024x1024': 'square_hd',
  '512x512': 'square',
  '768x1024': 'portrait_4_3',
  '576x1024': 'portrait_16_9',
  '1024x768': 'landscape_4_3',
  '1024x576': 'landscape_16_9',
};

/** A frame a video model makes, and the inputs that ask for it. */
export type VideoFrame = { size: string; aspectRatio: string; resolution?: string | undefined };

export const kling = 'fal-ai/kling-video/v2.5-turbo/pro/text-to-video';
export const seedance = 'fal-ai/bytedance/seedance/v1/pro/fast/text-to-video';

/**
 * Kling takes an aspect ratio only (16:9, 9:16, 1:1) and renders 1080p; the
 * pixels of each frame are not on fal's page (a guess from Kling's 1080p).
 * Seedance takes an aspect ratio and a resolution; its frames are ByteDance's
 * (480p and 1080p from Runware's Seedance 1.0 table, 720p from BytePlus's).
 */
export const videoFrames: Record<string, readonly VideoFrame[]> = {
  [kling]: [
    { size: '1920x1080', aspectRatio: '16:9' },
    { size: '1080x1920', aspectRatio: '9:16' },
    { size: '1080x1080', aspectRatio: '1:1' },
  ],
  [seedance]: [
    ...frames('480p', {
      '16:9': '864x480',
      '4:3': '736x544',
      '1:1': '640x640',
      '3:4': '544x736',
      '9:16': '480x864',
      '21:9': '960x416',
    }),
    ...frames('720p', {
      '16:9': '1248x704',
      '4:3': '1120x832',
      '1:1': '960x960',
      '3:4': '832x1120',
      '9:16': '704x1248',
      '21:9': '1504x640',
    }),
    ...frames('1080p', {
      '16:9': '1920x1088',
      '4:3': '1664x1248',
      '1:1': '1440x1440',
      '3:4': '1248x1664',
      '9:16': '1088x1920',
      '21:9': '2176x928',
    }),
  ],
};

function frames(resolution: string, sizes: Record<string, string>): VideoFrame[] {
  return Object.entries(sizes).map(([aspectRatio, size]) => ({ size, aspectRatio, resolution }));
}

// fal takes any {width, height} for FLUX (its ImageSize type has no bounds).
// We ask for multiples of 16 (FLUX works in 16-pixel patches, so the picture
// comes back the size asked for) and at most 1024 a side, so that one picture
// stays within the one megapixel fal bills as one unit; the six presets fit.
const fluxSizes = {
  multipleOf: 16,
  minRatio: 9 / 16,
  maxRatio: 16 / 9,
  maxWidth: 1024,
  maxHeight: 1024,
  minPixels: 256 * 256,
};

export const falModels: readonly ModelSpec[] = [
  {
    vendor: 'fal',
    capability: 'image',
    model: 'fal-ai/flux/schnell',
    unit: 'item',
    // $0.003 a megapixel, rounded up per picture (fal.ai/models/fal-ai/flux/schnell pricing).
    defaultPrice: 0.3,
    sizes: fluxSizes,
    // num_images 1–4 (fal's model page; fal-js types give no bound).
    maxCount: 4,
    note: 'FLUX.1 [schnell]: 1–4 steps, fast. Makes JPEG or PNG (WebP is asked as PNG).',
  },
  {
    vendor: 'fal',
    capability: 'image',
    model: 'fal-ai/flux/dev',
    unit: 'item',
    // $0.025 a megapixel (fal.ai/models/fal-ai/flux/dev pricing).
    defaultPrice: 2.5,
    sizes: fluxSizes,
    maxCount: 4,
    note: 'FLUX.1 [dev]: 28 steps by default. Makes JPEG or PNG (WebP is asked as PNG).',
  },
  {
    vendor: 'fal',
    capability: 'video',
    model: kling,
    unit: 'second',
    // $0.35 for 5 s, $0.07 each further second (fal.ai/models/fal-ai/kling-video/v2.5-turbo/pro pricing).
    defaultPrice: 7,
    sizes: { list: videoFrames[kling]!.map((frame) => frame.size) },
    // duration "5" | "10", strings (fal-js KlingVideoV15ProTextToVideoInput).
    seconds: [5, 10],
    note: 'Kling 2.5 Turbo Pro, text to video; no first frame.',
  },
  {
    vendor: 'fal',
    capability: 'video',
    model: seedance,
    unit: 'second',
    // "Each 1080p 5 second video costs roughly $0.245" (its llms.txt); 480p and 720p cost fal less.
    defaultPrice: 5,
    sizes: { list: videoFrames[seedance]!.map((frame) => frame.size) },
    // duration "2" … "12", strings (fal-js SeedanceProTextToVideoInput).
    seconds: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    note: 'Seedance 1.0 Pro Fast, text to video, 480p to 1080p; priced at the 1080p rate; no first frame.',
  },
];

/** The catalog entry of a model, when the catalog knows it. */
export const falModel = (model: string) => falModels.find((spec) => spec.model === model);
