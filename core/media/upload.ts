// Uploading a file into the media library. The bytes stream to storage under
// a key we generate; their type is read from the bytes themselves (the
// client's word is not taken) and only an allowlist is kept. SVG is refused:
// it can carry script, and we do not sanitise it.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { fileTypeStream } from 'file-type';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { checkStorageQuota } from '../billing/storage.ts';
import { Problem, problemType } from '../errors.ts';
import { insertJob } from '../jobs/submit.ts';
import type { JobWebhook } from '../webhooks/request.ts';
import type { Deps } from '../services.ts';
import { removeFiles } from '../storage/index.ts';
import type { Storage } from '../storage/storage.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { locale, type Site } from '../tenancy/sites.ts';
import { requireSiteFolder } from './access.ts';
import { insertMedia, mediaColumns, mediaItemSchema, mediaKinds, type MediaItem } from './items.ts';

/** What may be uploaded, by the type sniffed from the bytes. */
export const uploadTypes: Record<string, (typeof mediaKinds)[number]> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/webp': 'image',
  'image/gif': 'image',
  'image/avif': 'image',
  'video/mp4': 'video',
  'video/webm': 'video',
  'video/quicktime': 'video',
  'audio/mpeg': 'audio',
  'audio/wav': 'audio',
  'audio/ogg': 'audio',
  'audio/mp4': 'audio',
  'audio/x-m4a': 'audio',
  'application/pdf': 'document',
};

export const unsupportedType = (found: string) =>
  new Problem(415, `Files of type ${found} cannot be uploaded; accepted: ${Object.keys(uploadTypes).join(', ')}.`, {
    type: problemType('unsupported-media-type'),
  });

const tagList = z
  .string()
  .max(3000)
  .transform((text, context) => {
    const trimmed = text.trim();
    let items: unknown = trimmed.split(',');
    if (trimmed.startsWith('[')) {
      try {
        items = JSON.parse(trimmed);
      } catch {
        context.addIssue({ code: 'custom', message: 'a JSON array of strings, or words separated by commas' });
        return z.NEVER;
      }
    }
    return Array.isArray(items) ? items.map((item) => String(item).trim().toLowerCase()).filter(Boolean) : [];
  })
  .pipe(z.array(z.string().max(50)).max(50))
  .transform((list) => [...new Set(list)]);

/** The form fields beside the file. */
export const uploadFields = z.strictObject({
  folder_id: z.uuid().optional(),
  alt: z.string().trim().max(1000).optional(),
  title: z.string().trim().max(300).optional(),
  caption: z.string().trim().max(2000).optional(),
  tags: tagList.optional().describe('Comma-separated, or a JSON array'),
  locale: locale.optional(),
});

export type UploadFields = z.infer<typeof uploadFields>;

/** Sniffs the stream's type and stores it; 415 (nothing kept) for a type outside the allowlist. */
export async function storeUpload(
  storage: Storage,
  site: Pick<Site, 'id' | 'tenant_id'>,
  file: Readable,
): Promise<{ key: string; mimeType: string; size: number }> {
  const typed = await fileTypeStream(file, { sampleSize: 4100 });
  const mimeType = typed.fileType?.mime;
  if (!mimeType || !uploadTypes[mimeType]) {
    typed.destroy();
    throw unsupportedType(mimeType ?? 'unknown (no known signature: text, SVG or an unsupported format)');
  }
  const key = `${site.tenant_id}/${site.id}/${randomUUID()}`;
  const stored = await storage.put(key, typed, mimeType);
  return { key, mimeType, size: stored.size };
}

/**
 * Records the stored file as a media item; the file is removed if the fields
 * or the folder are not right, or it does not fit the tenant's storage quota
 * (its size is known only now that it is stored).
 */
export async function recordUpload(
  { db, config, storage, logger }: Deps,
  upload: {
    access: SiteAccess;
    file: { key: string; mimeType: string; size: number; fileName: string };
    fields: UploadFields;
    /** Where the processing job's events go, if the upload named a webhook. */
    webhook?: JobWebhook | null;
  },
): Promise<MediaItem> {
  const { access, file, fields } = upload;
  const { site, actor } = access;
  try {
    return await db.transaction(async (tx) => {
      if (fields.folder_id) await requireSiteFolder(tx, site.id, fields.folder_id, 'folder_id');
      // The variants processing makes of it later are not checked (core/billing/storage.ts).
      await checkStorageQuota(tx, site.tenant_id, file.size, { lock: true });
      const item = await insertMedia(
        tx,
        {
          tenantId: site.tenant_id,
          siteId: site.id,
          jobId: null,
          createdBy: actor.kind === 'user' ? actor.userId : null,
        },
        {
          kind: uploadTypes[file.mimeType]!,
          mimeType: file.mimeType,
          sizeBytes: file.size,
          storageKey: file.key,
          // Kept as a label only: the stored key never comes from it.
          fileName: file.fileName.replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 255),
          title: fields.title ?? '',
          folderId: fields.folder_id ?? null,
          alt: fields.alt ?? '',
          caption: fields.caption ?? '',
          tags: fields.tags ?? [],
          status: 'processing',
        },
      );
      // Metadata and variants are read by a worker; the item says processing until then.
      const job = await insertJob(tx, config, {
        site,
        actor,
        kind: 'media_process',
        input: { media_id: item.id },
        pricing: { accountId: null, cost: 0 },
        webhook: upload.webhook ?? null,
      });
      return tx.one(
        sql.type(
          mediaItemSchema,
        )`update media_items set job_id = ${job.id} where id = ${item.id} returning ${mediaColumns}`,
      );
    });
  } catch (error) {
    await removeFiles(storage, logger, [file.key]);
    throw error;
  }
}
