// fal's webhooks, verified the way fal signs them (DOC-WH, "Verifying Your
// Webhook": docs.fal.ai/model-apis/model-endpoints/webhooks): ED25519 over
// `request_id \n user_id \n timestamp \n hex(sha256(body))`, the signature in
// X-Fal-Webhook-Signature as hex, checked against each key of fal's JWKS and a
// timestamp within 5 minutes. The keys are cached for up to a day (what fal
// allows) and fetched again once when no key verifies, which is how a rotated
// key is picked up. And cancel, through the queue's cancel URL.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { Problem, problemType } from '../../errors.ts';
import { JobError, permanent } from '../../jobs/errors.ts';
import { callProvider, readJson } from '../http.ts';
import type { AsyncVendor, Delivery } from '../webhooks.ts';
import { errorTypes, falClient, falDefaults, queueUrls, vendor, type FalSettings } from './client.ts';

export const toleranceSeconds = 5 * 60;
const keysMaxAgeMs = 24 * 60 * 60 * 1000;
// A signature no cached key verifies fetches the keys again, but not more often
// than this: forged webhooks must not turn into a stream of requests to fal.
const refetchAfterMs = 60 * 1000;

const invalidSignature = (detail: string) =>
  new Problem(401, detail, { type: problemType('invalid-signature'), title: 'Invalid webhook signature' });

// What fal posts (DOC-WH "Successful result", "Response errors", "Payload errors"; fal-js WebHookResponse).
const deliverySchema = z.object({
  request_id: z.string().min(1).max(200),
  gateway_request_id: z.string().max(200).nullish(),
  status: z.enum(['OK', 'ERROR']),
  payload: z.unknown(),
  error: z.string().nullish(),
  payload_error: z.string().nullish(),
});

type Keys = { keys: KeyObject[]; fetchedAt: number };

// By JWKS URL, for every fal vendor in the process; one fetch at a time per URL.
const cached = new Map<string, Keys>();
const fetching = new Map<string, Promise<Keys>>();

/** fal's public keys, from a JWKS of OKP/Ed25519 keys (the others, and any unreadable, are skipped). */
async function fetchKeys(url: string, timeoutMs: number, now: number): Promise<Keys> {
  let body: unknown;
  try {
    const response = await callProvider(vendor, {
      url,
      method: 'GET',
      timeoutMs,
      signal: new AbortController().signal,
    });
    body = await readJson(vendor, response);
  } catch (error) {
    // Not the sender's fault: a 503 makes fal deliver again later (DOC-WH "Retry policy").
    if (!(error instanceof JobError)) throw error;
    throw new Problem(503, 'fal’s webhook signing keys could not be fetched; the delivery can be made again.');
  }
  const listed = (body as { keys?: unknown } | undefined)?.keys;
  const keys: KeyObject[] = [];
  for (const jwk of (Array.isArray(listed) ? listed : []) as ({ kty?: unknown; crv?: unknown; x?: unknown } | null)[]) {
    if (jwk?.kty !== 'OKP' || jwk?.crv !== 'Ed25519' || typeof jwk?.x !== 'string') continue;
    try {
      keys.push(createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }));
    } catch {
      // A key node cannot read verifies nothing; the others still may.
    }
  }
  const fetched = { keys, fetchedAt: now };
  cached.set(url, fetched);
  return fetched;
}

function keysFrom(url: string, timeoutMs: number, now: number): Promise<Keys> {
  const running = fetching.get(url);
  if (running) return running;
  const fetched = fetchKeys(url, timeoutMs, now).finally(() => fetching.delete(url));
  fetching.set(url, fetched);
  return fetched;
}

/** Reads a header whatever its case (node lowercases them; a test may not). */
function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  const found = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return found || undefined;
}

