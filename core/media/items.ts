// Media items: the files the platform holds for a site. Jobs create them when
// they finish (in the transaction that settles the job); the media library
// reads and edits them.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { unusedKeys } from './shared-files.ts';

export const mediaKinds = ['image', 'video', 'audio', 'document'] as const;

export const mediaItemSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    folder_id: z.uuid().nullable(),
    kind: z.enum(mediaKinds),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    duration_seconds: z.number().nullable(),
    status: z.enum(['processing', 'ready', 'failed']),
    file_name: z.string(),
    alt: z.string(),
    title: z.string(),
    caption: z.string(),
    tags: z.array(z.string()),
    focal_point: z
      .object({ x: z.number(), y: z.number() })
      .nullable()
      .describe('The subject, 0–1 from the left and the top'),
    dominant_color: z.string().nullable().describe('#rrggbb, for images once processed'),
    blurhash: z
      .string()
      .nullable()
      .describe('A blurred placeholder of an image (blurha.sh), for showing before it loads'),
    exif: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('Camera, lens, exposure and date from an image’s EXIF; never its GPS position'),
    variants: z
      .array(
        z.object({
          name: z.string(),
          mime_type: z.string(),
          width: z.number().int().nullable(),
          height: z.number().int().nullable(),
          size_bytes: z.number().int(),
        }),
      )
      .describe('Responsive sizes of an image, a video’s poster: fetch one with view?variant=name'),
    processing_error: z.string().nullable().describe('Why processing failed (status failed)'),
    version: z.number().int().describe('Raised by each saved edit; earlier versions are listed by image-versions'),
    job_id: z.uuid().nullable(),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  // Answers give it with the file's URL: MediaItem in the document is ./urls.ts mediaItemResponseSchema.
  .describe('A media item as stored');

export type MediaItem = z.infer<typeof mediaItemSchema>;

/**
 * The columns of a media item as answers give it. Variants are stored with
 * their storage key; the row schema's variant object has no `key`, so
 * validating the row drops it (cheaper here than a subquery per row there).
 */
export const mediaColumns = sql.fragment`
  media_items.id, media_items.site_id, media_items.folder_id, media_items.kind, media_items.mime_type, media_items.size_bytes,
  media_items.width, media_items.height, media_items.duration_seconds, media_items.status, media_items.file_name, media_items.alt,
  media_items.title, media_items.caption, media_items.tags, media_items.focal_point, media_items.dominant_color, media_items.blurhash, media_items.exif,
  media_items.variants,
  media_items.processing_error, media_items.version, media_items.job_id, media_items.created_by, media_items.created_at, media_items.updated_at`;

/** A variant as stored: the key stays inside (answers strip it). */
export type StoredVariant = {
  name: string;
  key: string;
  mime_type: string;
  width: number | null;
  height: number | null;
  size_bytes: number;
};

/** A file already in storage, to be recorded as a media item. */
export type MediaDraft = {
  kind: (typeof mediaKinds)[number];
  mimeType: string;
  sizeBytes: number;
  storageKey: string;
  fileName: string;
  durationSeconds?: number | null;
  width?: number | null;
  height?: number | null;
  title?: string;
  folderId?: string | null;
  alt?: string;
  caption?: string;
  tags?: string[];
  /** processing: a job still reads its metadata and makes its variants. */
  status?: 'processing' | 'ready';
  variants?: StoredVariant[];
};

export type MediaOwner = { tenantId: string; siteId: string; jobId: string | null; createdBy: string | null };

export async function insertMedia(db: CommonQueryMethods, owner: MediaOwner, draft: MediaDraft): Promise<MediaItem> {
  return db.one(sql.type(mediaItemSchema)`
    insert into media_items (tenant_id, site_id, kind, mime_type, size_bytes, duration_seconds, width, height, status,
                             storage_key, file_name, title, folder_id, alt, caption, tags, variants, job_id, created_by)
    values (${owner.tenantId}, ${owner.siteId}, ${draft.kind}, ${draft.mimeType}, ${draft.sizeBytes}, ${draft.durationSeconds ?? null},
            ${draft.width ?? null}, ${draft.height ?? null}, ${draft.status ?? 'ready'}, ${draft.storageKey}, ${draft.fileName}, ${draft.title ?? ''},
            ${draft.folderId ?? null}, ${draft.alt ?? ''}, ${draft.caption ?? ''}, ${sql.array(draft.tags ?? [], 'text')},
            ${sql.jsonb((draft.variants ?? []) as never)}, ${owner.jobId}, ${owner.createdBy})
    returning ${mediaColumns}`);
}

/** Where an image of the site is stored, or null when it is gone (or not an image). */
export async function imageKey(db: CommonQueryMethods, siteId: string, id: string): Promise<string | null> {
  return db.maybeOneFirst(
    sql.type(
      z.object({ storage_key: z.string() }),
    )`select storage_key from media_items where id = ${id} and site_id = ${siteId} and kind = 'image'`,
  );
}

/** The folder a job was asked to file into, or null when it was deleted since the submit (the item then goes to the top level). */
export async function folderStillThere(
  db: CommonQueryMethods,
  siteId: string,
  folderId: string | undefined,
): Promise<string | null> {
  if (!folderId) return null;
  return db.maybeOneFirst(
    sql.type(z.object({ id: z.string() }))`select id from media_folders where id = ${folderId} and site_id = ${siteId}`,
  );
}

/**
 * Deletes the items matched by `where` and answers the storage keys they
 * held (the file, its variants and earlier versions) that no other item still
 * names (a clone's copy shares them: ./shared-files.ts), for removal once the
 * transaction commits.
 */
export async function deleteMediaRows(
  db: CommonQueryMethods,
  where: ReturnType<typeof sql.fragment>,
): Promise<string[]> {
  const rows = await db.any(sql.type(z.object({ keys: z.array(z.string()) }))`
    delete from media_items where ${where}
    returning array_prepend(storage_key, array(select v->>'key' from jsonb_array_elements(variants) as v)
                                      || array(select mv.storage_key from media_versions mv where mv.media_id = media_items.id)) as keys`);
  return unusedKeys(
    db,
    rows.flatMap((row) => row.keys),
  );
}
