// Video made on this machine: each scene's picture comes from the image
// provider (or is an image of the site), its narration from the speech
// provider (espeak-ng when the configured one is asynchronous), and ffmpeg
// moves over the picture for as long as the scene lasts. Progress is
// reported scene by scene.
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import { imageKey } from '../../../core/media/items.ts';
import { bytesOf } from '../../../core/media/versions.ts';
import {
  maxSceneSeconds,
  narrationTailSeconds,
  planScenes,
  type PlannedScene,
  type VideoRequest,
} from '../../../core/media/video.ts';
import { joinSegments, renderScene } from '../../media/compose.ts';
import { encodeAudio, probe } from '../../media/ffmpeg.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import type { JobContext } from '../../jobs/handler.ts';
import { imageProvider } from '../image/provider.ts';
import { localSpeech } from '../speech/local.ts';
import { speechProvider } from '../speech/provider.ts';

// The picture is this much larger than the frame, so that the zoom and pan
// crop real pixels instead of stretching a few.
const overscan = 1.5;

/** The generated-image size closest in shape to the frame. */
function sourceSize(width: number, height: number) {
  if (width > height) return '1024x768' as const;
  return width < height ? ('768x1024' as const) : ('1024x1024' as const);
}

async function picture(
  scene: PlannedScene,
  index: number,
  request: VideoRequest,
  context: JobContext,
): Promise<Buffer> {
  if (scene.mediaId) {
    const key = await imageKey(context.db, context.job.site_id, scene.mediaId);
    const bytes = key ? await bytesOf(context.storage, key) : Buffer.alloc(0);
    if (!bytes.length) throw permanent('media_missing', `The image of scene ${index + 1} was deleted.`);
    return bytes;
  }
  const [width, height] = request.size.split('x').map(Number) as [number, number];
  const [image] = await imageProvider(context.config).generate(
    {
      prompt: scene.imagePrompt,
      size: sourceSize(width, height),
      style: request.style,
      count: 1,
      seed: request.seed,
      format: 'png',
    },
    context.signal,
  );
  return image!;
}

/** The narration as WAV, at the speed asked for. */
async function narration(text: string, request: VideoRequest, context: JobContext): Promise<Buffer> {
  const configured = speechProvider(context.config);
  const provider = configured.mode === 'sync' ? configured : localSpeech(context.config);
  const speech = await provider.synthesize(
    { text, voice: request.voice, language: request.language, speed: request.speed },
    context.signal,
  );
  return encodeAudio(context.config, speech.audio, 'wav', context.signal, speech.speedApplied ? 1 : request.speed);
}

export type Composed = { file: string; poster: Buffer; scenes: number };

export async function composeLocally(request: VideoRequest, dir: string, context: JobContext): Promise<Composed> {
  const scenes = planScenes(request);
  const [width, height] = request.size.split('x').map(Number) as [number, number];
  const limits = { limitInputPixels: context.config.media.maxPixels };
  const segments: string[] = [];
  let poster: Buffer | undefined;
  for (const [index, scene] of scenes.entries()) {
    await context.progress(0.05 + (0.85 * index) / scenes.length, `scene ${index + 1} of ${scenes.length}`);
    const source = await picture(scene, index, request, context);
    const fitted = sharp(source, limits)
      .rotate()
      .resize(Math.round(width * overscan), Math.round(height * overscan), { fit: 'cover' });
    const image = path.join(dir, `scene-${index}.png`);
    await fitted
      .clone()
      .png()
      .toFile(image)
      .catch((error: unknown) => {
        throw permanent('unreadable_file', `The picture of scene ${index + 1} could not be read as an image.`, error);
      });
    poster ??= await fitted.clone().resize(width, height).jpeg({ quality: 85 }).toBuffer();
    let audio: string | null = null;
    let seconds = scene.minSeconds;
    if (scene.narration) {
      audio = path.join(dir, `scene-${index}.wav`);
      await writeFile(audio, await narration(scene.narration, request, context));
      seconds = Math.max(seconds, (await probe(context.config, audio)).durationSeconds + narrationTailSeconds);
    }
    const segment = path.join(dir, `scene-${index}.mp4`);
    const clip = { image, audio, seconds: Math.min(maxSceneSeconds, seconds), width, height, motion: index };
    await renderScene(context.config, clip, segment, context.signal, context.config.video.renderTimeoutMs);
    segments.push(segment);
  }
  await context.progress(0.92, 'joining the scenes');
  const file = path.join(dir, 'video.mp4');
  await joinSegments(context.config, segments, file, context.signal);
  return { file, poster: poster!, scenes: scenes.length };
}
