// Media delivered without a token: only ready items of sites their
// administrators made public, of tenants in good standing. Everything else —
// a private site, an unknown one, an item still processing or failed — is the
// same 404, so the endpoints say nothing about what is not public.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { notPublic } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { fileOf, strippedVariant, type MediaFile, type ViewQuery } from './files.ts';
import { mediaById } from './library.ts';
import { mediaItemSchema, type MediaItem } from './items.ts';

export const publicMediaItemSchema = mediaItemSchema
  .pick({
    id: true,
    kind: true,
    mime_type: true,
    size_bytes: true,
    width: true,
    height: true,
    duration_seconds: true,
    alt: true,
    title: true,
    caption: true,
    tags: true,
    focal_point: true,
    dominant_color: true,
    blurhash: true,
    variants: true,
    version: true,
    updated_at: true,
  })
  .meta({ id: 'PublicMediaItem' });

/** A ready item of the site, which the request path found public (and its tenant in good standing). */
export async function findPublicMedia(db: CommonQueryMethods, site: Site, id: string): Promise<MediaItem> {
  // The site and the status are checked here (see mediaById).
  const item = await mediaById(db, id);
  if (!item || item.site_id !== site.id || item.status !== 'ready') throw notPublic();
  return item;
}

/** The file of a public item; its original, when that tells where it was taken, only without its metadata. */
export async function publicMediaFile(
  db: CommonQueryMethods,
  site: Site,
  id: string,
  query: ViewQuery,
): Promise<MediaFile> {
  const item = await findPublicMedia(db, site, id);
  const original = !query.variant && !query.width && !query.format;
  const stripped = item.variants.some((variant) => variant.name === strippedVariant);
  return fileOf(db, item, original && stripped ? { variant: strippedVariant } : query);
}

/** Only what the public schema names leaves the service. */
export const toPublic = (item: MediaItem) => publicMediaItemSchema.parse(item);

export type PublicMediaItem = z.infer<typeof publicMediaItemSchema>;
