// The job as users and admins see it, and the one list of its columns.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

export const jobStatuses = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatus = (typeof jobStatuses)[number];

/** States a job never leaves. */
export const finished: readonly JobStatus[] = ['succeeded', 'failed', 'canceled'];
export const isFinished = (status: JobStatus) => finished.includes(status);

export const jobErrorSchema = z
  .object({
    code: z
      .string()
      .describe(
        'Stable, machine-readable: provider_unavailable, provider_rejected, invalid_input, not_configured, canceled, ...',
      ),
    message: z.string(),
    transient: z.boolean().optional().describe('true: the job will be (or was) retried'),
  })
  .meta({ id: 'JobError' });

export type JobErrorBody = z.infer<typeof jobErrorSchema>;

/** What a job's webhook may be told of: it started running, its progress changed, it ended. */
export const webhookEvents = ['start', 'progress', 'completed'] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

export const jobSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    user_id: z.uuid().nullable().describe('The user who submitted it; null for a service account'),
    kind: z.string().describe('speech, image, video, ...'),
    status: z.enum(jobStatuses),
    progress: z
      .number()
      .min(0)
      .max(1)
      .describe('How far it is, from 0 to 1, rounded to two decimals (0.47 is 47 %); `stage` says at what'),
    stage: z.string().describe('What it is doing now, in words'),
    input: z.record(z.string(), z.unknown()),
    output: z.record(z.string(), z.unknown()).nullable(),
    error: jobErrorSchema.nullable(),
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    priority: z
      .number()
      .int()
      .describe('Its own priority as submitted (-10 to 10, lower runs first, 0 by default), added to its kind’s'),
    credits_reserved: z.number().int(),
    credits_charged: z.number().int(),
    provider: z.string().nullable(),
    test_mode: z
      .boolean()
      .describe(
        'Submitted in test mode (the tenant’s or the service account’s): run on the local stand-ins at no charge, its output marked `test`',
      ),
    media_id: z.uuid().nullable(),
    media_ids: z.array(z.uuid()),
    media_url: z
      .string()
      .nullable()
      .optional()
      .describe(
        'The file of media_id, fetchable without a token: public on a public site, else signed until media_urls_expire_at ' +
          '(as a media item’s url). Given wherever a site’s job is answered: its job endpoints (submit, read, list, ' +
          'cancel, events, an agent run’s cancel), the MCP job tools, the job’s webhooks (at PUBLIC_URL, else the API’s ' +
          'port on localhost) and GET /admin/jobs/{job_id}; not by the admin list, retry and cancel',
      ),
    media_urls: z
      .array(z.string())
      .optional()
      .describe('The files of media_ids, in the same order, as media_url; given where media_url is'),
    media_urls_expire_at: timestamp
      .nullable()
      .optional()
      .describe(
        'When the signed media_url and media_urls stop working (read the job again for fresh ones); null when public or none',
      ),
    webhook: z.string().nullable().describe('Where the job’s events are sent (Standard Webhooks); null for none'),
    webhook_events: z.array(z.enum(webhookEvents)).describe('The events sent to `webhook`; empty without one'),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    waiting_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    canceled_at: timestamp.nullable(),
    updated_at: timestamp,
  })
  .meta({ id: 'Job' });

export type Job = z.infer<typeof jobSchema>;

/** What the domain needs beside the public fields. */
export const jobRow = jobSchema.extend({
  tenant_id: z.uuid(),
  actor_id: z.uuid().nullable(),
  account_id: z.uuid().nullable(),
  provider_ref: z.string().nullable(),
  provider_result: z.unknown().nullable(),
  locked_by: z.string().nullable(),
  /** Credits per unit agreed at submit; null for jobs submitted before it was kept. */
  unit_price: z.number().nullable(),
});

export type JobRow = z.infer<typeof jobRow>;

export const jobColumns = sql.fragment`
  jobs.id, jobs.tenant_id, jobs.actor_id, jobs.site_id, jobs.user_id, jobs.kind, jobs.status, jobs.progress::float8 as progress, jobs.stage,
  jobs.input, jobs.output, jobs.error, jobs.attempts, jobs.max_attempts, jobs.priority, jobs.account_id, jobs.credits_reserved,
  jobs.credits_charged, jobs.provider, jobs.test_mode, jobs.provider_ref, jobs.provider_result, jobs.locked_by, jobs.media_id, jobs.media_ids,
  jobs.webhook, jobs.webhook_events, jobs.unit_price::float8 as unit_price, jobs.created_at, jobs.started_at, jobs.waiting_at, jobs.finished_at, jobs.canceled_at, jobs.updated_at`;

/** The job's row as it is now; null once it is gone. */
export const jobById = (db: CommonQueryMethods, id: string): Promise<JobRow | null> =>
  db.maybeOne(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${id}`);

/**
 * Progress is stored as a `real`: read as a double, 0.1 came out as
 * 0.10000000149011612. Two decimals are the whole percent a person reads.
 */
export const roundedProgress = (progress: number) => Math.round(progress * 100) / 100;

/** The public shape: internal bookkeeping stays inside. */
export function toJob(row: JobRow): Job {
  const {
    tenant_id: _t,
    actor_id: _actor,
    account_id: _a,
    provider_ref: _r,
    provider_result: _p,
    locked_by: _l,
    unit_price: _u,
    ...visible
  } = row;
  return { ...visible, progress: roundedProgress(visible.progress) };
}

export const jobPath = (siteIdentifier: string, jobId: string) => `/${siteIdentifier}/jobs/${jobId}`;
