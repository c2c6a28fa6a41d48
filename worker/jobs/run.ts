// One run of a job, from claim to settlement:
// 1. claim it (queued, or waiting with a delivered result, or running under a
//    worker that was lost) and open an attempt;
// 2. run its handler, aborted if the job is canceled meanwhile;
// 3. settle it in one transaction — but only if this worker still holds it,
//    so a run that was canceled or taken over changes nothing (and its file
//    is removed).
// A transient error with attempts left puts the job back to queued and
// rethrows, so graphile-worker retries it with exponential backoff.
import { z } from 'zod';
import { sql, type DatabasePool } from '../../db/pool.ts';

import { jobColumns, jobRow, type JobRow } from '../../core/jobs/model.ts';
import { schedule } from '../../core/jobs/queue.ts';
import { fail, lockJob, park, requeue, succeed } from '../../core/jobs/settle.ts';
import { announce } from '../../core/webhooks/announce.ts';
import type { TaskDeps } from '../task.ts';
import { describe, permanent, type JobError } from './errors.ts';
import type { Outcome } from './handler.ts';

/**
 * Thrown when another worker took the job over (this one was thought lost):
 * graphile-worker then fails this run's queue entry only if this worker still
 * holds it, which it does not, so the successor's entry is left alone.
 */
class TakenOver extends Error {
  override name = 'TakenOver';
}
const takenOver = () => new TakenOver('Another worker took this job over; this run changed nothing.');

export type QueueRun = { workerId: string; attempts: number; maxAttempts: number; signal: AbortSignal };

type Attempt = 'succeeded' | 'failed' | 'retrying' | 'waiting' | 'lost' | 'canceled';

async function closeAttempt(db: Parameters<typeof lockJob>[0], job: JobRow, outcome: Attempt, error?: JobError) {
  await db.query(sql.typeAlias('void')`
    update job_attempts set finished_at = now(), outcome = ${outcome},
           error = ${error ? sql.jsonb({ code: error.code, message: error.message } as never) : null}
    where job_id = ${job.id} and attempt = ${job.attempts} and outcome is null`);
}

/**
 * One statement, so it is atomic without a transaction: the job is taken if
 * it can run (queued; running under a worker that was lost; or waiting with
 * the provider's result delivered), a lost run's open attempt is closed, and
 * this run's attempt opened.
 */
async function claim(db: DatabasePool, jobId: string, workerId: string): Promise<JobRow | null> {
  return db.maybeOne(sql.type(jobRow)`
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
      insert into job_attempts (job_id, attempt, worker_id) select id, attempts, ${workerId} from claimed
    )
    select ${jobColumns} from claimed as jobs`);
}

/**
 * Settles under the row lock if the job is still this worker's run. Otherwise
 * answers what became of it: canceled, or taken over by another worker.
 */
async function settle(
  db: DatabasePool,
  job: JobRow,
  apply: (tx: Parameters<typeof lockJob>[0], current: JobRow) => Promise<unknown>,
) {
  return db.transaction(async (tx): Promise<'settled' | 'canceled' | 'taken over'> => {
    const current = await lockJob(tx, job.id);
    if (!current) return 'canceled';
    // Another claim counts attempts up; a cancel leaves them as they are.
    if (current.attempts !== job.attempts) return 'taken over';
    if (current.status === 'canceled') return 'canceled';
    if (current.status !== 'running' || current.locked_by !== job.locked_by) return 'taken over';
    await apply(tx, current);
    return 'settled';
  });
}

