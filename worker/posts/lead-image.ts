// The lead image of an imported article, into the media library: fetched
// through the same SSRF-safe fetcher as the page, its type read from its
// bytes and stored by the upload path's own function (core/media/upload.ts,
// the same allowlist: SVG and non-images refused), measured with sharp. The
// media item itself is made when the job settles. An image that cannot be
// had does not fail the import: the output says why it was left out.
import { Readable } from 'node:stream';
import sharp from 'sharp';
import type { MediaDraft } from '../../core/media/items.ts';
import { storeUpload, uploadTypes } from '../../core/media/upload.ts';
import { JobError } from '../../core/jobs/errors.ts';
import type { JobContext } from '../job.ts';
import { fetchForJob } from './fetch-page.ts';

const maxImageBytes = 20 * 1024 * 1024;

export type LeadImage = { draft: MediaDraft } | { skipped: string };

export async function fetchLeadImage(url: string, title: string, context: JobContext): Promise<LeadImage> {
  const { job, storage } = context;
  let body: Buffer;
  try {
    ({ body } = await fetchForJob(url, context, { maxBytes: maxImageBytes, headers: { accept: 'image/*' } }));
  } catch (error) {
    if (error instanceof JobError) return { skipped: `${error.code}: ${error.message}` };
    throw error;
  }
  let stored: Awaited<ReturnType<typeof storeUpload>>;
  try {
    stored = await storeUpload(storage, { id: job.site_id, tenant_id: job.tenant_id }, Readable.from([body]));
  } catch (error) {
    return { skipped: (error as Error).message };
  }
  const meta = await sharp(body, { limitInputPixels: context.config.media.maxPixels })
    .metadata()
    .catch(() => null);
  if (uploadTypes[stored.mimeType] !== 'image' || !meta?.width) {
    await storage.delete(stored.key);
    return { skipped: 'The lead image is not an image that can be read.' };
  }
  const name = (new URL(url).pathname.split('/').pop() ?? '').replace(/[\u0000-\u001f\u007f\\]/g, '_');
  return {
    draft: {
      kind: 'image',
      mimeType: stored.mimeType,
      sizeBytes: stored.size,
      storageKey: stored.key,
      fileName: name.slice(0, 255) || 'lead-image',
      width: meta.width,
      height: meta.height ?? null,
      title: title.slice(0, 300),
    },
  };
}
