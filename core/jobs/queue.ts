// How jobs reach graphile-worker: one queue entry per run of a job, keyed by
// the job (so a job has at most one) and flagged with its tenant. The flag is
// what fairness between tenants works with: a worker process skips the jobs
// of a tenant that holds its share of the slots (worker/tenant-slots.ts), so
// a tenant that queues thousands of jobs cannot starve another's single job.
// (Named queues did this before; graphile-worker runs them at about half the
// rate of plain jobs, and a tenant could still hold every slot of a worker.)
// It is flagged with its kind too: a worker process of a pool skips the kinds
// it does not take (WORKER_KINDS), and every worker those of a paused kind or
// tenant (worker/queue-gate.ts, ./pauses.ts). Its priority is its kind's
// (./priorities.ts) plus the job's own (./request-priority.ts), read in the
// statement that adds it, so a retry or a requeue takes the kind's priority
// of the moment and keeps the job's.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { addJob } from './enqueue.ts';
import { pausedStage } from './pauses.ts';

export const runTask = 'job__run';

const tenantFlagPrefix = 'tenant:';

export const tenantFlag = (tenantId: string) => `${tenantFlagPrefix}${tenantId}`;

export const kindFlag = (kind: string) => `kind:${kind}`;

/** The tenant a queue entry's flags name, if any. */
export function flaggedTenant(flags: Record<string, unknown> | null | undefined): string | null {
  for (const flag of Object.keys(flags ?? {}))
    if (flag.startsWith(tenantFlagPrefix)) return flag.slice(tenantFlagPrefix.length);
  return null;
}

export type Runnable = {
  id: string;
  tenant_id: string;
  kind: string;
  max_attempts: number;
  /** The job's own priority; read from its row when not given (the row exists unless the statement inserts it). */
  priority?: number;
};

/** The priority of a kind's queue entries, as an SQL value: its setting, or 0 when it has none. */
const kindPriority = (kind: string) =>
  sql.fragment`coalesce((select s.priority from job_kind_settings s where s.kind = ${kind}), 0)`;

/** A job's queue entry's priority, as an SQL value: its kind's plus its own. */
const entryPriority = (job: Runnable) =>
  sql.fragment`(${kindPriority(job.kind)} + ${
    job.priority ?? sql.fragment`coalesce((select j.priority from jobs j where j.id = ${job.id}), 0)`
  })`;

/**
 * The add_job call that queues a run of the job; `runAt` delays it. `first`:
 * the job's first entry, in the statement that inserts the job (so nothing
 * can hold its key yet), added by the cheaper mode (./enqueue.ts).
 */
export function runEntry(job: Runnable, options: { runAt?: Date; maxAttempts?: number; first?: boolean } = {}) {
  return addJob(
    runTask,
    { job_id: job.id },
    {
      flags: [tenantFlag(job.tenant_id), kindFlag(job.kind)],
      jobKey: `job:${job.id}`,
      ...(options.first ? { jobKeyMode: 'new' as const } : {}),
      maxAttempts: options.maxAttempts ?? job.max_attempts,
      priority: entryPriority(job),
      ...(options.runAt ? { runAt: options.runAt } : {}),
    },
  );
}

/**
 * Puts the job (back) on the queue, in the caller's transaction; `runAt`
 * delays it. While its kind or tenant is paused, its stage says so (a retry,
 * a deferral, a provider's answer would otherwise show a stage it does not
 * reach yet), in the same statement.
 */
export async function schedule(
  db: CommonQueryMethods,
  job: Runnable,
  options: { runAt?: Date; maxAttempts?: number } = {},
) {
  return db.query(sql.typeAlias('void')`
    with held as (
      update jobs set stage = ${pausedStage(sql.fragment`jobs.kind`, sql.fragment`jobs.tenant_id`)}
      where id = ${job.id}
        and exists (select 1 from queue_pauses p where p.kind = jobs.kind or p.tenant_id = jobs.tenant_id)
    )
    select from ${runEntry(job, options)}`);
}

/**
 * Holds a failed run's queue entry back until a provider said to come back
 * (Retry-After): graphile-worker's backoff starts from the entry's run_at,
 * which no public function moves while the entry is locked. Only while this
 * worker still holds the entry.
 */
export async function delayRetry(db: CommonQueryMethods, entryId: string, workerId: string, delayMs: number) {
  await db.query(sql.typeAlias('void')`
    update graphile_worker._private_jobs set run_at = now() + ${delayMs} * interval '1 millisecond'
    where id = ${entryId} and locked_by = ${workerId}`);
}

/**
 * Whether the queue entry with this key (an SQL expression) can still run:
 * a worker holds it now, or it has attempts left. A pending thing whose entry
 * cannot is stranded: nothing will ever run it (./stranded.ts,
 * core/webhooks/stranded.ts).
 */
export const entryCanRun = (key: ReturnType<typeof sql.fragment>) => sql.fragment`
  exists (select 1 from graphile_worker.jobs q
          where q.key = ${key} and (q.locked_at is not null or q.attempts < q.max_attempts))`;

/**
 * Tenants with at least `limit` jobs running now, across every worker: jobs
 * marked running whose queue entry a worker holds locked. Only those of
 * `kinds` when given (a pool's: worker/tenant-slots.ts), so a tenant's videos
 * in the media pool do not hold back its speech in the light one. A run that
 * ended without managing to say so (the database went away meanwhile) leaves
 * its job `running` until its entry runs again; a tenant counted busy by such
 * rows would never be given that run.
 */
export async function busyTenants(
  db: CommonQueryMethods,
  limit: number,
  kinds: readonly string[] = [],
): Promise<readonly string[]> {
  const ofKinds = kinds.length ? sql.fragment`and kind = any(${sql.array([...kinds], 'text')})` : sql.fragment``;
  return db.anyFirst(sql.type(z.object({ tenant_id: z.string() }))`
    select tenant_id from jobs
    where status = 'running' and locked_by is not null ${ofKinds}
      and exists (select 1 from graphile_worker.jobs q where q.key = 'job:' || jobs.id and q.locked_at is not null)
    group by tenant_id having count(*) >= ${limit}`);
}
