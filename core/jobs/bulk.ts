// Bulk retry of failed jobs and bulk cancel of queued or waiting ones, by the
// admin list's filters (core/jobs/admin-list.ts), for global admins: a dry run
// answers how many jobs the action would take; without it, the action walks
// them in id order, in batches of one short transaction each, and every job
// goes through the same core function as the single retry or cancel, so the
// credits move exactly as they do there (a retry reserves again, a cancel
// releases). Running jobs are left alone: they are a worker's, and the single
// cancel stops them one at a time, deliberately.
//
// One call takes at most `bulkLimit` jobs and stops starting batches shortly
// before the request's deadline; it answers what is left, and the caller calls
// again. Each call that acts leaves one audit line in the log (who, the filter,
// the counts); there is no audit table in this schema to hold it.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem } from '../errors.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import type { Logger } from '../logger.ts';
import { retryLocked } from './admin.ts';
import { adminFilters, adminJobQuery, tenantIds } from './admin-list.ts';
import { cancelJobs } from './cancel.ts';
import { jobColumns, jobRow, type JobStatus } from './model.ts';
import { filters } from './queries.ts';

/** The most jobs one call acts on: past it, the answer's `remaining` says to call again. */
export const bulkLimit = 10_000;

/**
 * Jobs per transaction. A retry takes each job's payer's account row, which
 * workers settling that payer's other jobs wait for: a hundred keeps the wait
 * in milliseconds. A cancel is one statement for the whole batch (cancelJobs).
 */
const retryBatch = 100;
const cancelBatch = 500;

/** Batches stop starting this long before the request's deadline, so the answer (with its counts) is still sent. */
const deadlineMarginMs = 3_000;

export const bulkJobRequest = z
  .strictObject({
    ...adminJobQuery.pick({
      kind: true,
      tenant_id: true,
      tenant: true,
      site_id: true,
      site: true,
      user_id: true,
      max_age_hours: true,
      created_after: true,
      created_before: true,
      error_code: true,
    }).shape,
    dry_run: z.boolean().default(false).describe('true: only count the jobs the action would take, and change nothing'),
  })
  .meta({ id: 'BulkJobRequest' });

export type BulkJobRequest = z.output<typeof bulkJobRequest>;

export const bulkJobResultSchema = z
  .object({
    dry_run: z.boolean(),
    matched: z
      .number()
      .int()
      .describe('Jobs that match the filter and are in a state the action takes (failed; queued or waiting)'),
    done: z.number().int().describe('Jobs retried or canceled by this call (0 on a dry run)'),
    skipped: z
      .number()
      .int()
      .describe('Jobs passed over: a retry whose payer can no longer cover its credits (as the single retry’s 402)'),
    remaining: z
      .number()
      .int()
      .describe('Matched jobs this call did not reach (past its limit or its time): call again for them'),
    limit: z.number().int().describe('The most jobs one call acts on'),
  })
  .meta({ id: 'BulkJobResult' });

export type BulkJobResult = z.infer<typeof bulkJobResultSchema>;

type Action = 'retry' | 'cancel';

const takes: Record<Action, readonly JobStatus[]> = { retry: ['failed'], cancel: ['queued', 'waiting'] };

export type BulkOptions = { logger: Logger; deadline: number };

/** The filter's condition on jobs, for the statuses the action takes. */
async function matching(db: CommonQueryMethods, request: BulkJobRequest, action: Action) {
  const tenants = request.tenant ? await tenantIds(db, request.tenant) : null;
  return sql.fragment`${adminFilters(request, tenants)} ${filters({ kind: request.kind })}
    and jobs.status = any(${sql.array([...takes[action]], 'text')})`;
}

/**
 * The next batch after `after` in id order, locked (in id order, before any
 * account: the order the single retry and cancel and the workers keep). A job
 * that left the action's states meanwhile is dropped by the lock's recheck.
 */
const lockBatch = (tx: CommonQueryMethods, where: ReturnType<typeof sql.fragment>, after: string, size: number) =>
  tx.any(sql.type(jobRow)`
    select ${jobColumns} from jobs where ${where} and jobs.id > ${after}::uuid
    order by jobs.id limit ${size} for update`);

const lowestId = '00000000-0000-0000-0000-000000000000';

async function bulk(
  db: CommonQueryMethods,
  actor: Actor,
  request: BulkJobRequest,
  action: Action,
  options: BulkOptions,
): Promise<BulkJobResult> {
  const admin = requireGlobalAdmin(actor);
  const where = await matching(db, request, action);
  const matched = await db.oneFirst(
    sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where ${where}`,
  );
  const result = { dry_run: request.dry_run, matched, done: 0, skipped: 0, remaining: matched, limit: bulkLimit };
  if (request.dry_run || matched === 0) return result;

  let after = lowestId;
  let reached = 0;
  while (reached < bulkLimit && Date.now() < options.deadline - deadlineMarginMs) {
    const size = Math.min(action === 'retry' ? retryBatch : cancelBatch, bulkLimit - reached);
    const batch = await db.transaction(async (tx) => {
      const jobs = await lockBatch(tx, where, after, size);
      if (action === 'cancel') {
        const canceled = await cancelJobs(
          tx,
          jobs.map((job) => job.id),
          'Canceled by an administrator (bulk)',
        );
        return { jobs, done: canceled, skipped: 0 };
      }
      let done = 0;
      let skipped = 0;
      for (const job of jobs) {
        try {
          // A savepoint each: a job whose payer cannot cover it leaves the rest of the batch to go on.
          await tx.transaction((savepoint) => retryLocked(savepoint, job, admin.userId));
          done += 1;
        } catch (error) {
          if (!(error instanceof Problem && error.status === 402)) throw error;
          skipped += 1;
        }
      }
      return { jobs, done, skipped };
    });
    if (batch.jobs.length === 0) break;
    after = batch.jobs.at(-1)!.id;
    reached += batch.jobs.length;
    result.done += batch.done;
    result.skipped += batch.skipped;
    if (batch.jobs.length < size) break;
  }
  result.remaining = Math.max(0, matched - result.done - result.skipped);

  const { dry_run: _dryRun, ...filter } = request;
  options.logger.info(
    {
      audit: `jobs.bulk_${action}`,
      admin_id: admin.userId,
      filter,
      matched,
      done: result.done,
      skipped: result.skipped,
      remaining: result.remaining,
    },
    action === 'retry' ? 'failed jobs retried in bulk' : 'queued and waiting jobs canceled in bulk',
  );
  return result;
}

/** Retries the failed jobs that match the filter (or counts them, on a dry run). */
export const bulkRetry = (db: CommonQueryMethods, actor: Actor, request: BulkJobRequest, options: BulkOptions) =>
  bulk(db, actor, request, 'retry', options);

/** Cancels the queued and waiting jobs that match the filter (or counts them, on a dry run); running ones are left. */
export const bulkCancel = (db: CommonQueryMethods, actor: Actor, request: BulkJobRequest, options: BulkOptions) =>
  bulk(db, actor, request, 'cancel', options);
