// A worker's hold on a job: the claim that starts a run (and opens its
// attempt), and the close of that attempt when the run's result is not used.
// The job's other changes of state are in ./settle.ts.
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { jobColumns, jobRow, type JobRow } from './model.ts';
import type { AttemptOutcome } from './settle.ts';

/**
 * One statement, so it is atomic without a transaction: the job is taken if
 * it can run (queued; running under a worker that was lost; or waiting with
 * the provider's result delivered), a lost run's open attempt is closed, and
 * this run's attempt opened.
 */
export async function claim(db: CommonQueryMethods, jobId: string, workerId: string): Promise<JobRow | null> {
  return db.maybeOne(
    prepared(sql.type(jobRow)`
    with claimed as (
      update jobs set status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()), locked_by = ${workerId},
                      stage = case when provider_result is null then 'starting' else 'finishing' end
      where id = ${jobId} and (status in ('queued', 'running') or (status = 'waiting' and provider_result is not null))
      returning *
    ),
    lost as (
      update job_attempts set finished_at = now(), outcome = 'lost'
      where job_id = ${jobId} and outcome is null and exists (select from claimed)
    ),
    opened as (
      -- A deferred run gave its attempt back (core/jobs/settle.ts defer): its number is this run's, its row reopened.
      insert into job_attempts (job_id, attempt, worker_id) select id, attempts, ${workerId} from claimed
      on conflict (job_id, attempt) do update
        set worker_id = excluded.worker_id, started_at = now(), finished_at = null, outcome = null, error = null
        where job_attempts.outcome = 'deferred'
    )
    select ${jobColumns} from claimed as jobs`),
  );
}

/** Ends the run's attempt and leaves the job as it is: for a run discarded after a cancel or a takeover. */
export async function closeAttempt(db: CommonQueryMethods, job: JobRow, outcome: AttemptOutcome) {
  await db.query(sql.typeAlias('void')`
    update job_attempts set finished_at = now(), outcome = ${outcome}
    where job_id = ${job.id} and attempt = ${job.attempts} and outcome is null`);
}
