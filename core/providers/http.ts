// Calls to a provider over HTTP, with the failures sorted the one way every
// provider needs: unreachable, timed out (AI_TIMEOUT_MS, the answer's body
// included), an answer broken off, 429 and 5xx are transient (retried with
// backoff, no sooner than a Retry-After); other 4xx mean the provider refused
// this input, and an answer that is not what was asked is garbage (both
// permanent: asking again would cost the caller the same refusal).
import { JobError, permanent, transient } from '../jobs/errors.ts';

export type ProviderCall = {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  /** Sent as `Authorization: Bearer <apiKey>`; vendors with another scheme set `headers` instead. */
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
  json?: unknown;
  form?: FormData;
  timeoutMs: number;
  signal: AbortSignal;
  /**
   * The vendor's own reading of an error answer (its status, body and headers), where its error
   * codes tell more than the status (a voice not found, a quota spent): a JobError to throw, or
   * undefined for the reading below.
   */
  refusal?: ((answer: { status: number; body: string; headers: Headers }) => JobError | undefined) | undefined;
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
        ...call.headers,
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
  const body = await response.text().catch(() => '');
  const refusal = call.refusal?.({ status: response.status, body, headers: response.headers });
  if (refusal) throw refusal;
  // The vendor's own words go to the log (the cause); the job's error, which the tenant reads, is ours.
  const cause = new Error(`${name} answered ${response.status}: ${body.slice(0, 1000)}`);
  if (response.status === 429 || response.status >= 500) {
    const retryAfterMs = retryAfter(response.headers.get('retry-after'));
    const wait = retryAfterMs === undefined ? '' : ` (asked to wait ${Math.ceil(retryAfterMs / 1000)} s)`;
    throw new JobError('provider_unavailable', `${name} answered ${response.status}${wait}.`, {
      transient: true,
      retryAfterMs,
      status: response.status,
      cause,
    });
  }
  throw new JobError('provider_rejected', `${name} refused the request (${response.status}).`, {
    transient: false,
    status: response.status,
    cause,
  });
}

// Far above any speech or image we ask for; a provider sending more is refused
// rather than filling the worker's memory.
export const maxProviderBytes = 200 * 1024 * 1024;

// A provider asking for a day's pause is not waited for that long with the
// caller's credits reserved: the job is retried after an hour at the latest.
const maxRetryAfterMs = 60 * 60 * 1000;

/** Retry-After in seconds or as an HTTP date (RFC 9110), in ms from now; undefined when absent or unreadable. */
export function retryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const ms = /^\s*\d+\s*$/.test(header)
    ? Number(header) * 1000
    : /GMT\s*$/.test(header)
      ? Date.parse(header) - now
      : Number.NaN;
  return Number.isFinite(ms) ? Math.min(maxRetryAfterMs, Math.max(0, ms)) : undefined;
}

/**
 * The response's bytes, refused (permanently) past `maxBytes`, declared or
 * not. An answer cut short is transient: the time ran out while it came
 * (provider_timeout), or the connection broke (provider_unavailable).
 */
export async function readBody(name: string, response: Response, maxBytes = maxProviderBytes): Promise<Buffer> {
  const tooLarge = () => permanent('provider_invalid_response', `${name} sent more than ${maxBytes} bytes.`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) {
        await response.body?.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    if (error instanceof JobError) throw error;
    // The call's AbortSignal.timeout covers the body too, and aborts it with a TimeoutError.
    if ((error as Error).name === 'TimeoutError')
      throw transient('provider_timeout', `${name} did not finish its answer in time.`, error);
    throw transient('provider_unavailable', `${name} broke off its answer.`, error);
  }
  return Buffer.concat(chunks);
}

/**
 * The response's JSON, or undefined when it is not JSON (the caller says what
 * it expected, permanently). Reading it fails as readBody does.
 */
export async function readJson(name: string, response: Response): Promise<unknown> {
  const text = (await readBody(name, response)).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