export async function runJob(deps: TaskDeps, jobId: string, run: QueueRun): Promise<void> {
  const { db, logger } = deps;
  const job = await claim(db, jobId, run.workerId);
  if (!job) return;
  // Not in the claim's statement: a worker lost before this is made up for by the next claim of the run.
  await announce(db, job, 'start');
  const log = logger.child({ job_id: job.id, kind: job.kind, attempt: job.attempts });
  const canceled = new AbortController();
  const unsubscribe = await deps.events.subscribe(job.id, (event) => {
    if (event.status === 'canceled') canceled.abort(permanent('canceled', 'The job was canceled.'));
  });
  // A cancel committed between the claim and the subscription sent no event we heard.
  if (
    (await db.maybeOneFirst(
      sql.type(z.object({ status: z.string() }))`select status from jobs where id = ${job.id}`,
    )) === 'canceled'
  ) {
    canceled.abort(permanent('canceled', 'The job was canceled.'));
  }
  const signal = AbortSignal.any([canceled.signal, run.signal]);
  let outcome: Outcome | undefined;
  try {
    const handler = deps.kinds.get(job.kind);
    if (!handler) throw permanent('unknown_kind', `This worker cannot run ${job.kind} jobs.`);
    const input = handler.input.safeParse(job.input);
    if (!input.success) throw permanent('invalid_input', 'The job’s input is not valid for its kind.');
    const context = {
      job,
      db,
      config: deps.config,
      logger: log,
      storage: deps.storage,
      resolve: deps.resolve,
      signal,
      progress: async (fraction: number, stage: string) => {
        await db.query(sql.typeAlias('void')`
          update jobs set progress = ${Math.min(1, Math.max(0, fraction))}, stage = ${stage.slice(0, 200)}
          where id = ${job.id} and status = 'running' and locked_by = ${job.locked_by}`);
        await announce(db, job, 'progress');
      },
    };
    if (job.provider_result !== null) {
      if (!handler.finish) throw permanent('unknown_kind', `${job.kind} jobs cannot be finished by a provider.`);
      outcome = await handler.finish(input.data, job.provider_result, context);
    } else {
      outcome = await handler.run(input.data, context);
    }
    const done = outcome;
    const settled = await settle(db, job, async (tx, current) => {
      if (done.status === 'waiting') {
        await park(tx, current, done.provider, done.providerRef);
        await closeAttempt(tx, current, 'waiting');
      } else {
        await succeed(tx, current, done);
        await closeAttempt(tx, current, 'succeeded');
      }
    });
    if (settled === 'settled') log.info({ status: done.status }, 'job settled');
    else await discard(deps, job, settled === 'canceled' ? outcome : undefined, settled);
    if (settled === 'taken over') throw takenOver();
  } catch (thrown) {
    if (thrown instanceof TakenOver) throw thrown;
    if (canceled.signal.aborted) {
      await discard(deps, job, outcome, 'canceled');
      return;
    }
    if (run.signal.aborted) {
      // Shutting down: the job goes back to the queue as a fresh run (this run's
      // attempts may be spent, and stopping is not the job's fault), and this
      // run ends normally.
      const settled = await settle(db, job, async (tx, current) => {
        await requeue(tx, current, { code: 'worker_stopped', message: 'The worker stopped; the job runs again.' });
        await closeAttempt(tx, current, 'retrying');
        await schedule(tx, current, deps.config.jobs.tenantConcurrency);
      });
      if (settled === 'taken over') throw takenOver();
      return;
    }
    const error = describe(thrown);
    const last = !error.transient || run.attempts >= run.maxAttempts;
    if (error.code === 'internal_error') log.error({ err: thrown }, 'job failed unexpectedly');
    else log.warn({ code: error.code, err: error.message, last }, 'job attempt failed');
    const settled = await settle(db, job, async (tx, current) => {
      if (last) {
        await fail(tx, current, { code: error.code, message: error.message });
        await closeAttempt(tx, current, 'failed', error);
      } else {
        await requeue(tx, current, { code: error.code, message: error.message });
        await closeAttempt(tx, current, 'retrying', error);
      }
    });
    if (settled === 'taken over') throw takenOver();
    if (!last) throw error;
  } finally {
    unsubscribe();
  }
}

/**
 * A run whose result will not be used: its attempt is closed, and the files of
 * a canceled job removed (a job taken over writes the same keys: they stay).
 */
async function discard(deps: TaskDeps, job: JobRow, outcome: Outcome | undefined, why: string) {
  deps.logger.info({ job_id: job.id, why }, 'job run discarded');
  await closeAttempt(deps.db, job, 'canceled');
  if (outcome?.status === 'succeeded') {
    for (const media of outcome.media ?? []) {
      for (const key of [media.storageKey, ...(media.variants ?? []).map((variant) => variant.key)])
        await deps.storage.delete(key);
    }
  }
}
