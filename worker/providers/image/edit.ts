// Editing an image by instruction. Locally only what can be done honestly:
// background removal by colour threshold (or by a mask), upscaling, and style
// filters, chosen by keywords in the instruction; anything else fails and says
// what the local editor can do. A vendor named in IMAGE_EDIT_PROVIDERS follows
// any instruction (core/providers/<vendor>/).
import sharp from 'sharp';
import type { Config } from '../../../core/config.ts';
import { permanent } from '../../../core/jobs/errors.ts';

type Limits = { limitInputPixels: number; failOn: 'error' };

/** Pixels close to the corner's colour become transparent; with a mask, its lightness is the alpha. */
async function removeBackground(input: Buffer, mask: Buffer | null, limits: Limits): Promise<Buffer> {
  const { data, info } = await sharp(input, limits).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (mask) {
    const alpha = await sharp(mask, limits)
      .resize(info.width, info.height, { fit: 'fill' })
      .greyscale()
      .raw()
      .toBuffer();
    for (let pixel = 0; pixel < info.width * info.height; pixel++) data[pixel * 4 + 3] = alpha[pixel]!;
  } else {
    const [r, g, b] = [data[0]!, data[1]!, data[2]!];
    for (let at = 0; at < data.length; at += 4) {
      const distance = Math.abs(data[at]! - r) + Math.abs(data[at + 1]! - g) + Math.abs(data[at + 2]! - b);
      if (distance < 60) data[at + 3] = 0;
    }
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
    .png()
    .toBuffer();
}

const localEdits: {
  name: string;
  match: RegExp;
  apply: (input: Buffer, instruction: string, mask: Buffer | null, limits: Limits) => Promise<Buffer>;
}[] = [
  {
    name: 'remove the background',
    match: /background/i,
    apply: (input, _i, mask, limits) => removeBackground(input, mask, limits),
  },
  {
    name: 'upscale (2x, 3x or 4x)',
    match: /upscale|enlarge|higher resolution/i,
    apply: async (input, instruction, _m, limits) => {
      const factor = Math.min(4, Math.max(2, Number(/([2-4])\s*x/i.exec(instruction)?.[1] ?? 2)));
      const meta = await sharp(input, limits).metadata();
      if ((meta.width ?? 0) * (meta.height ?? 0) * factor * factor > limits.limitInputPixels) {
        throw permanent(
          'image_too_large',
          `Upscaled ${factor}x the image would exceed MEDIA_MAX_PIXELS (${limits.limitInputPixels}).`,
        );
      }
      return sharp(input, limits)
        .resize({ width: (meta.width ?? 1) * factor, kernel: 'lanczos3' })
        .png()
        .toBuffer();
    },
  },
  {
    name: 'black and white',
    match: /gr[ae]yscale|black and white|monochrome/i,
    apply: (input, _i, _m, limits) => sharp(input, limits).greyscale().png().toBuffer(),
  },
  {
    name: 'sepia',
    match: /sepia|vintage/i,
    apply: (input, _i, _m, limits) =>
      sharp(input, limits)
        .recomb([
          [0.393, 0.769, 0.189],
          [0.349, 0.686, 0.168],
          [0.272, 0.534, 0.131],
        ])
        .png()
        .toBuffer(),
  },
  {
    name: 'blur',
    match: /blur|soften/i,
    apply: (input, _i, _m, limits) => sharp(input, limits).blur(4).png().toBuffer(),
  },
  {
    name: 'sharpen',
    match: /sharpen/i,
    apply: (input, _i, _m, limits) => sharp(input, limits).sharpen({ sigma: 1.5 }).png().toBuffer(),
  },
  {
    name: 'invert',
    match: /invert|negative/i,
    apply: (input, _i, _m, limits) => sharp(input, limits).negate({ alpha: false }).png().toBuffer(),
  },
];

export async function editLocally(
  config: Config,
  input: Buffer,
  instruction: string,
  mask: Buffer | null,
): Promise<{ output: Buffer; applied: string[] }> {
  const limits: Limits = { limitInputPixels: config.media.maxPixels, failOn: 'error' };
  const chosen = localEdits.filter((edit) => edit.match.test(instruction));
  if (chosen.length === 0) {
    throw permanent(
      'unsupported_instruction',
      `The local editor can: ${localEdits.map((edit) => edit.name).join(', ')}. For other edits name a vendor in IMAGE_EDIT_PROVIDERS.`,
    );
  }
  let output = input;
  for (const edit of chosen) output = await edit.apply(output, instruction, mask, limits);
  return { output, applied: chosen.map((edit) => edit.name) };
}

/**
 * Our mask (the lightness kept: white is kept, black is edited) as the
 * vendors' (OpenAI's convention: transparent pixels are edited): a PNG whose
 * alpha is the mask's lightness.
 */
export async function transparentWhereDark(mask: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(mask).greyscale().raw().toBuffer({ resolveWithObject: true });
  const rgba = Buffer.alloc(info.width * info.height * 4);
  for (let pixel = 0; pixel < info.width * info.height; pixel++) rgba[pixel * 4 + 3] = data[pixel * info.channels]!;
  return sharp(rgba, { raw: { width: info.width, height: info.height, channels: 4 } })
    .png()
    .toBuffer();
}
