// Media delivered without a token: only ready items of sites their
// administrators made public, of tenants in good standing. Everything else —
// a private site, an unknown one, an item still processing or failed — is the
// same 404, so the endpoints say nothing about what is not public.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { resolveSite } from '../tenancy/sites.ts';
import { fileOf, strippedVariant, type MediaFile, type ViewQuery } from './files.ts';
import { mediaColumns, mediaItem, type MediaItem } from './items.ts';

export const publicMediaItem = mediaItem
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

export async function findPublicMedia(db: CommonQueryMethods, identifier: string, id: string): Promise<MediaItem> {
  const site = await resolveSite(db, identifier);
  const item =
    site?.visibility === 'public'
      ? await db.maybeOne(sql.type(mediaItem)`
          select ${mediaColumns} from media_items
          where id = ${id} and site_id = ${site.id} and status = 'ready'
            and exists (select 1 from tenants where tenants.id = ${site.tenant_id} and tenants.status = 'active')`)
      : null;
  if (!item) throw notFound('No such public media item.');
  return item;
}

/** The file of a public item; its original, when that tells where it was taken, only without its metadata. */
export async function publicMediaFile(
  db: CommonQueryMethods,
  identifier: string,
  id: string,
  query: ViewQuery,
): Promise<MediaFile> {
  const item = await findPublicMedia(db, identifier, id);
  const original = !query.variant && !query.width && !query.format;
  const stripped = item.variants.some((variant) => variant.name === strippedVariant);
  return fileOf(db, item, original && stripped ? { variant: strippedVariant } : query);
}

/** Only what the public schema names leaves the service. */
export const toPublic = (item: MediaItem) => publicMediaItem.parse(item);

export type PublicMediaItem = z.infer<typeof publicMediaItem>;
