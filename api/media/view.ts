// Streams a media item's file: ETag and Last-Modified for revalidation (304),
// single byte ranges (206, for audio and video seeking; 416 when none of it
// is there), and headers that keep a browser from treating the bytes as
// anything but what they are. With S3 and S3_REDIRECT_SECONDS, the answer is
// instead a redirect to a presigned URL, so the bytes bypass the API.
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Config } from '../../core/config.ts';
import { Problem } from '../../core/errors.ts';
import type { MediaFile } from '../../core/media/files.ts';
import type { MediaItem } from '../../core/media/items.ts';
import { uploadTypes } from '../../core/media/upload.ts';
import type { Storage } from '../../core/storage/storage.ts';
import { cacheControlHeader, etagHeader, locationHeader, problemResponse } from '../responses.ts';
import type { ResponseSpec } from '../route.ts';

/** How long presigned redirects live; 0 when views stream through the API. */
export const redirectSeconds = (config: Config) =>
  config.storage.driver === 's3' ? config.storage.redirectSeconds : 0;

// A file is served in its own type: one that may be uploaded, or a variant's (WebP, AVIF, a JPEG poster).
const binary = { contentType: Object.keys(uploadTypes), schema: z.string().meta({ format: 'binary' }) };
const fileHeaders = {
  ETag: etagHeader,
  'Last-Modified': { description: 'When the item last changed', required: true },
  'Cache-Control': cacheControlHeader,
  'Accept-Ranges': { description: '`bytes`: ranges may be asked for', required: true },
};
export const viewResponses: Record<number, ResponseSpec> = {
  200: { description: 'The whole file, in its own media type', ...binary, headers: fileHeaders },
  206: {
    description: 'The byte range asked for',
    ...binary,
    headers: { ...fileHeaders, 'Content-Range': { description: '`bytes start-end/size`', required: true } },
  },
  302: {
    description: 'With S3_REDIRECT_SECONDS: a presigned URL of the file, valid that long',
    headers: { Location: { ...locationHeader, description: 'The presigned URL' }, 'Cache-Control': cacheControlHeader },
  },
  304: { description: 'The copy the client has (If-None-Match, If-Modified-Since) is current', headers: fileHeaders },
  416: problemResponse('The range asked for is outside the file', {
    ...fileHeaders,
    'Content-Range': { description: '`bytes */size`', required: true },
  }),
};

export const etagOf = (item: MediaItem, size: number, variant = '') =>
  `"${item.id}${variant ? `-${variant}` : ''}-${Date.parse(item.updated_at).toString(36)}-${size.toString(36)}"`;

function notModified(req: Request, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = req.get('if-none-match');
  if (ifNoneMatch)
    return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*');
  const since = Date.parse(req.get('if-modified-since') ?? '');
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

export async function streamMedia(
  req: Request,
  res: Response,
  storage: Storage,
  file: MediaFile,
  cacheControl: string,
  redirectSeconds = 0,
): Promise<void> {
  const { item, storageKey } = file;
  if (redirectSeconds > 0 && storage.signedUrl) {
    // The redirect is as private as the URL it carries, and cached for less than the URL lives.
    res.set('Cache-Control', `private, max-age=${Math.min(300, Math.floor(redirectSeconds / 2))}`);
    // No body: Express's would be a text/plain note that no client reads.
    res
      .status(302)
      .location(await storage.signedUrl(storageKey, redirectSeconds, file.mimeType))
      .end();
    return;
  }
  const size = await storage.size(storageKey);
  if (size === null) throw new Problem(404, 'The media item’s file is missing.');
  const etag = etagOf(item, size, file.variant);
  const lastModified = new Date(item.updated_at);
  res.set({
    ETag: etag,
    'Last-Modified': lastModified.toUTCString(),
    'Cache-Control': cacheControl,
    'Accept-Ranges': 'bytes',
    // Served bytes never run as a page of ours (an SVG's script, say).
    'Content-Security-Policy': "sandbox; default-src 'none'",
    'X-Content-Type-Options': 'nosniff',
  });
  if (notModified(req, etag, lastModified)) {
    res.status(304).end();
    return;
  }
  let range: { start: number; end: number } | undefined;
  // If-Range: a range only of the version the client has.
  const ifRange = req.get('if-range');
  const rangeApplies = !ifRange || ifRange === etag;
  if (req.get('range') && rangeApplies) {
    const parsed = req.range(size, { combine: true });
    // Only byte ranges mean anything here; another unit is ignored like a malformed header.
    const ranges = Array.isArray(parsed) && parsed.type !== 'bytes' ? -2 : parsed;
    if (ranges === -1 || (Array.isArray(ranges) && ranges.length === 0)) {
      res.set('Content-Range', `bytes */${size}`);
      throw new Problem(416, `The file has ${size} bytes; the range asked for is outside it.`, {
        headers: { 'Content-Range': `bytes */${size}` },
      });
    }
    // A malformed Range header is ignored, as RFC 9110 allows; several ranges are served as the first.
    if (Array.isArray(ranges) && ranges[0]) range = { start: ranges[0].start, end: ranges[0].end };
  }
  const body = await storage.read(storageKey, range);
  if (!body) throw new Problem(404, 'The media item’s file is missing.');
  res.status(range ? 206 : 200).type(file.mimeType);
  res.set('Content-Length', String(range ? range.end - range.start + 1 : size));
  if (range) res.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  if (req.method === 'HEAD') {
    body.destroy();
    res.end();
    return;
  }
  await pipeline(body, res).catch((error: unknown) => {
    // A client that leaves mid-file is not an error of ours.
    if (!res.destroyed) throw error;
  });
}
