// The asynchronous media provider: the work is submitted with a callback URL,
// and the result arrives later at POST /{site}/media/webhook/mediaprovider,
// signed with MEDIA_PROVIDER_WEBHOOK_SECRET.
import { z } from 'zod';
import type { Config } from '../../../core/config.ts';
import { permanent } from '../../jobs/errors.ts';
import { callProvider } from '../http.ts';
import type { AsyncSpeechProvider } from './provider.ts';

const accepted = z.object({ id: z.string().min(1).max(200) });

export function asyncSpeech(config: Config): AsyncSpeechProvider {
  return {
    name: 'mediaprovider',
    mode: 'async',
    async submit(request, job, signal) {
      const response = await callProvider('The media provider', {
        url: `${config.mediaProvider.url}/v1/jobs`,
        apiKey: config.mediaProvider.apiKey,
        json: {
          kind: 'speech',
          input: request,
          reference: job.id,
          callback_url: `${config.publicUrl}/${job.siteId}/media/webhook/mediaprovider`,
        },
        timeoutMs: config.ai.timeoutMs,
        signal,
      });
      const body = accepted.safeParse(await response.json().catch(() => null));
      if (!body.success) throw permanent('provider_invalid_response', 'The media provider accepted the job without an id.');
      return body.data.id;
    },
  };
}
