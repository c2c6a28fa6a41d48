// The asynchronous media provider: work is submitted with a callback URL and
// our job's id, and the result arrives later at
// POST /{site}/media/webhook/mediaprovider, signed with
// MEDIA_PROVIDER_WEBHOOK_SECRET. Files in a result come inline (base64) or by
// URL on the provider's own origin; a URL elsewhere is never fetched.
import { z } from 'zod';
import type { Config } from '../../core/config.ts';
import { permanent } from '../../core/jobs/errors.ts';
import type { JobContext } from '../jobs/handler.ts';
import { callProvider, readBody, readJson } from '../../core/providers/http.ts';

const name = 'The media provider';
const accepted = z.object({ id: z.string().min(1).max(200) });

/** Submits the work; answers the provider's reference for it. */
export async function submitToMediaProvider(
  config: Config,
  kind: string,
  input: unknown,
  job: { id: string; siteId: string },
  signal: AbortSignal,
): Promise<string> {
  const response = await callProvider(name, {
    url: `${config.mediaProvider.url}/v1/jobs`,
    apiKey: config.mediaProvider.apiKey,
    json: {
      kind,
      input,
      reference: job.id,
      callback_url: `${config.publicUrl}/${job.siteId}/media/webhook/mediaprovider`,
    },
    timeoutMs: config.ai.timeoutMs,
    signal,
  });
  const body = accepted.safeParse(await readJson(name, response));
  if (!body.success) throw permanent('provider_invalid_response', 'The media provider accepted the job without an id.');
  return body.data.id;
}

/** The file a delivery carries as `{field}_base64` or `{field}_url`. */
export async function deliveredFile(result: unknown, field: 'audio' | 'video', context: JobContext): Promise<Buffer> {
  const shape = z.union([
    z.object({ [`${field}_base64`]: z.base64().min(1) }),
    z.object({ [`${field}_url`]: z.url() }),
  ]);
  const parsed = shape.safeParse(result);
  if (!parsed.success) throw permanent('provider_invalid_response', `The media provider delivered no ${field}.`);
  const data = parsed.data as Record<string, string>;
  const inline = data[`${field}_base64`];
  if (inline) return Buffer.from(inline, 'base64');
  const url = data[`${field}_url`]!;
  const origin = new URL(context.config.mediaProvider.url ?? 'http://invalid').origin;
  if (new URL(url).origin !== origin)
    throw permanent('provider_invalid_response', `The ${field} URL is not on the media provider.`);
  const response = await callProvider(name, {
    url,
    method: 'GET',
    apiKey: context.config.mediaProvider.apiKey,
    timeoutMs: context.config.ai.timeoutMs,
    signal: context.signal,
  });
  return readBody(name, response);
}
