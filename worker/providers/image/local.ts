// Images made on this machine, deterministically: a seeded pseudo-random
// composition (a gradient and shapes whose colours and places follow from the
// prompt, the seed and the image's index) drawn as SVG and rendered by sharp.
// It is honest about what it is: an abstract placeholder, not a picture of
// the prompt.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { ImageRequest } from '../../../core/media/generation.ts';
import { dimensions } from '../../../core/media/generation.ts';

/** What the drawing follows: the prompt, seed and image's index pick its colours and shapes. */
type Drawing = Pick<ImageRequest, 'prompt' | 'seed' | 'size' | 'style' | 'format'>;

/** mulberry32: a small, well-known seeded generator; the same seed gives the same sequence. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const palette = { natural: [30, 45], vivid: [80, 60], flat: [55, 55] } as const;

function svg(request: Drawing, index: number): string {
  const { width, height } = dimensions(request.size);
  const digest = createHash('sha256')
    .update(`${request.prompt}\u0000${request.seed ?? 0}\u0000${index}`)
    .digest();
  const random = generator(digest.readUInt32LE(0));
  const [saturation, lightness] = palette[request.style];
  const hue = Math.floor(random() * 360);
  const colour = (shift: number) => `hsl(${(hue + shift) % 360} ${saturation}% ${lightness}%)`;
  const shapes = Array.from({ length: 6 + Math.floor(random() * 6) }, (_, i) => {
    const x = Math.round(random() * width);
    const y = Math.round(random() * height);
    const size = Math.round((0.08 + random() * 0.25) * Math.min(width, height));
    const fill = colour(30 + i * 40);
    const opacity = request.style === 'flat' ? 1 : 0.55 + random() * 0.4;
    return random() < 0.5
      ? `<circle cx="${x}" cy="${y}" r="${size}" fill="${fill}" fill-opacity="${opacity.toFixed(2)}"/>`
      : `<rect x="${x - size}" y="${y - size}" width="${size * 2}" height="${Math.round(size * 1.4)}" rx="${request.style === 'flat' ? 0 : 12}" fill="${fill}" fill-opacity="${opacity.toFixed(2)}"/>`;
  });
  const background =
    request.style === 'flat'
      ? `<rect width="100%" height="100%" fill="${colour(180)}"/>`
      : `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${colour(0)}"/><stop offset="1" stop-color="${colour(200)}"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${background}${shapes.join('')}</svg>`;
}

export async function renderLocal(request: Drawing, index: number): Promise<Buffer> {
  return sharp(Buffer.from(svg(request, index)))
    .toFormat(request.format)
    .toBuffer();
}
