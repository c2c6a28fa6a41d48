// Calls to a provider over HTTP, with the failures sorted the one way every
// provider needs: unreachable, timed out, 429 and 5xx are transient (retried
// with backoff); other 4xx mean the provider refused this input (permanent).
import { permanent, transient } from '../jobs/errors.ts';

export type ProviderCall = {
  url: string;
  method?: 'GET' | 'POST';
  apiKey?: string | undefined;
  json?: unknown;
  form?: FormData;
  timeoutMs: number;
  signal: AbortSignal;
};

export async function callProvider(name: string, call: ProviderCall): Promise<Response> {
  const timeout = AbortSignal.timeout(call.timeoutMs);
  let response: Response;
  try {
    response = await fetch(call.url, {
      method: call.method ?? 'POST',
      headers: {
        ...(call.json === undefined ? {} : { 'content-type': 'application/json' }),
        ...(call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {}),
      },
      ...(call.json === undefined ? {} : { body: JSON.stringify(call.json) }),
      ...(call.form ? { body: call.form } : {}),
      signal: AbortSignal.any([call.signal, timeout]),
      // A provider that redirects could send us anywhere (an internal address): not followed.
      redirect: 'manual',
    });
  } catch (error) {
    if (call.signal.aborted) throw call.signal.reason ?? error;
    if (timeout.aborted)
      throw transient('provider_timeout', `${name} did not answer within ${call.timeoutMs} ms.`, error);
    throw transient('provider_unavailable', `${name} could not be reached.`, error);
  }
  if (response.ok) return response;
  if (response.status >= 300 && response.status < 400)
    throw permanent('provider_rejected', `${name} answered with a redirect, which is not followed.`);
  const detail = (await response.text().catch(() => '')).slice(0, 300);
  if (response.status === 429 || response.status >= 500) {
    throw transient('provider_unavailable', `${name} answered ${response.status}${detail ? `: ${detail}` : ''}.`);
  }
  throw permanent(
    'provider_rejected',
    `${name} refused the request (${response.status})${detail ? `: ${detail}` : ''}.`,
  );
}

// Far above any speech or image we ask for; a provider sending more is refused
// rather than filling the worker's memory.
export const maxProviderBytes = 200 * 1024 * 1024;

/** The response's bytes, refused (permanently) past `maxBytes`, declared or not. */
export async function readBody(name: string, response: Response, maxBytes = maxProviderBytes): Promise<Buffer> {
  const tooLarge = () => permanent('provider_invalid_response', `${name} sent more than ${maxBytes} bytes.`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
