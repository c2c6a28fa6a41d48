// Images on Replicate: a prediction asked to hold the request while the model
// runs (`Prefer: wait`), so a fast model's images come back in the answer;
// one still running is Pending and its webhook finishes it (`collect`).
// The request becomes the model's own input: flux takes an aspect ratio and a
// megapixel count, not pixels (replicate/cog-flux predict.py), so the size
// asked — one the catalog lists — is looked up in the model's table.
import type { Call, File, ImageGeneration, ImageGenerator, VendorSettings } from '../capabilities.ts';
import { isPending } from '../capabilities.ts';
import { outputUrls, predict, replicateClient } from './client.ts';
import { fluxAspectRatios, fluxSizes, nearestAspectRatio } from './models.ts';

// An image of a few megapixels is a few MB; far more is not an image we asked for.
const maxImageBytes = 50 * 1024 * 1024;

const formats = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

/** The model's input for the request: flux's own fields, and for a model we do not know, the fields flux-like models share. */
export function imageInput(model: string, request: ImageGeneration): Record<string, unknown> {
  const size = fluxSizes.get(`${request.width}x${request.height}`) ?? {
    aspect_ratio: nearestAspectRatio(fluxAspectRatios, request.width, request.height),
    megapixels: '1' as const,
  };
  const shared = {
    prompt: request.prompt,
    aspect_ratio: size.aspect_ratio,
    num_outputs: request.count,
    ...(request.seed === undefined ? {} : { seed: request.seed }),
  };
  if (model !== 'black-forest-labs/flux-schnell' && model !== 'black-forest-labs/flux-dev') return shared;
  // quality and background have no flux counterpart: the model's defaults stand.
  return { ...shared, megapixels: size.megapixels, output_format: formats[request.format] };
}

export function replicateImages(settings: VendorSettings): ImageGenerator {
  const client = replicateClient(settings);
  const collect = (output: unknown, call: Call): Promise<File[]> =>
    Promise.all(outputUrls(output).map((url) => client.download(url, call.signal, maxImageBytes)));
  return {
    async generate(request, call) {
      const started = await predict(client, call, imageInput(call.model, request), true);
      return isPending(started) ? started : collect(started.output, call);
    },
    collect,
  };
}
