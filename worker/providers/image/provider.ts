// Image generation, as the worker needs it: the local renderer, or an
// OpenAI-compatible /images/generations endpoint.
import type { Config } from '../../../core/config.ts';
import type { ImageRequest } from '../../../core/media/generation.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { callProvider, readJson } from '../../../core/providers/http.ts';
import { renderLocal } from './local.ts';
import { z } from 'zod';

export type ImageProvider = { name: string; generate(request: ImageRequest, signal: AbortSignal): Promise<Buffer[]> };

const generated = z.object({ data: z.array(z.object({ b64_json: z.base64() })).min(1) });

export function imageProvider(config: Config): ImageProvider {
  if (config.images.provider === 'local') {
    return {
      name: 'local',
      generate: (request) =>
        Promise.all(Array.from({ length: request.count }, (_, index) => renderLocal(request, index))),
    };
  }
  if (!config.ai.baseUrl)
    throw permanent('not_configured', 'IMAGE_PROVIDER=openai needs AI_BASE_URL (and usually AI_API_KEY).');
  return {
    name: 'openai',
    async generate(request, signal) {
      const response = await callProvider('The image provider', {
        url: `${config.ai.baseUrl}/images/generations`,
        apiKey: config.ai.apiKey,
        json: {
          model: config.images.model,
          prompt: request.prompt,
          n: request.count,
          size: request.size,
          response_format: 'b64_json',
          ...(request.style === 'vivid' ? { style: 'vivid' } : {}),
        },
        timeoutMs: config.ai.timeoutMs,
        signal,
      });
      const body = generated.safeParse(await readJson('The image provider', response));
      if (!body.success) throw permanent('provider_invalid_response', 'The image provider answered without images.');
      return body.data.data.map((image) => Buffer.from(image.b64_json, 'base64'));
    },
  };
}
