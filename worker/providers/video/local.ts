// Video made on this machine: each scene's picture comes from the image
// providers (or is an image of the site), its narration from the speech
// providers, and ffmpeg moves over the picture for as long as the scene
// lasts. Only providers that answer at once are asked (a vendor that calls
// back later cannot be waited for in the middle of a composition), each for a
// picture of a size its model makes, as close in shape to the frame as it
// can. Progress is reported scene by scene.
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import { dimensions } from '../../../core/media/generation.ts';
import { imageKey } from '../../../core/media/items.ts';
import { bytesOf } from '../../../core/media/versions.ts';
import {
  defaultFrame,
  maxSceneSeconds,
  narrationTailSeconds,
  planScenes,
  type PlannedScene,
  type VideoRequest,
} from '../../../core/media/video.ts';
import { joinSegments, renderScene } from '../../media/compose.ts';
import { encodeAudio, probe } from '../../media/ffmpeg.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import type { JobContext } from '../../job.ts';
import { isPending, type Capability } from '../../../core/providers/capabilities.ts';
import { closestSize } from '../../../core/providers/models.ts';
import { planFor, specOf, type PlannedCall } from '../../../core/providers/plan.ts';
import { adapterFor } from '../../../core/providers/registry.ts';
import { inTurn } from '../chain.ts';
import { renderLocal } from '../image/local.ts';
import { localSpeech } from '../speech/local.ts';

// The picture is this much larger than the frame, so that the zoom and pan
// crop real pixels instead of stretching a few.
const overscan = 1.5;

/** The configured providers of a capability that answer at once, each with its default model. */
function answeringAtOnce(context: JobContext, capability: Extract<Capability, 'image' | 'speech'>): PlannedCall[] {
  const plan = planFor(context.config.providers, capability).filter(
    (call) => call.vendor !== 'replicate' && call.vendor !== 'fal',
  );
  if (!plan.length)
    throw permanent('not_configured', `The local video composer needs a ${capability} provider that answers at once.`);
  return plan;
}

/** A call's answer, which must not be a promise to call back. */
function atOnce<T>(answer: T | { pending: true; ref: string }, call: PlannedCall): T {
  if (isPending(answer)) throw permanent('provider_invalid_response', `${call.vendor} did not answer at once.`);
  return answer;
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
  const { width, height } = request.size ? dimensions(request.size) : defaultFrame;
  const { value } = await inTurn('image', answeringAtOnce(context, 'image'), context, async (call) => {
    const size = closestSize(specOf('image', call)?.sizes, width, height);
    const asked = { prompt: scene.imagePrompt, count: 1, ...size, seed: request.seed, format: 'png' as const };
    if (call.vendor === 'local') {
      const drawn = { ...asked, size: `${size.width}x${size.height}`, style: request.style };
      return renderLocal(drawn, 0);
    }
    const made = await adapterFor(context.config, 'image', call.vendor).generate(asked, {
      model: call.model,
      signal: context.signal,
    });
    return atOnce(made, call)[0]!.bytes;
  });
  return value;
}

/** The narration as WAV, at the speed asked for. */
async function narration(text: string, request: VideoRequest, context: JobContext): Promise<Buffer> {
  const asked = { text, voice: request.voice, language: request.language, speed: request.speed };
  const { value: speech } = await inTurn('speech', answeringAtOnce(context, 'speech'), context, async (call) =>
    call.vendor === 'local'
      ? localSpeech(context.config).synthesize(asked, context.signal)
      : atOnce(
          await adapterFor(context.config, 'speech', call.vendor).synthesize(asked, {
            model: call.model,
            signal: context.signal,
          }),
          call,
        ),
  );
  return encodeAudio(context.config, speech.audio, 'wav', context.signal, speech.speedApplied ? 1 : request.speed);
}

export type Composed = { file: string; poster: Buffer; scenes: number };

export async function composeLocally(request: VideoRequest, dir: string, context: JobContext): Promise<Composed> {
  const scenes = planScenes(request);
  const { width, height } = request.size ? dimensions(request.size) : defaultFrame;
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
