// Replicate's HTTP API, the part the adapters use: create a prediction (with
// the webhook that finishes it, and `Prefer: wait` for short work), read and
// cancel one, read the account's webhook signing secret, and fetch the files
// a prediction made. Our own small client rather than the `replicate` npm
// SDK: the SDK retries every 429 up to five times with its own backoff and no
// way to turn that off (lib/util.js withAutomaticRetries; its Retry-After
// branch never runs for a fetch answer), so our chain would neither see the
// 429 nor learn the wait; and it has no timeout or size cap of its own.
// Reference: Replicate's OpenAPI document ("Replicate HTTP API" 1.0.0-a1),
// cited below as ROAS.
import { z } from 'zod';
import { JobError, permanent } from '../../jobs/errors.ts';
import type { Call, File, Pending, VendorSettings } from '../capabilities.ts';
import { callProvider, maxProviderBytes, readBody, readJson, retryAfter } from '../http.ts';

const name = 'Replicate';

export const defaultBaseUrl = 'https://api.replicate.com';

/** ROAS components.schemas.schemas_prediction_response, the fields we read. */
export const predictionSchema = z.object({
  id: z.string().min(1),
  status: z.enum(['starting', 'processing', 'succeeded', 'failed', 'canceled', 'aborted']),
  output: z.unknown(),
  error: z.unknown(),
});

export type Prediction = z.infer<typeof predictionSchema>;

