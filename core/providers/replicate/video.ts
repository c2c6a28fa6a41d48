// Video on Replicate: minutes of work, so the prediction is started without
// holding the request and is always Pending; Replicate's webhook finishes it
// and `collect` fetches the clip. Seedance takes a duration in whole seconds,
// a resolution and an aspect ratio (its schema on Replicate); the size asked —
// one the catalog lists — is looked up in the 720p table.
import type { Call, File, VideoGeneration, VideoGenerator, VendorSettings } from '../capabilities.ts';
import { isPending } from '../capabilities.ts';
import { permanent } from '../../jobs/errors.ts';
import { outputUrls, predict, replicateClient } from './client.ts';
import { nearestAspectRatio, seedanceAspectRatios } from './models.ts';

// A first frame goes as a data URL. Replicate advises them up to 256 KB (ROAS
// schemas_prediction_request.input) and its own SDK sends them up to 10 MB
// (replicate-javascript lib/util.js MAX_DATA_URI_SIZE); larger is refused here.
const maxFrameBytes = 10_000_000;

export function videoInput(model: string, request: VideoGeneration): Record<string, unknown> {
  if (request.image && request.image.bytes.length > maxFrameBytes)
    throw permanent('provider_rejected', 'The first frame is larger than Replicate takes (10 MB).');
  const input: Record<string, unknown> = {
    prompt: request.prompt,
    duration: Math.ceil(request.seconds),
    aspect_ratio: nearestAspectRatio(seedanceAspectRatios, request.width, request.height),
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.image
      ? { image: `data:${request.image.contentType ?? 'image/png'};base64,${request.image.bytes.toString('base64')}` }
      : {}),
  };
  return model === 'bytedance/seedance-1-pro-fast' ? { ...input, resolution: '720p' } : input;
}

export function replicateVideo(settings: VendorSettings): VideoGenerator {
  const client = replicateClient(settings);
  const collect = async (output: unknown, call: Call): Promise<File> =>
    client.download(outputUrls(output)[0]!, call.signal);
  return {
    async generate(request, call) {
      const started = await predict(client, call, videoInput(call.model, request), false);
      return isPending(started) ? started : collect(started.output, call);
    },
    collect,
  };
}
