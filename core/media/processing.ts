// An uploaded item's processing (worker/jobs/media_process.ts): the file it
// reads, then what it found written into the item, which marks it ready — or
// the item marked failed, with the reason its owner reads.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { mediaKinds, type StoredVariant } from './items.ts';

const toProcessSchema = z.object({ storage_key: z.string(), kind: z.enum(mediaKinds) });

/** Where the item's file is and what kind it is; null when it was deleted since the upload. */
export async function mediaToProcess(
  db: CommonQueryMethods,
  siteId: string,
  id: string,
): Promise<z.infer<typeof toProcessSchema> | null> {
  return db.maybeOne(
    sql.type(toProcessSchema)`select storage_key, kind from media_items where id = ${id} and site_id = ${siteId}`,
  );
}

/** What processing found in the file; what a kind has no use for stays unset. */
export type ProcessedMedia = {
  width?: number | null;
  height?: number | null;
  duration_seconds?: number | null;
  dominant_color?: string | null;
  blurhash?: string | null;
  exif?: Record<string, unknown> | null;
  variants: StoredVariant[];
};

/** Writes every field, so a rerun replaces what an earlier run found. */
export async function markProcessed(db: CommonQueryMethods, id: string, found: ProcessedMedia): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update media_items set status = 'ready', processing_error = null, width = ${found.width ?? null}, height = ${found.height ?? null},
           duration_seconds = ${found.duration_seconds ?? null}, dominant_color = ${found.dominant_color ?? null},
           blurhash = ${found.blurhash ?? null}, exif = ${found.exif ? sql.jsonb(found.exif as never) : null},
           variants = ${sql.jsonb(found.variants as never)}
    where id = ${id}`);
}

export async function markProcessingFailed(db: CommonQueryMethods, id: string, reason: string): Promise<void> {
  await db.query(
    sql.typeAlias('void')`update media_items set status = 'failed', processing_error = ${reason} where id = ${id}`,
  );
}
