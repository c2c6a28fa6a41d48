// A job's webhook deliveries with their attempts, for whoever may read the
// job (core/jobs/queries.ts decides that), oldest first; and the attempts of
// any page of deliveries.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { getJob } from '../jobs/queries.ts';
import { webhookEvents } from '../jobs/model.ts';
import { after, countOf, toPage, type Page, type PageQuery } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';

export const webhookAttemptSchema = z
  .object({
    attempt: z.number().int(),
    started_at: timestamp,
    duration_ms: z.number().int(),
    response_status: z.number().int().nullable().describe('The receiver’s status; null when it did not answer'),
    error: z
      .object({
        code: z
          .string()
          .describe(
            'http_status, gone (410: not retried), fetch_timeout, fetch_failed, address_not_allowed or url_not_allowed (not retried)',
          ),
        message: z.string(),
      })
      .nullable()
      .describe('Why the attempt did not deliver; null when it did'),
  })
  .meta({ id: 'JobWebhookAttempt' });

export const jobWebhookSchema = z
  .object({
    id: z.uuid().describe('The `webhook-id` header, the same on every attempt'),
    job_id: z.uuid(),
    event: z.enum(webhookEvents),
    url: z.string(),
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe('pending: an attempt is due (at `next_attempt_at` after a failed one); failed: no more attempts'),
    occurred_at: timestamp.describe('When what it tells happened: the `timestamp` of its payload'),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
    finished_at: timestamp.nullable(),
    attempts: z.array(webhookAttemptSchema),
  })
  .meta({ id: 'JobWebhook' });

const deliveryRow = jobWebhookSchema.omit({ attempts: true });
const attemptRow = webhookAttemptSchema.extend({ webhook_id: z.uuid() });

export async function listJobWebhooks(db: CommonQueryMethods, access: SiteAccess, jobId: string, query: PageQuery) {
  await getJob(db, access, jobId);
  const rows = await db.any(sql.type(deliveryRow)`
    select id, job_id, event, url, status, occurred_at, next_attempt_at, created_at, finished_at
    from job_webhooks where job_id = ${jobId} and ${after(query, 'job_webhooks')}
    order by created_at, id limit ${query.limit + 1}`);
  const page = await toPage(rows, query, () =>
    countOf(db, sql.fragment`select from job_webhooks where job_id = ${jobId}`),
  );
  return withAttempts(db, page);
}

/** A page of deliveries (a job's, or a content webhook's: ./subscriptions.ts), each with its attempts. */
export async function withAttempts<T extends { id: string }>(db: CommonQueryMethods, page: Page<T>) {
  const attempts = await db.any(sql.type(attemptRow)`
    select webhook_id, attempt, started_at, duration_ms, response_status, error from job_webhook_attempts
    where webhook_id = any(${sql.array(
      page.items.map((item) => item.id),
      'uuid',
    )}) order by webhook_id, attempt`);
  return {
    ...page,
    items: page.items.map((item) => ({
      ...item,
      attempts: attempts.filter((row) => row.webhook_id === item.id).map(({ webhook_id: _w, ...attempt }) => attempt),
    })),
  };
}
