// Canceling jobs, one or a whole tenant's at once: each job's queue entry is
// taken off the queue (a running one's is left to its worker, which hears of
// the cancel and stops), and in one statement for them all the jobs are
// canceled, their open attempts closed and their reservations released (an
// entry in the ledger per job, each account's reserved sum lowered once).
// Then each canceled job that has a webhook is announced, and work a vendor
// holds for a canceled job is canceled there too, by a queued task
// (provider__cancel): it stops rendering, and costing, upstream. An agent run
// is charged the steps it recorded before the cancel, as its failure would be. The callers lock
// the jobs first (in id order, before any account), as a worker settling one
// of them holds its row before its payer's account.
//
// Why in one statement rather than a cancel per job: blocking a tenant that
// flooded the queue cancels every job it has queued, in the block's
// transaction. One by one, 10,000 jobs took 17.5 s, so a flood past about
// 17,000 jobs outlasted the block's 30 s and could not be blocked at all.
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { z } from 'zod';
import { countFinishedJob } from '../metrics/jobs.ts';
import { announce } from '../webhooks/announce.ts';
import { enqueue } from './enqueue.ts';
import { finished, jobById, jobColumns, jobRow, type JobRow } from './model.ts';

/** The vendors that hold work for a job until they call back, and can be told to stop it. */
const vendorsThatCallBack = ['replicate', 'fal'] as const;

const canceledJobs = z.object({
  canceled: z.number(),
  unrun: z.array(z.object({ kind: z.string(), created_at: z.string(), started_at: z.string().nullable() })),
  told: z.array(z.uuid()),
  atVendors: z.array(z.object({ provider: z.string(), ref: z.string(), model: z.string().nullable() })),
});

/**
 * Cancels the jobs (the caller has locked their rows) with `reason` as their
 * error; those already finished are left as they are. Answers how many were
 * canceled.
 */
export async function cancelJobs(db: CommonQueryMethods, jobIds: readonly string[], reason: string): Promise<number> {
  if (jobIds.length === 0) return 0;
  const ids = sql.array(jobIds, 'uuid');
  // graphile-worker's own way to take an entry off the queue; a locked (running) entry is not deleted.
  await db.one(sql.type(z.object({ removed: z.number() }))`
    select count(graphile_worker.remove_job('job:' || id))::int as removed from unnest(${ids}) as id`);
  const error = sql.jsonb({ code: 'canceled', message: reason });
  const { canceled, unrun, told, atVendors } = await db.one(sql.type(canceledJobs)`
    with spent as (
      -- An agent run's recorded steps were paid to the vendor whatever comes of the run: charged, never more than reserved.
      select j.id, least(j.credits_reserved, ceil(sum(s.cost) - 1e-9)::bigint) as amount
      from jobs j join agent_run_steps s on s.job_id = j.id
      where j.id = any(${ids}) and j.kind = 'agent_run' and j.credits_reserved > 0
      group by j.id, j.credits_reserved
    ), job as (
      update jobs set status = 'canceled', error = ${error}, canceled_at = now(), finished_at = now(), locked_by = null,
             credits_charged = coalesce((select amount from spent where spent.id = jobs.id), jobs.credits_charged)
      from jobs was
      where was.id = jobs.id and jobs.id = any(${ids}) and jobs.status <> all(${sql.array([...finished], 'text')})
      returning jobs.*, was.status <> 'running' or was.locked_by is null as unrun,
                coalesce((select amount from spent where spent.id = jobs.id), 0) as spent
    ), attempt as (
      update job_attempts set finished_at = now(), outcome = 'canceled', error = null
      where job_id in (select id from job) and outcome is null
    ), reserved as (
      select account_id, sum(credits_reserved) as amount, sum(spent) as spent from job
      where account_id is not null and credits_reserved > 0 group by account_id
    ), account as (
      update credit_accounts a set reserved = a.reserved - r.amount, balance = a.balance - r.spent
      from reserved r where a.id = r.account_id
    ), entries as (
      insert into credit_entries (tenant_id, account_id, site_id, user_id, kind, amount, reserved_change, job_id, operation, reason)
      select tenant_id, account_id, site_id, user_id, 'debit', -spent, -spent, id, kind, 'Steps made before it was canceled'
      from job where account_id is not null and spent > 0
      union all
      select tenant_id, account_id, site_id, user_id, 'release', 0, -(credits_reserved - spent), id, kind, 'Job canceled'
      from job where account_id is not null and credits_reserved > spent
    )
    select (select count(*)::int from job) as canceled,
           coalesce((select jsonb_agg(jsonb_build_object('kind', kind, 'created_at', created_at, 'started_at', started_at))
                     from job where unrun), '[]'::jsonb) as unrun,
           array(select id from job where webhook is not null and 'completed' = any(webhook_events)) as told,
           coalesce((select jsonb_agg(jsonb_build_object('provider', provider, 'ref', provider_ref, 'model',
                       (select p->>'model' from jsonb_array_elements(coalesce(input->'providers', '[]'::jsonb)) p
                        where p->>'vendor' = provider limit 1))) from job
                     where provider = any(${sql.array([...vendorsThatCallBack], 'text')}) and provider_ref is not null),
                    '[]'::jsonb) as "atVendors"`);
  // Counted here, in the process that canceled them, those no worker was running: a running job is counted by
  // its worker once it lets go of the run (worker/jobs/run.ts), a queued or waiting one would never be. Before
  // the caller's commit, which a rare rollback would leave counted.
  for (const job of unrun) countFinishedJob(job, 'canceled');
  for (const work of atVendors) await enqueue(db, 'provider__cancel', work, { maxAttempts: 5 });
  if (told.length > 0) {
    const rows = await db.any(sql.type(jobRow)`
      select ${jobColumns} from jobs where id = any(${sql.array(told, 'uuid')}) order by id`);
    for (const job of rows) await announce(db, job, 'completed');
  }
  return canceled;
}

/** Canceled by its owner or an admin (the caller has locked the row): credits back, and a queued run taken off the queue. */
export async function cancel(db: CommonQueryMethods, job: JobRow, reason: string): Promise<JobRow> {
  await cancelJobs(db, [job.id], reason);
  const canceled = await jobById(db, job.id);
  if (!canceled) throw new Error(`job ${job.id} vanished while it was being canceled`);
  return canceled;
}