// ROAS schemas_version_prediction_request.version: `owner/name` (an official
// model), `owner/name:<64 hex>`, or the bare 64-hex version id.
const officialModel = /^([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*)$/;
const modelVersion = /^(?:[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*:)?([0-9a-f]{64})$/;

export type ReplicateClient = ReturnType<typeof replicateClient>;

export function replicateClient(settings: VendorSettings) {
  // The base URL is the API's origin (REPLICATE_BASE_URL); one ending in /v1, as the SDK's does, works too.
  const root = settings.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const rootOrigin = new URL(root).origin;

  async function send(
    path: string,
    signal: AbortSignal,
    request: { method?: 'GET' | 'POST'; json?: unknown; headers?: Record<string, string> } = {},
  ) {
    if (!settings.apiKey) throw permanent('not_configured', 'Replicate is not configured: set REPLICATE_API_TOKEN.');
    const response = await callProvider(name, {
      url: `${root}${path}`,
      method: request.method ?? 'GET',
      apiKey: settings.apiKey,
      json: request.json,
      headers: request.headers,
      timeoutMs: settings.timeoutMs,
      signal,
      refusal,
    });
    return readJson(name, response);
  }

  async function prediction(path: string, signal: AbortSignal, request?: Parameters<typeof send>[2]) {
    const parsed = predictionSchema.safeParse(await send(path, signal, request));
    if (!parsed.success)
      throw permanent(
        'provider_invalid_response',
        'Replicate answered something other than a prediction.',
        parsed.error,
      );
    return parsed.data;
  }

  return {
    /**
     * Starts a prediction that reports to `webhookUrl` when it ends (only the
     * terminal event: nothing else is acted on). `wait`: hold the request
     * while the model runs (ROAS parameters_prefer_header, 1–60 s), up to 50
     * s and well inside our own timeout, so short work comes back finished.
     */
    async create(
      model: string,
      input: Record<string, unknown>,
      options: { webhookUrl: string; wait: boolean; signal: AbortSignal },
    ) {
      const waitSeconds = Math.min(50, Math.floor(settings.timeoutMs / 1000) - 5);
      const headers: Record<string, string> = options.wait && waitSeconds >= 1 ? { prefer: `wait=${waitSeconds}` } : {};
      const official = officialModel.exec(model);
      const version = official ? undefined : modelVersion.exec(model)?.[1];
      if (!official && !version)
        throw permanent('provider_rejected', `${model} is not a Replicate model (owner/name, or owner/name:version).`);
      // Official models at their own path, which takes no `version` (additionalProperties: false);
      // others at /v1/predictions with the version id (ROAS).
      const path = official
        ? `/v1/models/${encodeURIComponent(official[1]!)}/${encodeURIComponent(official[2]!)}/predictions`
        : '/v1/predictions';
      const json = {
        ...(version ? { version } : {}),
        input,
        webhook: options.webhookUrl,
        webhook_events_filter: ['completed'],
      };
      return prediction(path, options.signal, { method: 'POST', json, headers });
    },

    get: (id: string, signal: AbortSignal) => prediction(`/v1/predictions/${encodeURIComponent(id)}`, signal),

    /** ROAS paths./predictions/{prediction_id}/cancel: no body; answers the prediction. */
    cancel: (id: string, signal: AbortSignal) =>
      prediction(`/v1/predictions/${encodeURIComponent(id)}/cancel`, signal, { method: 'POST' }),

    /** ROAS paths./webhooks/default/secret: `{"key": "whsec_…"}`, the account's webhook signing secret. */
    async signingSecret(signal: AbortSignal): Promise<string> {
      const parsed = z.object({ key: z.string().min(8) }).safeParse(await send('/v1/webhooks/default/secret', signal));
      if (!parsed.success)
        throw permanent('provider_invalid_response', 'Replicate answered no webhook signing secret.', parsed.error);
      return parsed.data.key;
    },

    /**
     * A file a prediction made. Only from Replicate's file host
     * (`replicate.delivery` and its subdomains, over https: ROAS
     * paths./predictions/{prediction_id}.get) or the configured API's own
     * origin (a test's fake): an output naming any other address is not
     * fetched, so a forged or odd output cannot point us into our network.
     * Sent with the token, as ROAS says those files need.
     */
    async download(url: string, signal: AbortSignal, maxBytes = maxProviderBytes): Promise<File> {
      if (!isOutputUrl(url, rootOrigin))
        throw permanent(
          'provider_invalid_response',
          'Replicate named an output file on a host that is not its own.',
          new Error(url),
        );
      const response = await callProvider(name, {
        url,
        method: 'GET',
        apiKey: settings.apiKey,
        timeoutMs: settings.timeoutMs,
        signal,
        refusal,
      });
      const contentType = response.headers.get('content-type')?.split(';')[0]?.trim() || undefined;
      return { bytes: await readBody(name, response, maxBytes), contentType };
    },
  };
}

export function isOutputUrl(url: string, allowedOrigin: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.origin === allowedOrigin) return true;
  const host = parsed.hostname;
  return (
    parsed.protocol === 'https:' &&
    parsed.port === '' &&
    !parsed.username &&
    !parsed.password &&
    (host === 'replicate.delivery' || host.endsWith('.replicate.delivery'))
  );
}

/**
 * Replicate's error answers, read into plain sentences (its own words, a
 * problem+json body — RFC 7807, as replicate-python's ReplicateError reads
 * it — kept as the cause, for the log). 5xx are left to callProvider.
 */
function refusal({ status, body, headers }: { status: number; body: string; headers: Headers }): JobError | undefined {
  const cause = new Error(`Replicate answered ${status}: ${body.slice(0, 1000)}`);
  const refused = (message: string) => new JobError('provider_rejected', message, { transient: false, cause, status });
  if (status === 429) {
    // Retry-After, or the wait named in the body: `retry_after` in seconds, or
    // "…resets in ~30s." (Replicate's rate-limit doc shows only the latter).
    const named = /"retry_after"\s*:\s*(\d+)/.exec(body)?.[1] ?? /resets in ~(\d+)\s*s/.exec(body)?.[1] ?? null;
    const retryAfterMs = retryAfter(headers.get('retry-after') ?? named);
    const wait = retryAfterMs === undefined ? '' : ` (asked to wait ${Math.ceil(retryAfterMs / 1000)} s)`;
    return new JobError('provider_unavailable', `Replicate is limiting our requests${wait}.`, {
      transient: true,
      cause,
      retryAfterMs,
      status,
    });
  }
  if (status === 401) return refused('Replicate refused the API token (REPLICATE_API_TOKEN).');
  if (status === 402) return refused('Replicate has no credit left on the account to run the model.');
  if (status === 404) return refused('Replicate does not know this model, prediction or file.');
  if (status === 422) return refused('Replicate refused the input for this model.');
  if (status >= 400 && status < 500) return refused(`Replicate refused the request (${status}).`);
  return undefined;
}

/** The file URLs of a prediction's output: one URL, or a list of them (ROAS: "Any files will be represented as HTTPS URLs"). */
export function outputUrls(output: unknown): string[] {
  if (typeof output === 'string' && output) return [output];
  if (Array.isArray(output) && output.length > 0 && output.every((item) => typeof item === 'string')) return output;
  // `output` is null once Replicate removed the data, an hour after the prediction (ROAS predictions.get).
  throw permanent(
    'provider_invalid_response',
    output === null || output === undefined
      ? 'Replicate no longer has the output (it keeps it for an hour).'
      : 'Replicate answered an output that names no file.',
  );
}

/**
 * Starts the call's prediction: its output when Replicate answered it
 * finished, Pending (its id) while it runs, for the webhook to finish.
 * Replicate must be able to report back: the call names a webhook URL.
 */
export async function predict(
  client: ReplicateClient,
  call: Call,
  input: Record<string, unknown>,
  wait: boolean,
): Promise<{ output: unknown } | Pending> {
  if (!call.webhookUrl)
    throw permanent('not_configured', 'Replicate reports by webhook, and this call names no webhook URL.');
  const prediction = await client.create(call.model, input, { webhookUrl: call.webhookUrl, wait, signal: call.signal });
  if (prediction.status === 'starting' || prediction.status === 'processing')
    return { pending: true, ref: prediction.id };
  if (prediction.status === 'succeeded') return { output: prediction.output };
  throw permanent(
    'provider_failed',
    prediction.status === 'failed'
      ? 'The model failed on Replicate.'
      : 'Replicate stopped the prediction before it finished.',
    new Error(
      `Replicate prediction ${prediction.id} ${prediction.status}: ${prediction.error == null ? '' : typeof prediction.error === 'string' ? prediction.error : JSON.stringify(prediction.error)}`,
    ),
  );
}
