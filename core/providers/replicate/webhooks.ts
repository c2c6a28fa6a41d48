// Replicate's webhooks, verified and read, and its cancel. Replicate signs in
// the Standard Webhooks scheme (replicate.com/docs/topics/webhooks/verify-webhook):
// `webhook-id` (the same on a retry), `webhook-timestamp` (epoch seconds) and
// `webhook-signature`, a space-separated list of `v1,<base64>`, each an
// HMAC-SHA256 of `${id}.${timestamp}.${rawBody}` under the base64-decoded part
// of the account's `whsec_` secret. Replicate names no freshness window; we
// take Standard Webhooks' 5 minutes, against replays. The secret is the one
// configured (REPLICATE_WEBHOOK_SECRET), or read once from the API and kept.
// The body is the prediction, as a GET answers it (ROAS `webhook`).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Problem, problemType } from '../../errors.ts';
import type { VendorSettings } from '../capabilities.ts';
import type { AsyncVendor, Delivery } from '../webhooks.ts';
import { predictionSchema, replicateClient } from './client.ts';

export const defaultToleranceSeconds = 5 * 60;

const invalidSignature = (detail: string) =>
  new Problem(401, detail, { type: problemType('invalid-signature'), title: 'Invalid webhook signature' });

export type SignedHeaders = { id: string | undefined; timestamp: string | undefined; signature: string | undefined };

/** A Standard Webhooks signature (`v1,…` without the prefix) of the message under `key`. */
export function standardSignature(key: Buffer, id: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** The HMAC key of a `whsec_<base64>` secret (the prefix is optional, as Standard Webhooks libraries take it). */
export const signingKey = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/**
 * Throws 401 unless the timestamp is within `toleranceSeconds` of now and one
 * of the `v1` signatures matches, compared in constant time; returns the id.
 */
export function verifyStandardWebhook(
  key: Buffer,
  headers: SignedHeaders,
  body: Buffer,
  now: number,
  toleranceSeconds = defaultToleranceSeconds,
): string {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature)
    throw invalidSignature('Send webhook-id, webhook-timestamp and webhook-signature.');
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds)
    throw invalidSignature(`The webhook timestamp is missing or more than ${toleranceSeconds} seconds away.`);
  const expected = Buffer.from(standardSignature(key, id, timestamp, body), 'base64');
  const matches = signature.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw invalidSignature('The webhook signature does not match.');
  return id;
}

const header = (headers: Record<string, string | undefined>, name: string) =>
  headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];

// ROAS schemas_prediction_response.status. Only the last three end the work;
// `aborted` ("terminated before it started running") is Replicate's doing,
// not a cancel of ours (we set no deadline), so the job fails rather than
// reading as canceled.
const states = {
  starting: 'running',
  processing: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  canceled: 'canceled',
  aborted: 'failed',
} as const;

export type ReplicateWebhookOptions = {
  /** REPLICATE_WEBHOOK_SECRET; without it the secret is read from GET /v1/webhooks/default/secret, once. */
  secret?: string | undefined;
  toleranceSeconds?: number | undefined;
};

export function replicateWebhooks(settings: VendorSettings, options: ReplicateWebhookOptions = {}) {
  const client = replicateClient(settings);
  let fetched: Promise<string> | undefined;

  /** The signing secret: configured, or Replicate's, read once (again after a failed read). */
  function signingSecret(): Promise<string> {
    if (options.secret) return Promise.resolve(options.secret);
    fetched ??= client.signingSecret(AbortSignal.timeout(settings.timeoutMs)).catch((error: unknown) => {
      fetched = undefined;
      throw error;
    });
    return fetched;
  }

  const vendor: AsyncVendor & { signingSecret: typeof signingSecret } = {
    signingSecret,

    async verify(headers, rawBody, now = Date.now()): Promise<Delivery> {
      const secret = await signingSecret().catch((error: unknown) => {
        // Ours to mend, not the sender's: a 5xx, which Replicate retries (its webhook docs, "Retries").
        throw Object.assign(
          new Problem(503, 'Replicate’s webhook signing secret could not be read; deliver again shortly.'),
          {
            cause: error,
          },
        );
      });
      const eventId = verifyStandardWebhook(
        signingKey(secret),
        {
          id: header(headers, 'webhook-id'),
          timestamp: header(headers, 'webhook-timestamp'),
          signature: header(headers, 'webhook-signature'),
        },
        rawBody,
        now,
        options.toleranceSeconds,
      );
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      const parsed = predictionSchema.safeParse(body);
      if (!parsed.success) throw new Problem(422, 'The webhook is signed by Replicate but is not a prediction.');
      const prediction = parsed.data;
      const error =
        typeof prediction.error === 'string' && prediction.error
          ? prediction.error
          : prediction.status === 'aborted'
            ? 'Replicate aborted the prediction before it started.'
            : undefined;
      return { eventId, ref: prediction.id, state: states[prediction.status], output: prediction.output, error };
    },

    async cancel(ref, signal) {
      // Replicate answers the prediction as it now stands: canceled, or already ended, both done for us.
      await client.cancel(ref, signal);
    },
  };
  return vendor;
}
