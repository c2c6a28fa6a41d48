// The OpenAI SDK as every OpenAI adapter uses it, and the one way its failures
// become JobErrors. The SDK retries nothing (maxRetries 0): a 429 or 5xx must
// reach the provider chain, which moves the job on or waits the Retry-After.
// Compatible servers (vLLM, Ollama, LocalAI, a test fake) are reached the same
// way through the base URL; one of them keyless is sent no Authorization at all.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { JobError, permanent, transient } from '../../jobs/errors.ts';
import type { Call, VendorSettings } from '../capabilities.ts';
import { retryAfter } from '../http.ts';

export type OpenAIConnection = {
  /** How the tenant reads the vendor's name: OpenAI, or a server speaking its API. */
  name: string;
  /** One call: the SDK's request, stopped when the job is canceled or the time is up, its failure a JobError. */
  send<T>(call: Call, work: (client: OpenAI, options: { signal: AbortSignal }) => Promise<T>): Promise<T>;
};

/** api.openai.com, or one of its regional hosts (eu.api.openai.com). */
export function isOpenAIHost(baseUrl: string): boolean {
  try {
    return /(^|\.)openai\.com$/.test(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

export function connect(settings: VendorSettings): OpenAIConnection {
  const official = isOpenAIHost(settings.baseUrl);
  const name = official ? 'OpenAI' : 'The model server';
  const client =
    settings.apiKey || !official
      ? new OpenAI({
          apiKey: settings.apiKey || 'none',
          // Passed explicitly, so the SDK reads none of its own environment variables.
          organization: null,
          project: null,
          webhookSecret: null,
          baseURL: settings.baseUrl,
          timeout: settings.timeoutMs,
          maxRetries: 0,
          fetch: keepingFlatErrors,
          // A server that redirects could send the key anywhere: not followed.
          fetchOptions: { redirect: 'manual' },
          ...(settings.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
        })
      : undefined;
  return {
    name,
    async send(call, work) {
      if (!client) throw permanent('not_configured', 'OpenAI is not configured: OPENAI_API_KEY is not set.');
      // The SDK's own timeout stops at the headers of a binary answer (speech); this one covers the body too.
      const timeout = AbortSignal.timeout(settings.timeoutMs);
      try {
        return await work(client, { signal: AbortSignal.any([call.signal, timeout]) });
      } catch (error) {
        throw failure(error, { call, timedOut: timeout.aborted, name, timeoutMs: settings.timeoutMs });
      }
    },
  };
}

function failure(
  error: unknown,
  context: { call: Call; timedOut: boolean; name: string; timeoutMs: number },
): JobError {
  const { call, name } = context;
  if (call.signal.aborted) {
    const reason: unknown = call.signal.reason;
    return reason instanceof JobError ? reason : permanent('canceled', 'The call was canceled.', reason);
  }
  if (context.timedOut || error instanceof APIConnectionTimeoutError)
    return transient('provider_timeout', `${name} did not answer within ${context.timeoutMs} ms.`, error);
  if (error instanceof JobError) return error;
  if (error instanceof APIError && error.status !== undefined)
    return refusal(error as APIError, error.status as number, name);
  if (error instanceof APIConnectionError)
    return transient('provider_unavailable', `${name} could not be reached.`, error);
  // The SDK parses a 200's body as JSON and throws what JSON.parse throws.
  if (error instanceof SyntaxError)
    return permanent('provider_invalid_response', `${name} answered with something that is not JSON.`, error);
  return transient('provider_unavailable', `${name} broke off its answer.`, error);
}

/** An answer with an error status: the vendor's words (`error.message`) stay in the cause, for the logs. */
function refusal(error: APIError, status: number, name: string): JobError {
  // 408 and 409 are OpenAI's "try again" statuses besides 429 and 5xx (the SDK's shouldRetry).
  if (status === 429 || status >= 500 || status === 408 || status === 409) {
    // SPEC components.responses.TooManyRequests: Retry-After in seconds, absent when the wait needs a person.
    const retryAfterMs = retryAfter(error.headers?.get('retry-after') ?? null);
    const wait = retryAfterMs === undefined ? '' : ` (asked to wait ${Math.ceil(retryAfterMs / 1000)} s)`;
    const message =
      error.code === 'insufficient_quota'
        ? `${name}'s account has run out of quota.`
        : status === 429
          ? `${name} is limiting our requests${wait}.`
          : `${name} answered ${status}${wait}.`;
    return new JobError('provider_unavailable', message, { transient: true, retryAfterMs, status, cause: error });
  }
  const message =
    status >= 300 && status < 400
      ? `${name} answered with a redirect, which is not followed.`
      : status === 401
        ? `${name} refused the configured API key.`
        : status === 403
          ? `${name} refused access to this model.`
          : error.code === 'model_not_found'
            ? `${name} does not offer this model to the configured account.`
            : `${name} refused the request (${status}${error.param ? `, on ${error.param}` : ''}).`;
  return new JobError('provider_rejected', message, { transient: false, status, cause: error });
}

/**
 * vLLM before its PR 22099 answers an error flat, `{"object":"error","message":…,"code":400}`
 * (vllm-project/vllm#12886); the SDK reads only `error`, so such a body is put
 * under `error` to keep the server's words.
 */
async function keepingFlatErrors(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok || !/json/.test(response.headers.get('content-type') ?? '')) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const flat = body as { error?: unknown; message?: unknown; type?: unknown; param?: unknown; code?: unknown };
  const wrapped =
    flat && typeof flat === 'object' && flat.error === undefined && typeof flat.message === 'string'
      ? JSON.stringify({
          error: {
            message: flat.message,
            type: typeof flat.type === 'string' ? flat.type : 'error',
            param: typeof flat.param === 'string' ? flat.param : null,
            code:
              flat.code === undefined || flat.code === null
                ? null
                : typeof flat.code === 'string'
                  ? flat.code
                  : JSON.stringify(flat.code),
          },
        })
      : text;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(wrapped, { status: response.status, statusText: response.statusText, headers });
}