/** fal's words for a failed request, for the log: its error and the model's `detail`. */
function failure(body: z.infer<typeof deliverySchema>): string {
  const detail = (body.payload as { detail?: unknown } | null)?.detail;
  const said =
    typeof detail === 'string'
      ? detail
      : Array.isArray(detail)
        ? (detail as ({ loc?: unknown[]; msg?: string } | null)[])
            .map((item) => `${(item?.loc ?? []).join('.')}: ${item?.msg ?? ''}`)
            .join('; ')
        : '';
  const types = errorTypes(body.payload);
  return [
    body.error ?? body.payload_error ?? 'fal reported an error',
    said,
    types.length ? `(${types.join(', ')})` : '',
  ]
    .filter(Boolean)
    .join(' ')
    .slice(0, 1000);
}

/** The ref `cancel` takes: the model with fal's request id, since fal's cancel URL names the model's app. */
export const falCancelRef = (model: string, requestId: string) => `${model}#${requestId}`;

export function falWebhooks(settings: FalSettings): AsyncVendor {
  const jwksUrl = settings.jwksUrl ?? falDefaults.jwksUrl;
  const client = falClient(settings);

  const signedBy = (keys: Keys, message: Buffer, signature: Buffer) =>
    keys.keys.some((key) => {
      try {
        return verify(null, message, key, signature);
      } catch {
        return false;
      }
    });

  return {
    async verify(headers, rawBody, now = Date.now()): Promise<Delivery> {
      const requestId = header(headers, 'x-fal-webhook-request-id');
      const userId = header(headers, 'x-fal-webhook-user-id');
      const timestamp = header(headers, 'x-fal-webhook-timestamp');
      const signature = header(headers, 'x-fal-webhook-signature');
      if (!requestId || !userId || !timestamp || !signature)
        throw invalidSignature(
          'Send X-Fal-Webhook-Request-Id, X-Fal-Webhook-User-Id, X-Fal-Webhook-Timestamp and X-Fal-Webhook-Signature.',
        );
      if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds)
        throw invalidSignature('The webhook timestamp is missing or more than 5 minutes away.');
      if (!/^(?:[0-9a-f]{2}){1,128}$/i.test(signature)) throw invalidSignature('The webhook signature is not hex.');
      const digest = createHash('sha256').update(rawBody).digest('hex');
      const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`, 'utf8');
      const given = Buffer.from(signature, 'hex');

      const known = cached.get(jwksUrl);
      let keys =
        known && now - known.fetchedAt < keysMaxAgeMs ? known : await keysFrom(jwksUrl, settings.timeoutMs, now);
      if (!signedBy(keys, message, given) && now - keys.fetchedAt >= refetchAfterMs) {
        keys = await keysFrom(jwksUrl, settings.timeoutMs, now);
      }
      if (!signedBy(keys, message, given)) throw invalidSignature('The webhook signature does not match fal’s keys.');

      let parsed: unknown;
      try {
        parsed = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new Problem(422, 'The delivery is not JSON.');
      }
      const read = deliverySchema.safeParse(parsed);
      if (!read.success)
        throw new Problem(422, 'The delivery is not one of fal’s.', {
          errors: read.error.issues.map((issue) => ({
            path: ['body', ...issue.path].join('.'),
            message: issue.message,
          })),
        });
      const body = read.data;
      if (body.request_id !== requestId)
        throw new Problem(422, 'The delivery names another request than its signed header.');
      const delivered = body.status === 'OK' && body.payload !== null && body.payload !== undefined;
      return {
        // fal retries a delivery with the same request and status (DOC-WH "Retry policy").
        eventId: `${body.request_id}:${body.status}`,
        ref: body.request_id,
        state: delivered ? 'succeeded' : 'failed',
        output: body.payload ?? null,
        ...(delivered ? {} : { error: failure(body) }),
      };
    },

    async cancel(ref, signal) {
      const split = ref.lastIndexOf('#');
      if (split <= 0 || split === ref.length - 1)
        throw permanent('provider_rejected', 'A fal request is canceled by its model and id (model#request_id).');
      await client.cancel(queueUrls(settings.baseUrl, ref.slice(0, split), ref.slice(split + 1)), signal);
    },
  };
}
