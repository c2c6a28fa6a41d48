// The webhooks of the vendors that take work and call back (Replicate, fal),
// at POST /{site}/media/webhook/mediaprovider?provider=<vendor>&job=<id>:
// the vendor's signature is checked before anything else, by its own scheme
// (core/providers/<vendor>/webhooks.ts); a delivery already handled answers
// 2xx and changes nothing; progress, and a result for a job no longer
// waiting, are acknowledged and ignored (a late or out-of-order event). A
// success is handed to a worker to finish (fetch, store, debit), since that
// is slow work; a failure settles the job here, in the webhook's
// transaction, its reservation released.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, notFound } from '../errors.ts';
import { unstorableFields } from '../storable.ts';
import { jobColumns, jobRow } from '../jobs/model.ts';
import { schedule } from '../jobs/queue.ts';
import { fail } from '../jobs/settle.ts';
import type { Logger } from '../logger.ts';
import { asyncVendorFor } from '../providers/registry.ts';
import { resolveSite } from '../tenancy/site-access.ts';

/** The vendors that call back, as tenants read their names. */
const vendorNames = { replicate: 'Replicate', fal: 'fal' } as const;

export const webhookQuery = z.object({
  provider: z.enum(['replicate', 'fal']).describe('Which vendor calls back: its signature scheme is checked'),
  job: z
    .uuid()
    .optional()
    .describe('Our job, as the platform named it in the webhook URL it gave the vendor (places an early delivery)'),
});

export const deliverySchema = z
  .record(z.string(), z.unknown())
  .describe(
    'The vendor’s own webhook body: a Replicate prediction (`id`, `status`, `output`, `error`...), or fal’s ' +
      '`{request_id, gateway_request_id, status: OK|ERROR, payload, error}`',
  )
  .meta({ id: 'MediaProviderDelivery' });

export const deliveryReceiptSchema = z
  .object({
    received: z.literal(true),
    outcome: z
      .enum(['accepted', 'failed', 'duplicate', 'ignored'])
      .describe('duplicate: this event was handled before; ignored: progress, or the job no longer waits'),
    job_id: z.uuid().nullable(),
  })
  .meta({ id: 'WebhookReceipt' });

export type DeliveryReceipt = z.infer<typeof deliveryReceiptSchema>;

export async function receiveDelivery(
  deps: { db: CommonQueryMethods; config: Config; logger: Logger },
  siteIdentifier: string,
  query: z.infer<typeof webhookQuery>,
  headers: Record<string, string | undefined>,
  rawBody: Buffer | undefined,
): Promise<DeliveryReceipt> {
  const { db, config, logger } = deps;
  const settings = config.providers.vendors[query.provider];
  // A vendor with nothing to verify by (no key, no secret) is not one this platform uses: no job can wait for it,
  // and no call is made to learn more.
  const verifiable = settings?.apiKey !== undefined || settings?.webhookSecret !== undefined;
  const vendor = verifiable ? asyncVendorFor(config, query.provider) : undefined;
  if (!vendor) throw notFound(`No job of this site waits for ${query.provider}: it is not configured here.`);
  const delivery = await vendor.verify(headers, rawBody ?? Buffer.alloc(0));
  const unstorable = unstorableFields(delivery.output ?? null, 'body');
  if (unstorable.length > 0) throw new Problem(422, 'The delivery is not valid.', { errors: unstorable });
  return db.transaction(async (tx) => {
    const fresh = await tx.maybeOneFirst(sql.type(z.object({ fresh: z.boolean() }))`
      insert into webhook_events (source, event_id) values (${query.provider}, ${delivery.eventId})
      on conflict do nothing returning true as fresh`);
    if (!fresh) return { received: true as const, outcome: 'duplicate' as const, job_id: null };
    const site = await resolveSite(tx, siteIdentifier);
    const job = site
      ? await tx.maybeOne(sql.type(jobRow)`
          select ${jobColumns} from jobs
          where provider = ${query.provider} and provider_ref = ${delivery.ref} and site_id = ${site.id} for update`)
      : null;
    if (!job) {
      const named =
        site && query.job
          ? await tx.maybeOne(sql.type(z.object({ status: z.string(), provider_ref: z.string().nullable() }))`
              select status, provider_ref from jobs where id = ${query.job} and site_id = ${site.id}`)
          : null;
      // A fast vendor may call back before the worker has recorded its id for the work: a retryable
      // 409 rather than a 404. Either rolls back the event, so the same delivery can be made again.
      if (named?.status === 'running' && named.provider_ref === null)
        throw new Problem(409, 'The job is still being handed to the provider; deliver again shortly.', {
          headers: { 'Retry-After': '2' },
        });
      // Work the job no longer waits for: answered at once (Prefer: wait), or left behind when the job
      // moved on to its next provider. Acknowledged, so the vendor stops delivering it.
      if (named) return { received: true as const, outcome: 'ignored' as const, job_id: query.job! };
      throw notFound('No job of this site waits for that work.');
    }
    if (delivery.state === 'running' || job.status !== 'waiting' || job.provider_result !== null)
      return { received: true as const, outcome: 'ignored' as const, job_id: job.id };
    if (delivery.state !== 'succeeded') {
      // The vendor's own words are for the log; the tenant reads a plain sentence.
      logger.warn({ job_id: job.id, provider: query.provider, error: delivery.error }, 'the provider failed the work');
      await fail(tx, job, {
        code: delivery.state === 'canceled' ? 'provider_canceled' : 'provider_failed',
        message:
          delivery.state === 'canceled'
            ? `${vendorNames[query.provider]} canceled the work.`
            : `${vendorNames[query.provider]} could not make the result.`,
      });
      return { received: true as const, outcome: 'failed' as const, job_id: job.id };
    }
    if (delivery.output === null || delivery.output === undefined) {
      // A success with nothing in it can never be collected; stored, JSON null would read as no result at
      // all, and the job would run again from the start, handing the vendor the same work a second time.
      await fail(tx, job, {
        code: 'provider_invalid_response',
        message: `${query.provider} reported the work done but delivered no result.`,
      });
      return { received: true as const, outcome: 'failed' as const, job_id: job.id };
    }
    await tx.query(sql.typeAlias('void')`
      update jobs set provider_result = ${sql.jsonb((delivery.output ?? null) as never)}, stage = 'result received'
      where id = ${job.id}`);
    await schedule(tx, job);
    return { received: true as const, outcome: 'accepted' as const, job_id: job.id };
  });
}
