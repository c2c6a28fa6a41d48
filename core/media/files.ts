// Which stored file a view serves: the item's own, a variant by name, or the
// responsive size for `?width=&format=` — the smallest variant of that format
// at least that wide, else the widest there is, else (an image smaller than
// every preset) the original.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import type { MediaItem } from './items.ts';

export const presetWidths = [320, 640, 1280, 1920] as const;

/** The variant an image has when its upload gives where it was taken: the same picture without metadata, for the public view. */
export const strippedVariant = 'stripped';
export const presetFormats = ['webp', 'avif'] as const;

/** The name a responsive variant is stored under: w640 (WebP), w640-avif. */
export const presetName = (width: number, format: (typeof presetFormats)[number]) =>
  format === 'webp' ? `w${width}` : `w${width}-${format}`;

export const viewQuery = z
  .object({
    variant: z
      .string()
      .regex(/^[a-z0-9_-]{1,40}$/)
      .optional()
      .describe('A variant listed on the item (w320, w640-avif, poster...)'),
    width: z
      .enum(presetWidths.map(String) as [string, ...string[]])
      .optional()
      .describe('A responsive size: 320, 640, 1280 or 1920'),
    format: z.enum(presetFormats).optional().describe('With width: webp (default) or avif'),
  })
  .refine((query) => !(query.variant && (query.width || query.format)), {
    message: 'give variant, or width and format, not both',
    path: ['variant'],
  });

export type ViewQuery = z.infer<typeof viewQuery>;

export type MediaFile = { item: MediaItem; storageKey: string; mimeType: string; variant?: string | undefined };

function chosenVariant(item: MediaItem, query: ViewQuery): string | undefined {
  if (query.variant) return query.variant;
  if (!query.width && !query.format) return undefined;
  const format = query.format ?? 'webp';
  const wanted = Number(query.width ?? presetWidths.at(-1));
  const sizes = presetWidths.filter((width) =>
    item.variants.some((variant) => variant.name === presetName(width, format)),
  );
  const width = sizes.find((candidate) => candidate >= wanted) ?? sizes.at(-1);
  return width === undefined ? undefined : presetName(width, format);
}

export async function fileOf(db: CommonQueryMethods, item: MediaItem, query: ViewQuery): Promise<MediaFile> {
  const variant = chosenVariant(item, query);
  const row = z.object({ storage_key: z.string(), mime_type: z.string() });
  const file = variant
    ? await db.maybeOne(sql.type(row)`
        select v->>'key' as storage_key, v->>'mime_type' as mime_type
        from media_items, jsonb_array_elements(media_items.variants) as v where media_items.id = ${item.id} and v->>'name' = ${variant}`)
    : await db.maybeOne(sql.type(row)`select storage_key, mime_type from media_items where id = ${item.id}`);
  if (!file)
    throw notFound(
      variant
        ? `This media item has no variant ${variant}; its variants are listed on the item.`
        : 'No such media item.',
    );
  return { item, storageKey: file.storage_key, mimeType: file.mime_type, variant };
}
