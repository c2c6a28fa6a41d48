// Edited pictures from OpenAI's POST /images/edits, as multipart/form-data
// (openai/openai-openapi, components.schemas.CreateImageEditRequest): the
// picture and, optionally, a PNG mask whose transparent pixels mark where to
// edit, each declared with the type its bytes have (./picture-type.ts).
// The same per-model parameters as generations (./images.ts).
import { toFile } from 'openai';
import { permanent } from '../../jobs/errors.ts';
import type { File, ImageEdit, ImageEditor, VendorSettings } from '../capabilities.ts';
import { connect } from './client.ts';
import { imagesOf, isGptImageModel } from './images.ts';
import { pictureType } from './picture-type.ts';

export function openaiImageEdits(settings: VendorSettings): ImageEditor {
  const openai = connect(settings);
  return {
    async edit(request, call) {
      const gpt = isGptImageModel(call.model);
      const image = await upload(request.image, 'image');
      const mask = request.mask ? await upload(request.mask, 'mask') : undefined;
      if (mask && mask.type !== 'image/png') throw permanent('provider_rejected', 'OpenAI takes a PNG mask only.');
      const answer = await openai.send(call, (client, options) =>
        client.images.edit({ ...parameters(request, call.model, gpt), image, ...(mask ? { mask } : {}) }, options),
      );
      return imagesOf(answer, openai.name, gpt ? request.format : undefined);
    },
  };
}

function parameters(request: ImageEdit, model: string, gpt: boolean) {
  return {
    model,
    prompt: request.instruction,
    n: request.count,
    stream: false as const,
    ...(request.width && request.height ? { size: `${request.width}x${request.height}` } : {}),
    ...(gpt ? { output_format: request.format } : { response_format: 'b64_json' as const }),
  };
}

async function upload(file: File, name: 'image' | 'mask') {
  const type = pictureType(file.bytes);
  if (!type) throw permanent('provider_rejected', 'OpenAI edits PNG, JPEG and WebP pictures only.');
  return toFile(file.bytes, `${name}.${type.slice('image/'.length)}`, { type });
}
