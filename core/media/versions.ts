// Editing images: who may (and why not), the versions an item has had, and
// saving an edit as a new version — from an uploaded file or from a list of
// operations applied with sharp, in the order given. The replaced file stays
// as a version; the item's variants are made again by the processing job.
import { randomUUID } from 'node:crypto';
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { atLeastOneOf } from '../field-rules.ts';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { checkStorageQuota } from '../billing/storage.ts';
import type { Config } from '../config.ts';
import { readBalance } from '../credits/accounts.ts';
import { priceOf } from '../credits/prices.ts';
import { Problem } from '../errors.ts';
import { insertJob } from '../jobs/submit.ts';
import type { Deps } from '../services.ts';
import { removeFiles } from '../storage/index.ts';
import { unusedKeys } from './shared-files.ts';
import type { Storage } from '../storage/storage.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { changeRefusal } from './access.ts';
import { findMedia, forChange, getMedia } from './library.ts';
import { mediaColumns, mediaItemSchema, type MediaItem } from './items.ts';

const whole = z.number().int();

export const operation = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('crop'),
    left: whole.min(0),
    top: whole.min(0),
    width: whole.min(1),
    height: whole.min(1),
  }),
  z.strictObject({
    op: z.literal('rotate'),
    angle: z
      .number()
      .min(-360)
      .max(360)
      .describe('Degrees clockwise; other than a right angle, the corners are filled white'),
  }),
  z
    .strictObject({
      op: z.literal('resize'),
      width: whole.min(1).max(10_000).optional(),
      height: whole.min(1).max(10_000).optional(),
      fit: z.enum(['cover', 'contain', 'fill', 'inside', 'outside']).default('inside'),
    })
    .refine((resize) => resize.width !== undefined || resize.height !== undefined, 'Give width, height or both.')
    .meta(atLeastOneOf('width', 'height')),
  z.strictObject({ op: z.literal('flip'), direction: z.enum(['horizontal', 'vertical']) }),
  z
    .strictObject({
      op: z.literal('adjust'),
      brightness: z.number().min(0).max(3).optional(),
      saturation: z.number().min(0).max(3).optional(),
      hue: z.number().int().min(-360).max(360).optional(),
    })
    .refine(
      (adjust) => adjust.brightness !== undefined || adjust.saturation !== undefined || adjust.hue !== undefined,
      'Give brightness, saturation or hue.',
    )
    .meta(atLeastOneOf('brightness', 'saturation', 'hue')),
]);

export type Operation = z.infer<typeof operation>;

export const editOperations = z.strictObject({ operations: z.array(operation).min(1).max(20) });

export const editorAccessSchema = z
  .object({
    allowed: z.boolean(),
    reason: z
      .enum(['allowed', 'not_an_image', 'still_processing', 'not_yours', 'missing_scope'])
      .describe('Why editing is or is not allowed'),
    role: z.string().describe('Your role on the site: admin, editor, author or service'),
    ai_edit: z
      .object({ price: z.number().int(), available: z.number().int(), affordable: z.boolean() })
      .describe('What an AI edit of this image costs you, and whether you can pay it'),
  })
  .meta({ id: 'ImageEditorAccess' });

/** Whether the caller may edit the item, and why; a 404 only when the item is not theirs to see. */
export async function imageEditorAccess(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
): Promise<z.infer<typeof editorAccessSchema>> {
  const { actor, site } = access;
  const item = await findMedia(db, site.id, id);
  const { cost } = await priceOf(db, item.site_id, 'image_edit', 1);
  const account =
    actor.kind === 'user'
      ? await db.maybeOneFirst(
          sql.type(
            z.object({ id: z.string() }),
          )`select id from credit_accounts where site_id = ${item.site_id} and user_id = ${actor.userId}`,
        )
      : await db.maybeOneFirst(
          sql.type(
            z.object({ id: z.string() }),
          )`select id from credit_accounts where tenant_id = ${site.tenant_id} and site_id is null`,
        );
  const { available } = await readBalance(db, account);
  const refusal = changeRefusal(access, item.created_by);
  const reason =
    item.kind !== 'image'
      ? 'not_an_image'
      : (refusal ?? (item.status === 'processing' ? 'still_processing' : 'allowed'));
  return {
    allowed: reason === 'allowed',
    reason,
    role: access.role,
    ai_edit: { price: cost, available, affordable: available >= cost },
  };
}

const versionedItemRow = z.object({
  storage_key: z.string(),
  kind: z.string(),
  version: z.number(),
  version_job_id: z.string().nullable(),
});

