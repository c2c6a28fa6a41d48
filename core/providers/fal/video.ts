// Video on fal's queue, as images are (./images.ts): queued with our webhook,
// answered Pending, and collected from the delivery's `{video: {url}}` (fal-js
// I2VOutput for Kling, ModifyOutput for Seedance).
import { permanent } from '../../jobs/errors.ts';
import type { Call, Pending, VendorSettings, VideoGeneration, VideoGenerator } from '../capabilities.ts';
import { falClient, maxVideoBytes, submitPending } from './client.ts';
import { falModel, seedance, videoFrames } from './models.ts';

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const ratioOf = (width: number, height: number) => `${width / gcd(width, height)}:${height / gcd(width, height)}`;

/** The model's input: its duration (a string, the nearest it makes at or above what was asked) and frame. */
export function videoInput(model: string, request: VideoGeneration): Record<string, unknown> {
  if (request.image)
    throw permanent('provider_rejected', 'This fal model makes video from text only; it takes no first frame.');
  const size = `${request.width}x${request.height}`;
  const known = videoFrames[model];
  // A model the catalog does not know is asked for the frame's ratio, in lowest terms.
  const frame = known
    ? known.find((candidate) => candidate.size === size)
    : { size, aspectRatio: ratioOf(request.width, request.height) };
  if (!frame) throw permanent('provider_rejected', `This fal model does not make ${size} video.`);
  const lengths = falModel(model)?.seconds;
  const seconds = lengths ? (lengths.find((length) => length >= request.seconds) ?? lengths.at(-1)!) : request.seconds;
  return {
    prompt: request.prompt,
    duration: String(seconds),
    aspect_ratio: frame.aspectRatio,
    ...(frame.resolution ? { resolution: frame.resolution } : {}),
    // Of the two, only Seedance takes a seed (fal-js SeedanceProTextToVideoInput).
    ...(model === seedance && request.seed !== undefined ? { seed: request.seed } : {}),
  };
}

export function falVideo(settings: VendorSettings): VideoGenerator {
  const client = falClient(settings);
  return {
    async generate(request: VideoGeneration, call: Call): Promise<Pending> {
      return submitPending(client, videoInput(call.model, request), call);
    },

    async collect(output: unknown, call: Call) {
      const video = (output as { video?: { url?: unknown; content_type?: unknown } } | null)?.video;
      if (!video?.url) throw permanent('provider_invalid_response', 'fal delivered no video.');
      return client.file(video.url, call, maxVideoBytes, video.content_type);
    },
  };
}
