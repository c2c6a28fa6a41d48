// What operators need to see what is stuck (the list with its filters is in
// admin-list.ts): one job with its attempts, retry of a failed job, cancel, and the counts.
import { runSteps } from '../agents/run-steps.ts';
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { callsOfJob } from '../providers/calls.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { applyEntry } from '../credits/accounts.ts';
import { Problem, notFound } from '../errors.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { withJobFileUrls, type FileLinks } from '../media/urls.ts';
import { siteSchema } from '../tenancy/sites.ts';
import { isFinished, jobById, jobSchema, jobColumns, jobErrorSchema, jobRow, toJob, type JobRow } from './model.ts';
import { alreadyFinished } from './queries.ts';
import { schedule } from './queue.ts';
import { cancel } from './cancel.ts';
import { lockJob } from './settle.ts';

export const adminJobSchema = jobSchema
  .extend({ tenant_id: z.uuid(), locked_by: z.string().nullable() })
  .meta({ id: 'AdminJob' });

export const attemptSchema = z
  .object({
    attempt: z.number().int(),
    worker_id: z.string(),
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    outcome: z
      .enum(['succeeded', 'failed', 'retrying', 'waiting', 'lost', 'canceled'])
      .nullable()
      .describe('null: still running'),
    error: jobErrorSchema.nullable(),
  })
  .meta({ id: 'JobAttempt' });

export const toAdminJob = (row: z.infer<typeof jobRow>) => ({
  ...toJob(row),
  tenant_id: row.tenant_id,
  locked_by: row.locked_by,
});

/** One job as an admin reads it; `links` make its media's file URLs, as the site's job endpoints give them. */
export async function jobWithAttempts(db: CommonQueryMethods, actor: Actor, jobId: string, links: FileLinks) {
  requireGlobalAdmin(actor);
  const row = await jobById(db, jobId);
  if (!row) throw notFound('No such job.');
  const { visibility, ...names } = await db.one(sql.type(
    z.object({ tenant_name: z.string(), site_slug: z.string(), visibility: siteSchema.shape.visibility }),
  )`
    select tenants.name as tenant_name, sites.slug as site_slug, sites.visibility
    from sites join tenants on tenants.id = sites.tenant_id where sites.id = ${row.site_id}`);
  const attempts = await db.any(sql.type(attemptSchema)`
    select attempt, worker_id, started_at, finished_at, outcome, error from job_attempts where job_id = ${jobId} order by attempt`);
  const site = { id: row.site_id, slug: names.site_slug, visibility };
  return {
    ...withJobFileUrls(links, site, toAdminJob(row)),
    ...names,
    attempts: [...attempts],
    provider_calls: [...(await callsOfJob(db, jobId))],
    // An agent run's steps: each model and tool call with its tokens, duration and cost (empty for other kinds).
    agent_steps: [...(await runSteps(db, jobId))],
  };
}

/** A failed job runs again from the start: credits are reserved again (402 when they no longer cover it). */
export async function retryJob(db: CommonQueryMethods, config: Config, actor: Actor, jobId: string) {
  const admin = requireGlobalAdmin(actor);
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, jobId);
    if (!job) throw notFound('No such job.');
    return toAdminJob(await retryLocked(tx, job, admin.userId));
  });
}

/**
 * The retry itself, of a job the caller has locked (one by retryJob, each of
 * a batch by core/jobs/bulk.ts): 409 unless it failed, 402 when its payer can
 * no longer cover the reservation.
 */
export async function retryLocked(tx: CommonQueryMethods, job: JobRow, adminId: string): Promise<JobRow> {
  if (job.status !== 'failed') throw new Problem(409, `Only failed jobs can be retried; this one is ${job.status}.`);
  if (job.credits_reserved > 0 && job.account_id) {
    await applyEntry(tx, {
      accountId: job.account_id,
      tenantId: job.tenant_id,
      siteId: job.site_id,
      userId: job.user_id,
      kind: 'reservation',
      amount: 0,
      reservedChange: job.credits_reserved,
      jobId: job.id,
      operation: job.kind,
      actorId: adminId,
      reason: 'Reserved again for a retry',
    });
  }
  const row = await tx.one(sql.type(jobRow)`
    update jobs set status = 'queued', progress = 0, stage = 'retrying', error = null, output = null, finished_at = null, started_at = null,
                    provider = null, provider_ref = null, provider_result = null, waiting_at = null
    where id = ${job.id} returning ${jobColumns}`);
  await schedule(tx, row);
  return row;
}

export async function adminCancelJob(db: CommonQueryMethods, actor: Actor, jobId: string) {
  requireGlobalAdmin(actor);
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, jobId);
    if (!job) throw notFound('No such job.');
    if (isFinished(job.status)) throw alreadyFinished(job.status);
    return toAdminJob(await cancel(tx, job, 'Canceled by an administrator'));
  });
}

export const jobStatsSchema = z
  .object({
    by_status_and_kind: z.array(z.object({ status: z.string(), kind: z.string(), count: z.number().int() })),
    queued: z.array(
      z.object({
        kind: z.string(),
        count: z.number().int(),
        oldest_age_seconds: z.number().describe('How long the oldest queued job of this kind has waited'),
      }),
    ),
    workers: z.array(
      z.object({
        id: z.string(),
        hostname: z.string(),
        pid: z.number().int(),
        concurrency: z.number().int(),
        running: z.number().int(),
        started_at: timestamp,
        beat_at: timestamp,
        alive: z.boolean().describe('false: its heartbeat stopped; its jobs are released for others'),
      }),
    ),
    queue: z.object({
      pending: z.number().int().describe('Runs waiting in the worker queue, all tasks'),
      locked: z.number().int().describe('Runs a worker holds now'),
      failed_permanently: z.number().int(),
    }),
  })
  .meta({ id: 'JobStats' });

export async function jobStatistics(
  db: CommonQueryMethods,
  actor: Actor,
  config: Config,
): Promise<z.infer<typeof jobStatsSchema>> {
  requireGlobalAdmin(actor);
  const byStatus = await db.any(sql.type(jobStatsSchema.shape.by_status_and_kind.element)`
    select status, kind, count(*)::int as count from jobs group by status, kind order by status, kind`);
  const queued = await db.any(sql.type(jobStatsSchema.shape.queued.element)`
    select kind, count(*)::int as count, extract(epoch from now() - min(created_at))::float8 as oldest_age_seconds
    from jobs where status = 'queued' group by kind order by kind`);
  const workers = await db.any(sql.type(jobStatsSchema.shape.workers.element)`
    select p.id, p.hostname, p.pid, p.concurrency, p.started_at, p.beat_at,
           p.beat_at > now() - ${config.worker.lostAfterMs} * interval '1 millisecond' as alive,
           (select count(*)::int from jobs where jobs.locked_by = any(p.worker_ids) and jobs.status = 'running') as running
    from worker_processes p order by p.started_at`);
  const queue = await db.one(sql.type(jobStatsSchema.shape.queue)`
    select count(*) filter (where locked_at is null and attempts < max_attempts)::int as pending,
           count(*) filter (where locked_at is not null)::int as locked,
           count(*) filter (where attempts >= max_attempts and locked_at is null)::int as failed_permanently
    from graphile_worker.jobs`);
  return { by_status_and_kind: [...byStatus], queued: [...queued], workers: [...workers], queue };
}