/** An item as an edit job sees it: its file, its version, and the job that made that version (a rerun finds its own). */
export async function versionedItem(db: CommonQueryMethods, siteId: string, id: string) {
  return db.maybeOne(sql.type(versionedItemRow)`
    select storage_key, kind, version, version_job_id from media_items where id = ${id} and site_id = ${siteId}`);
}

export const mediaVersionSchema = z
  .object({
    version: z.number().int(),
    current: z.boolean(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    replaced_at: timestamp.nullable(),
  })
  .meta({ id: 'MediaVersion' });

/** Newest first: the current file, then the ones it replaced. */
export async function listVersions(db: CommonQueryMethods, access: SiteAccess, id: string) {
  const item = await getMedia(db, access, id);
  const rows = await db.any(sql.type(mediaVersionSchema)`
    select version, true as current, mime_type, size_bytes, width, height, coalesce(version_created_by, created_by) as created_by,
           version_created_at as created_at, null as replaced_at
    from media_items where id = ${item.id}
    union all
    select version, false, mime_type, size_bytes, width, height, created_by, created_at, replaced_at
    from media_versions where media_id = ${item.id}
    order by version desc`);
  return { items: [...rows] };
}

type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';

const outputFormats = new Map<string, OutputFormat>([
  ['image/jpeg', 'jpeg'],
  ['image/png', 'png'],
  ['image/webp', 'webp'],
  ['image/avif', 'avif'],
]);

/** Applies the operations one after another (sharp would otherwise reorder them), decoding once. */
export async function applyOperations(
  input: Buffer,
  operations: Operation[],
  format: OutputFormat,
  maxPixels: number,
): Promise<Buffer> {
  // Loaded on first use: most API processes never edit an image, and libvips is large.
  const { default: sharp } = await import('sharp');
  const limits = { limitInputPixels: maxPixels, failOn: 'error' as const };
  let { data, info } = await sharp(input, limits).autoOrient().raw().toBuffer({ resolveWithObject: true });
  for (const step of operations) {
    let image: Sharp = sharp(data, {
      ...limits,
      raw: { width: info.width, height: info.height, channels: info.channels },
    });
    if (step.op === 'crop') {
      if (step.left + step.width > info.width || step.top + step.height > info.height) {
        throw new Problem(422, `The crop falls outside the ${info.width}×${info.height} image.`, {
          errors: [{ path: 'body.operations', message: 'crop outside the image' }],
        });
      }
      image = image.extract({ left: step.left, top: step.top, width: step.width, height: step.height });
    } else if (step.op === 'rotate') {
      image = image.rotate(step.angle, { background: '#ffffff' });
    } else if (step.op === 'resize') {
      image = image.resize({
        ...(step.width ? { width: step.width } : {}),
        ...(step.height ? { height: step.height } : {}),
        fit: step.fit,
      });
    } else if (step.op === 'flip') {
      image = step.direction === 'vertical' ? image.flip() : image.flop();
    } else {
      image = image.modulate({
        ...(step.brightness !== undefined ? { brightness: step.brightness } : {}),
        ...(step.saturation !== undefined ? { saturation: step.saturation } : {}),
        ...(step.hue !== undefined ? { hue: step.hue } : {}),
      });
    }
    ({ data, info } = await image.raw().toBuffer({ resolveWithObject: true }));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .toFormat(format)
    .toBuffer();
}

/** The edited image's bytes: operations on the current file, or an uploaded file already stored. */
export type Edit =
  { kind: 'operations'; operations: Operation[] } | { kind: 'file'; key: string; mimeType: string; size: number };

export async function saveEdited(
  { db, config, storage, logger }: Deps,
  request: { access: SiteAccess; id: string; edit: Edit },
): Promise<MediaItem> {
  const { access, id, edit } = request;
  const { site, actor } = access;
  // The file of this edit, once stored: removed again if the edit is not saved.
  let made: string | undefined = edit.kind === 'file' ? edit.key : undefined;
  try {
    const item = await forChange(db, access, id);
    if (item.kind !== 'image') throw new Problem(409, `Only images can be edited; this item is ${item.kind}.`);
    let next: { key: string; mimeType: string; size: number; output?: Buffer };
    if (edit.kind === 'file') {
      if (!edit.mimeType.startsWith('image/'))
        throw new Problem(415, `The new version must be an image; this file is ${edit.mimeType}.`);
      next = edit;
    } else {
      const current = await db.oneFirst(
        sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${id}`,
      );
      const input = await bytesOf(storage, current);
      if (input.length === 0) throw new Problem(409, 'The image’s file is missing; it cannot be edited.');
      const format = outputFormats.get(item.mime_type) ?? 'png';
      const output = await applyOperations(input, edit.operations, format, config.media.maxPixels).catch(
        (error: unknown) => {
          if (error instanceof Problem) throw error;
          // The image library's own words are for the log; the tenant reads a plain sentence.
          logger.warn({ err: error, media_id: id }, 'image operations could not be applied');
          throw new Problem(422, 'The operations cannot be applied to this image.', {
            errors: [{ path: 'body.operations', message: 'cannot be applied' }],
          });
        },
      );
      // The old file stays as a version: the new one adds to what the tenant stores.
      await checkStorageQuota(db, site.tenant_id, output.length);
      made = `${site.tenant_id}/${site.id}/${randomUUID()}`;
      const mimeType = `image/${format}`;
      next = { key: made, mimeType, size: (await storage.put(made, output, mimeType)).size, output };
    }
    const { default: sharp } = await import('sharp');
    const meta = await sharp(next.output ?? (await bytesOf(storage, next.key)), {
      limitInputPixels: config.media.maxPixels,
    })
      .metadata()
      .catch(() => null);
    const { saved, staleVariants } = await db.transaction(async (tx) => {
      await forChange(tx, access, id);
      // Checked again under the tenant's lock (an uploaded file's size is known only now). Not in
      // recordVersion: the AI edit job's version, already paid for, is not refused.
      await checkStorageQuota(tx, site.tenant_id, next.size, { lock: true });
      return recordVersion(tx, config, {
        site,
        actor,
        mediaId: id,
        file: next,
        width: meta?.width ?? null,
        height: meta?.height ?? null,
        jobId: null,
      });
    });
    made = undefined;
    // The old original stays as a version; its variants are made again for the new one.
    await removeFiles(storage, logger, staleVariants);
    return saved;
  } finally {
    if (made) await removeFiles(storage, logger, [made]);
  }
}

export type NewVersion = {
  site: Site;
  /** Who made it: processing runs on their behalf. */
  actor: Actor;
  mediaId: string;
  file: { key: string; mimeType: string; size: number };
  width: number | null;
  height: number | null;
  /** The job that made it (an AI edit), so a rerun of that job makes no second version. */
  jobId: string | null;
};

/**
 * Makes the stored file the item's current version, in the caller's
 * transaction: the replaced one is kept in media_versions, and the item is
 * processed again. Answers the item and the variant keys that are now stale.
 */
export async function recordVersion(
  tx: CommonQueryMethods,
  config: Config,
  version: NewVersion,
): Promise<{ saved: MediaItem; staleVariants: string[] }> {
  const id = version.mediaId;
  const stale = await tx.oneFirst(sql.type(z.object({ variant_keys: z.array(z.string()) }))`
    select array(select v->>'key' from jsonb_array_elements(variants) v) as variant_keys from media_items where id = ${id} for update`);
  await tx.query(sql.typeAlias('void')`
    insert into media_versions (tenant_id, media_id, version, storage_key, mime_type, size_bytes, width, height, created_by, created_at)
    select tenant_id, id, version, storage_key, mime_type, size_bytes, width, height, coalesce(version_created_by, created_by), version_created_at
    from media_items where id = ${id}`);
  const job = await insertJob(tx, config, {
    site: version.site,
    actor: version.actor,
    kind: 'media_process',
    input: { media_id: id },
    pricing: { accountId: null, cost: 0 },
  });
  const saved = await tx.one(sql.type(mediaItemSchema)`
    update media_items set storage_key = ${version.file.key}, mime_type = ${version.file.mimeType}, size_bytes = ${version.file.size},
           version = version + 1, width = ${version.width}, height = ${version.height}, status = 'processing', variants = '[]',
           dominant_color = null, processing_error = null, job_id = ${job.id},
           version_created_by = ${version.actor.kind === 'user' ? version.actor.userId : null}, version_created_at = now(),
           version_job_id = ${version.jobId}
    where id = ${id} returning ${mediaColumns}`);
  // A clone's copy of the item may still show these variants (./shared-files.ts).
  return { saved, staleVariants: await unusedKeys(tx, stale) };
}

export async function bytesOf(storage: Storage, key: string): Promise<Buffer> {
  const body = await storage.read(key);
  return body ? Buffer.concat(await body.toArray()) : Buffer.alloc(0);
}
