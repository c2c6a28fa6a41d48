// After an upload: read the file's metadata and make its variants, then mark
// the item ready. Images (sharp, with a pixel limit so a decompression bomb
// fails at once): dimensions, EXIF (without GPS unless asked), dominant
// colour, blurhash, WebP and AVIF widths for responsive use. Video (ffprobe, ffmpeg): duration, dimensions and a poster frame.
// Audio: duration. Variants are stored under keys derived from the item's,
// so a rerun overwrites them. A failure marks the item failed, with the reason
// in a plain sentence under a stable code; what sharp or ffprobe said (ffprobe
// starts with its version banner and build) goes to the log, as the cause.
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import sharp from 'sharp';
import { z } from 'zod';
import {
  markProcessed,
  markProcessingFailed,
  mediaToProcess,
  type ProcessedMedia,
} from '../../core/media/processing.ts';
import type { Storage } from '../../core/storage/storage.ts';
import { probe, withTemporaryDir } from '../media/ffmpeg.ts';
import { hasLocation, pickExif } from '../media/exif.ts';
import { storePoster } from '../media/poster.ts';
import { deriveImages, withoutMetadata } from '../media/responsive.ts';
import { JobError, permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext } from '../job.ts';

async function download(storage: Storage, key: string, file: string): Promise<void> {
  const body = await storage.read(key);
  if (!body) throw permanent('media_missing', 'The uploaded file is no longer in storage.');
  await pipeline(body, createWriteStream(file));
}

async function image(file: string, key: string, context: JobContext): Promise<ProcessedMedia> {
  const limits = { limitInputPixels: context.config.media.maxPixels, failOn: 'error' as const };
  try {
    const meta = await sharp(file, limits).metadata();
    const width = meta.autoOrient?.width ?? meta.width ?? null;
    const height = meta.autoOrient?.height ?? meta.height ?? null;
    const derived = await deriveImages(file, key, width ?? 0, limits, context.storage);
    if (!context.config.media.exifGps && hasLocation(meta.exif))
      derived.variants.push(await withoutMetadata(file, key, meta.format, limits, context.storage));
    return {
      width,
      height,
      dominant_color: derived.dominantColor,
      blurhash: derived.blurhash,
      exif: pickExif(meta.exif, context.config.media.exifGps),
      variants: derived.variants,
    };
  } catch (error) {
    if (error instanceof JobError) throw error;
    const message = (error as Error).message;
    if (/pixel limit/i.test(message)) {
      throw permanent(
        'image_too_large',
        `The image has more pixels than MEDIA_MAX_PIXELS (${context.config.media.maxPixels}).`,
        error,
      );
    }
    throw permanent('unreadable_file', 'The file could not be read as an image.', error);
  }
}

async function timed(file: string, key: string, kind: 'video' | 'audio', context: JobContext): Promise<ProcessedMedia> {
  const probed = await probe(context.config, file).catch((error: unknown) => {
    throw permanent(
      'unreadable_file',
      `The file could not be read as ${kind === 'video' ? 'a video' : 'audio'}.`,
      error,
    );
  });
  const found: ProcessedMedia = {
    duration_seconds: probed.durationSeconds || null,
    width: probed.width,
    height: probed.height,
    variants: [],
  };
  if (kind === 'video' && probed.width) {
    found.variants.push(
      await storePoster(context.config, context.storage, file, key, probed.durationSeconds, context.signal),
    );
  }
  return found;
}

export default defineJob({
  input: z.object({ media_id: z.uuid() }),
  async run({ media_id: mediaId }, context) {
    const { db, job } = context;
    const item = await mediaToProcess(db, job.site_id, mediaId);
    if (!item) throw permanent('media_missing', 'The media item was deleted before it was processed.');
    await context.progress(0.1, 'reading the file');
    try {
      const found = await withTemporaryDir(async (dir) => {
        const file = path.join(dir, 'original');
        await download(context.storage, item.storage_key, file);
        await context.progress(0.3, 'reading metadata and making variants');
        if (item.kind === 'image') return image(file, item.storage_key, context);
        if (item.kind === 'video' || item.kind === 'audio') return timed(file, item.storage_key, item.kind, context);
        return { variants: [] };
      });
      await markProcessed(db, mediaId, found);
      return {
        status: 'succeeded',
        units: 1,
        output: { media_id: mediaId, variants: found.variants.map((variant) => variant.name) },
      };
    } catch (error) {
      if (error instanceof JobError && !error.transient) await markProcessingFailed(db, mediaId, error.message);
      throw error;
    }
  },
});
