// Pictures from OpenAI's POST /images/generations, with the parameters each
// model takes (openai/openai-openapi, components.schemas.CreateImageRequest).
// The GPT image models always answer base64 and refuse `response_format` and
// `style` ("Unknown parameter"); they take `quality`, `background` and
// `output_format`. Any other model (a compatible server's) gets the older
// dall-e form: `response_format: b64_json` and none of those. `model` is always
// sent: left out, OpenAI picks dall-e-2, which is shut down.
import type { ImagesResponse } from 'openai/resources/images';
import { z } from 'zod';
import { permanent } from '../../jobs/errors.ts';
import type { File, ImageGeneration, ImageGenerator, VendorSettings } from '../capabilities.ts';
import { connect } from './client.ts';

/** gpt-image-2, -1.5, -1, -1-mini and chatgpt-image-latest (CreateImageRequest.model, CreateImageEditRequest.model). */
export const isGptImageModel = (model: string) => /^(gpt-image-|chatgpt-image-)/.test(model);

export function openaiImages(settings: VendorSettings): ImageGenerator {
  const openai = connect(settings);
  return {
    async generate(request, call) {
      const answer = await openai.send(call, (client, options) =>
        client.images.generate({ ...generation(request, call.model), stream: false }, options),
      );
      return imagesOf(answer, openai.name, isGptImageModel(call.model) ? request.format : undefined);
    },
  };
}

function generation(request: ImageGeneration, model: string) {
  const common = { model, prompt: request.prompt, n: request.count, size: `${request.width}x${request.height}` };
  if (!isGptImageModel(model)) return { ...common, response_format: 'b64_json' as const };
  return {
    ...common,
    output_format: request.format,
    ...(request.quality ? { quality: request.quality } : {}),
    ...(request.background ? { background: request.background } : {}),
  };
}

// SPEC components.schemas.ImagesResponse / Image: only `created` is required;
// each picture is `b64_json` (GPT image models, or asked for) or a `url`.
const imagesSchema = z.object({
  data: z.array(z.object({ b64_json: z.string().nullish(), url: z.string().nullish() })).min(1),
  output_format: z.enum(['png', 'jpeg', 'webp']).nullish(),
});

/** The pictures of an images answer (generations and edits), decoded; `format` is what was asked of a GPT image model. */
export function imagesOf(answer: ImagesResponse, name: string, format?: File['contentType']): File[] {
  const parsed = imagesSchema.safeParse(answer);
  if (!parsed.success) throw permanent('provider_invalid_response', `${name} answered without pictures.`, parsed.error);
  const type = parsed.data.output_format ?? format;
  return parsed.data.data.map((image) => {
    if (!image.b64_json)
      throw permanent('provider_invalid_response', `${name} sent a link instead of the picture it was asked for.`);
    const bytes = Buffer.from(image.b64_json, 'base64');
    if (bytes.length === 0) throw permanent('provider_invalid_response', `${name} sent an empty picture.`);
    return { bytes, ...(type ? { contentType: `image/${type}` } : {}) };
  });
}
