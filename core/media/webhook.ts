// The asynchronous media provider's result deliveries. The signature is
// checked before anything else (HMAC-SHA256 over `id.timestamp.body`, the
// Standard Webhooks scheme, 5 minutes' tolerance); a delivery already handled
// answers 2xx and changes nothing; a result for a job no longer waiting is
// acknowledged and ignored. A success is handed to a worker to finish (encode,
// store, debit), since that is slow work; a failure settles the job here.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { unstorableFields } from '../storable.ts';
import { jobColumns, jobRow } from '../jobs/model.ts';
import { schedule } from '../jobs/queue.ts';
import { fail } from '../jobs/settle.ts';
import { resolveSite } from '../tenancy/site-access.ts';

export const toleranceSeconds = 5 * 60;

export const deliverySchema = z
  .object({
    job_ref: z
      .string()
      .min(1)
      .max(200)
      .describe('The provider’s id for the work, as it answered when the job was submitted'),
    reference: z.uuid().optional().describe('Our job id, as sent to the provider with the work'),
    status: z.enum(['succeeded', 'failed']),
    output: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'For speech: audio_base64 or audio_url; for video: video_base64 or video_url (a URL on the provider’s own origin)',
      ),
    error: z.object({ code: z.string().max(100).optional(), message: z.string().max(1000) }).optional(),
  })
  .meta({ id: 'MediaProviderDelivery' });

export const deliveryReceiptSchema = z
  .object({
    received: z.literal(true),
    outcome: z
      .enum(['accepted', 'failed', 'duplicate', 'ignored'])
      .describe('duplicate: this event id was handled before; ignored: the job no longer waits'),
    job_id: z.uuid().nullable(),
  })
  .meta({ id: 'WebhookReceipt' });

const invalidSignature = (detail: string) =>
  new Problem(401, detail, { type: problemType('invalid-signature'), title: 'Invalid webhook signature' });

export type SignedHeaders = { id: string | undefined; timestamp: string | undefined; signature: string | undefined };

export function sign(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** Throws 401 unless one of the signatures (`v1,<base64>`, space-separated) matches and the timestamp is recent. */
export function verifySignature(secret: string, headers: SignedHeaders, body: Buffer, now = Date.now()): string {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature)
    throw invalidSignature('Send webhook-id, webhook-timestamp and webhook-signature.');
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw invalidSignature('The webhook timestamp is missing or more than 5 minutes away.');
  }
  const expected = Buffer.from(sign(secret, id, timestamp, body), 'base64');
  const matches = signature.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw invalidSignature('The webhook signature does not match.');
  return id;
}

export async function receiveDelivery(
  db: CommonQueryMethods,
  config: Config,
  siteIdentifier: string,
  headers: SignedHeaders,
  rawBody: Buffer | undefined,
) {
  const secret = config.mediaProvider.webhookSecret;
  if (!secret) throw new Problem(503, 'No media provider is configured (MEDIA_PROVIDER_WEBHOOK_SECRET).');
  const eventId = verifySignature(secret, headers, rawBody ?? Buffer.alloc(0));
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse((rawBody ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    throw new Problem(400, 'The body is not JSON.');
  }
  const parsed = deliverySchema.safeParse(parsedBody);
  if (!parsed.success) {
    throw new Problem(422, 'The delivery is not valid.', {
      errors: parsed.error.issues.map((issue) => ({ path: ['body', ...issue.path].join('.'), message: issue.message })),
    });
  }
  const unstorable = unstorableFields(parsed.data, 'body');
  if (unstorable.length > 0) throw new Problem(422, 'The delivery is not valid.', { errors: unstorable });
  const body = parsed.data;
  return db.transaction(async (tx) => {
    const fresh = await tx.maybeOneFirst(sql.type(z.object({ fresh: z.boolean() }))`
      insert into webhook_events (source, event_id) values ('mediaprovider', ${eventId}) on conflict do nothing returning true as fresh`);
    if (!fresh) return { received: true as const, outcome: 'duplicate' as const, job_id: null };
    const site = await resolveSite(tx, siteIdentifier);
    const job = site
      ? await tx.maybeOne(sql.type(jobRow)`
          select ${jobColumns} from jobs where provider = 'mediaprovider' and provider_ref = ${body.job_ref} and site_id = ${site.id} for update`)
      : null;
    if (!job) {
      // A fast provider may call back before the worker has recorded its job_ref:
      // a retryable 409 rather than a 404. Either rolls back the event, so the
      // same delivery can be made again.
      const handing =
        site && body.reference
          ? await tx.exists(sql.type(z.object({}))`
            select 1 from jobs where id = ${body.reference} and site_id = ${site.id} and status = 'running' and provider_ref is null`)
          : false;
      if (handing)
        throw new Problem(409, 'The job is still being handed to the provider; deliver again shortly.', {
          headers: { 'Retry-After': '2' },
        });
      throw notFound('No job of this site waits for that job_ref.');
    }
    if (job.status !== 'waiting' || job.provider_result !== null)
      return { received: true as const, outcome: 'ignored' as const, job_id: job.id };
    if (body.status === 'failed') {
      await fail(tx, job, {
        code: 'provider_failed',
        message: body.error?.message ?? 'The media provider reported a failure.',
      });
      return { received: true as const, outcome: 'failed' as const, job_id: job.id };
    }
    await tx.query(
      sql.typeAlias(
        'void',
      )`update jobs set provider_result = ${sql.jsonb((body.output ?? {}) as never)}, stage = 'result received' where id = ${job.id}`,
    );
    await schedule(tx, job);
    return { received: true as const, outcome: 'accepted' as const, job_id: job.id };
  });
}
