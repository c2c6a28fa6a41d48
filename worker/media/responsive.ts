// What processing derives from an image's pixels: responsive widths in WebP
// and AVIF, its dominant colour and a blurhash. The image is decoded once, at
// the largest width needed (shrink-on-load), and each smaller width is
// resized from the one above it.
import { encode } from 'blurhash';
import sharp, { type OutputInfo, type Sharp, type SharpOptions } from 'sharp';
import { presetName, presetWidths, strippedVariant } from '../../core/media/files.ts';
import type { StoredVariant } from '../../core/media/items.ts';
import type { Storage } from '../../core/storage/storage.ts';

const hex = (value: number) => value.toString(16).padStart(2, '0');

// AVIF at effort 0 encodes about as fast as WebP and still smaller; higher
// efforts cost seconds per large image for a few per cent.
const encoders = [
  { format: 'webp', mimeType: 'image/webp', encode: (image: Sharp) => image.webp({ quality: 80 }) },
  { format: 'avif', mimeType: 'image/avif', encode: (image: Sharp) => image.avif({ quality: 50, effort: 0 }) },
] as const;

export type Derived = { variants: StoredVariant[]; dominantColor: string; blurhash: string };

export async function deriveImages(
  file: string,
  key: string,
  width: number,
  limits: SharpOptions,
  storage: Storage,
): Promise<Derived> {
  const widths = presetWidths.filter((candidate) => candidate < width).reverse();
  const variants: StoredVariant[] = [];
  let source: { data: Buffer; info: OutputInfo } | undefined;
  for (const target of widths) {
    const input = source ? sharp(source.data, { raw: source.info }) : sharp(file, limits).autoOrient();
    source = await input.resize({ width: target }).raw().toBuffer({ resolveWithObject: true });
    for (const encoder of encoders) {
      const data = await encoder.encode(sharp(source.data, { raw: source.info })).toBuffer();
      const name = presetName(target, encoder.format);
      const variantKey = `${key}.${name}.${encoder.format}`;
      await storage.put(variantKey, data, encoder.mimeType);
      variants.push({
        name,
        key: variantKey,
        mime_type: encoder.mimeType,
        width: source.info.width,
        height: source.info.height,
        size_bytes: data.length,
      });
    }
  }
  // Colour and placeholder from the smallest version: the image's, at a fraction of the cost.
  const smallest = () => (source ? sharp(source.data, { raw: source.info }) : sharp(file, limits).autoOrient());
  const { dominant } = await smallest().stats();
  const thumb = await smallest()
    .resize(32, 32, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const blurhash = encode(new Uint8ClampedArray(thumb.data), thumb.info.width, thumb.info.height, 4, 3);
  // WebP variants first, in the order of their widths: how they were listed before AVIF came.
  variants.sort((a, b) => a.mime_type.localeCompare(b.mime_type) * -1 || (a.width ?? 0) - (b.width ?? 0));
  return { variants, dominantColor: `#${hex(dominant.r)}${hex(dominant.g)}${hex(dominant.b)}`, blurhash };
}

/**
 * The original again without its metadata (sharp writes none unless asked):
 * the public view serves it instead of the upload, whose EXIF tells where the
 * photo was taken. Encoded once more, in the upload's own format.
 */
export async function withoutMetadata(
  file: string,
  key: string,
  format: string | undefined,
  limits: SharpOptions,
  storage: Storage,
): Promise<StoredVariant> {
  const target =
    format === 'heif'
      ? 'avif'
      : format === 'png' || format === 'webp' || format === 'gif' || format === 'avif'
        ? format
        : 'jpeg';
  const { data, info } = await sharp(file, limits)
    .autoOrient()
    .toFormat(target, target === 'jpeg' ? { quality: 90 } : {})
    .toBuffer({ resolveWithObject: true });
  const variantKey = `${key}.stripped.${target}`;
  await storage.put(variantKey, data, `image/${target}`);
  return {
    name: strippedVariant,
    key: variantKey,
    mime_type: `image/${target}`,
    width: info.width,
    height: info.height,
    size_bytes: data.length,
  };
}
