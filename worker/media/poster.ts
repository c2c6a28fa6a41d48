// A video's poster: a frame a second in (or halfway, for a shorter video),
// stored beside the video as its `poster` variant.
import sharp from 'sharp';
import type { Config } from '../../core/config.ts';
import type { StoredVariant } from '../../core/media/items.ts';
import type { Storage } from '../../core/storage/storage.ts';
import { posterFrame } from './ffmpeg.ts';

export async function storePoster(
  config: Config,
  storage: Storage,
  file: string,
  videoKey: string,
  durationSeconds: number,
  signal: AbortSignal,
): Promise<StoredVariant> {
  const poster = await posterFrame(config, file, Math.min(1, durationSeconds / 2), signal);
  const meta = await sharp(poster).metadata();
  const key = `${videoKey}.poster.jpg`;
  await storage.put(key, poster, 'image/jpeg');
  return {
    name: 'poster',
    key,
    mime_type: 'image/jpeg',
    width: meta.width ?? null,
    height: meta.height ?? null,
    size_bytes: poster.length,
  };
}
