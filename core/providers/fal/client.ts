// fal's queue API, as four calls (DOC-Q: docs.fal.ai/model-endpoints/queue):
// submit (POST {queue}/{model_id}?fal_webhook=…, the body the model's input
// itself), status, result and cancel (PUT) on the URLs the submit answered.
// Our own small fetch client rather than @fal-ai/client: that SDK has no
// base-URL option (hosts hard-coded, and it only accepts fal.ai/fal.run URLs),
// so neither FAL_QUEUE_URL overrides nor a fake on 127.0.0.1 could be reached
// without rewriting its requests, and it retries 429/5xx itself, which our
// fallback chain must see.
import { JobError, permanent } from '../../jobs/errors.ts';
import { callProvider, readBody, readJson, retryAfter } from '../http.ts';
import type { Call, File, Pending, VendorSettings } from '../capabilities.ts';

export const vendor = 'fal';

/** fal's own hosts, for settings left at their defaults. */
export const falDefaults = {
  baseUrl: 'https://queue.fal.run',
  // Where fal publishes the keys its webhooks are signed with (DOC-WH "Verifying Your Webhook").
  jwksUrl: 'https://rest.alpha.fal.ai/.well-known/jwks.json',
};

/** fal's settings: the queue's key and base URL, and where its webhook keys are published. */
export type FalSettings = VendorSettings & { jwksUrl?: string | undefined };

/** What a submit answered: the request's id and the URLs to follow it by. */
export type Submitted = { requestId: string; statusUrl: string; responseUrl: string; cancelUrl: string };

export type QueueStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';

// Outputs are fetched from fal's media CDN only (v3.fal.media, fal.media…),
// never from a host an answer names: an output URL is data from outside.
const mediaHost = /^(?:[a-z0-9-]+\.)*fal\.media$/;
export const maxImageBytes = 50 * 1024 * 1024;
export const maxVideoBytes = 200 * 1024 * 1024;

/** The model id, when it has fal's shape (`owner/app[/subpath]`): it becomes a path on the queue, so nothing else is sent. */
export function modelPath(model: string): string {
  const parts = model.split('/');
  if (parts.length < 2 || parts.some((part) => !/^[\w.-]+$/.test(part) || part === '.' || part === '..'))
    throw permanent('provider_rejected', 'This is not a fal model id (owner/app, then its path).');
  return model;
}

/** A model id without its subpath (`fal-ai/flux/dev` → `fal-ai/flux`): status, result and cancel take only that (DOC-Q). */
export function appOf(model: string): string {
  const parts = model.split('/');
  // fal-js parseEndpointId: `workflows/` and `comfy/` ids name their app in three parts.
  const length = parts[0] === 'workflows' || parts[0] === 'comfy' ? 3 : 2;
  return parts.slice(0, length).join('/');
}

/** The URLs of a request, built as fal builds them, for when the submit's own are missing or elsewhere. */
export function queueUrls(baseUrl: string, model: string, requestId: string): Omit<Submitted, 'requestId'> {
  const request = `${baseUrl.replace(/\/+$/, '')}/${appOf(modelPath(model))}/requests/${encodeURIComponent(requestId)}`;
  return { responseUrl: request, statusUrl: `${request}/status`, cancelUrl: `${request}/cancel` };
}

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/**
 * fal's error answers in plain sentences, its own words kept as the cause:
 * infrastructure errors `{detail, error_type}` + X-Fal-Error-Type (DOC-REQERR),
 * model errors `{detail: [{loc, msg, type}]}` + X-Fal-Retryable (DOC-ERR).
 */
export function falRefusal(answer: { status: number; body: string; headers: Headers }): JobError {
  const { status, headers } = answer;
  const cause = new Error(`fal answered ${status}: ${answer.body.slice(0, 1000)}`);
  const options = { cause, status };
  if ((status === 429 || status >= 500) && headers.get('x-fal-retryable') !== 'false') {
    const retryAfterMs = retryAfter(headers.get('retry-after'));
    const what = status === 429 ? 'is limiting requests' : 'is unavailable';
    return new JobError('provider_unavailable', `fal ${what} (${status}).`, {
      ...options,
      transient: true,
      retryAfterMs,
    });
  }
  const refused = (message: string) => new JobError('provider_rejected', message, { ...options, transient: false });
  if (status === 401 || status === 403) return refused(`fal refused the key (${status}); check FAL_KEY.`);
  if (status === 404) return refused('fal does not know this model (404).');
  if (errorTypes(answer.body).includes('content_policy_violation'))
    return refused('fal refused the prompt under its content policy.');
  if (status === 422) return refused('fal refused the request’s input (422).');
  return refused(`fal refused the request (${status}).`);
}

// A media host refusing a file is not fal refusing our key or input.
const fileRefusal: typeof falRefusal = (answer) =>
  answer.status === 429 || answer.status >= 500
    ? falRefusal(answer)
    : new JobError('provider_invalid_response', `fal's output file could not be fetched (${answer.status}).`, {
        transient: false,
        status: answer.status,
        cause: new Error(answer.body.slice(0, 300)),
      });

// How cancel tells an ended request from a refusal, inside this module only.
const endedCode = 'fal_request_ended';

/** The machine types in a `{detail: [{type}]}` body, or in a flat `{error_type}`. */
export function errorTypes(body: unknown): string[] {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return [];
    }
  }
  const { detail, error_type: errorType } = (value ?? {}) as { detail?: unknown; error_type?: unknown };
  const types = Array.isArray(detail) ? detail.map((item) => text((item as { type?: unknown })?.type)) : [];
  return [...types, text(errorType)].filter((type): type is string => type !== undefined);
}

