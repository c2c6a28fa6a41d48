// Images on fal's queue: the request is queued with our webhook and answered
// Pending; fal posts the outcome there (./webhooks.ts verifies it), and
// `collect` fetches the pictures the delivery names, `{images: [{url}]}`
// (fal-js FluxDevOutput; DOC-WH's example delivery).
import { permanent } from '../../jobs/errors.ts';
import type { Call, ImageGeneration, ImageGenerator, Pending, VendorSettings } from '../capabilities.ts';
import { falClient, maxImageBytes, submitPending } from './client.ts';
import { imageSizePresets } from './models.ts';

/** FLUX's input (fal-js FluxDevInput, shared by schnell): the named size where there is one. */
export function fluxInput(request: ImageGeneration): Record<string, unknown> {
  const preset = imageSizePresets[`${request.width}x${request.height}`];
  return {
    prompt: request.prompt,
    image_size: preset ?? { width: request.width, height: request.height },
    num_images: request.count,
    // FLUX makes jpeg or png; png keeps what a WebP would (transparency aside, which FLUX has none of).
    output_format: request.format === 'jpeg' ? 'jpeg' : 'png',
    ...(request.seed === undefined ? {} : { seed: request.seed }),
  };
}

export function falImages(settings: VendorSettings): ImageGenerator {
  const client = falClient(settings);
  return {
    async generate(request: ImageGeneration, call: Call): Promise<Pending> {
      return submitPending(client, fluxInput(request), call);
    },

    async collect(output: unknown, call: Call) {
      const images = (output as { images?: unknown } | null)?.images;
      if (!Array.isArray(images) || images.length === 0)
        throw permanent('provider_invalid_response', 'fal delivered no images.');
      const files = [];
      for (const image of images as { url?: unknown; content_type?: unknown }[])
        files.push(await client.file(image?.url, call, maxImageBytes, image?.content_type));
      return files;
    },
  };
}