export function falClient(settings: VendorSettings) {
  const base = settings.baseUrl.replace(/\/+$/, '');
  const baseOrigin = new URL(base).origin;

  const headers = () => {
    if (!settings.apiKey) throw permanent('not_configured', 'fal is not configured: set FAL_KEY.');
    return { authorization: `Key ${settings.apiKey}` };
  };

  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    signal: AbortSignal,
    json?: unknown,
    refusal: typeof falRefusal = falRefusal,
  ) => {
    const response = await callProvider(vendor, {
      url,
      method,
      headers: headers(),
      json,
      timeoutMs: settings.timeoutMs,
      signal,
      refusal,
    });
    const body = await readJson(vendor, response);
    if (typeof body !== 'object' || body === null)
      throw permanent('provider_invalid_response', 'fal answered something other than JSON.');
    return body as Record<string, unknown>;
  };

  // Our key goes only to the queue's own origin, whatever URL an answer names.
  const onQueue = (url: unknown) => {
    const value = text(url);
    try {
      return value && new URL(value).origin === baseOrigin ? value : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    /** Queues the model's input; fal posts the outcome to `webhookUrl`. */
    async submit(model: string, input: Record<string, unknown>, webhookUrl: string, signal: AbortSignal) {
      const url = `${base}/${modelPath(model)}?fal_webhook=${encodeURIComponent(webhookUrl)}`;
      const body = await call('POST', url, signal, input);
      const requestId = text(body.request_id);
      if (!requestId) throw permanent('provider_invalid_response', 'fal queued the request without an id.');
      const built = queueUrls(base, model, requestId);
      return {
        requestId,
        statusUrl: onQueue(body.status_url) ?? built.statusUrl,
        responseUrl: onQueue(body.response_url) ?? built.responseUrl,
        cancelUrl: onQueue(body.cancel_url) ?? built.cancelUrl,
      } satisfies Submitted;
    },

    async status(request: Pick<Submitted, 'statusUrl'>, signal: AbortSignal) {
      const body = await call('GET', request.statusUrl, signal);
      const status = body.status;
      if (status !== 'IN_QUEUE' && status !== 'IN_PROGRESS' && status !== 'COMPLETED')
        throw permanent('provider_invalid_response', 'fal answered a status it does not document.');
      return { status: status, queuePosition: body.queue_position };
    },

    /** The model's output, once COMPLETED (a failed request answers its error, thrown as such). */
    async result(request: Pick<Submitted, 'responseUrl'>, signal: AbortSignal): Promise<unknown> {
      return call('GET', request.responseUrl, signal);
    },

    /**
     * Asks fal to stop the request: CANCELLATION_REQUESTED, or already ended
     * (ALREADY_COMPLETED, NOT_FOUND; DOC-CANCEL). Which HTTP statuses fal answers
     * those with is not documented, so an error answer naming one counts as ended.
     */
    async cancel(request: Pick<Submitted, 'cancelUrl'>, signal: AbortSignal): Promise<string> {
      try {
        const body = await call('PUT', request.cancelUrl, signal, undefined, (answer) => {
          const ended = /"status"\s*:\s*"(ALREADY_COMPLETED|NOT_FOUND)"/.exec(answer.body)?.[1];
          return ended
            ? new JobError(endedCode, ended, { transient: false, status: answer.status })
            : falRefusal(answer);
        });
        return text(body.status) ?? 'OK';
      } catch (error) {
        if (error instanceof JobError && error.code === endedCode) return error.message;
        throw error;
      }
    },

    /** An output file, from fal's media CDN (or the queue's own origin), within `maxBytes`. */
    async file(url: unknown, call: Call, maxBytes: number, contentType?: unknown): Promise<File> {
      const href = text(url);
      let target: URL | undefined;
      try {
        target = href ? new URL(href) : undefined;
      } catch {
        target = undefined;
      }
      const allowed =
        target !== undefined &&
        ((target.protocol === 'https:' && mediaHost.test(target.hostname)) || target.origin === baseOrigin);
      if (!allowed)
        throw permanent('provider_invalid_response', 'fal named an output file that is not on its own hosts.');
      const response = await callProvider(vendor, {
        url: target!.href,
        method: 'GET',
        timeoutMs: settings.timeoutMs,
        signal: call.signal,
        refusal: fileRefusal,
      });
      const bytes = await readBody(vendor, response, maxBytes);
      if (bytes.length === 0) throw permanent('provider_invalid_response', 'fal served an empty output file.');
      return { bytes, contentType: text(contentType) ?? response.headers.get('content-type') ?? undefined };
    },
  };
}

export type FalClient = ReturnType<typeof falClient>;

/**
 * Queues the input for the call's model with the call's webhook: Pending, by
 * fal's request id (the `request_id` its webhook names). fal's queue finishes
 * only by webhook here, so a call without one is refused before anything is
 * sent.
 */
export async function submitPending(client: FalClient, input: Record<string, unknown>, call: Call): Promise<Pending> {
  if (!call.webhookUrl)
    throw permanent('not_configured', 'fal finishes work by webhook, and this call has no webhook URL.');
  const submitted = await client.submit(call.model, input, call.webhookUrl, call.signal);
  return { pending: true, ref: submitted.requestId };
}
