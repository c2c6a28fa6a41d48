// One run of a job, from claim to settlement:
// 1. claim it (queued, or waiting with a delivered result, or running under a
//    worker that was lost) and open an attempt (core/jobs/claim.ts);
// 2. run its handler, aborted if the job is canceled meanwhile;
// 3. settle it in one transaction — but only if this worker still holds it,
//    so a run that was canceled or taken over changes nothing (and its file
//    is removed).
// A transient error with attempts left puts the job back to queued and
// rethrows, so graphile-worker retries it with exponential backoff.
import { testModeConfig } from '../../core/jobs/test-mode.ts';
import type { CommonQueryMethods, DatabasePool } from '../../db/pool.ts';
import { claim, closeAttempt } from '../../core/jobs/claim.ts';
import { jobById, type JobRow } from '../../core/jobs/model.ts';
import { reportProgress } from '../../core/jobs/progress.ts';
import { schedule } from '../../core/jobs/queue.ts';
import {
  defer,
  fail,
  park,
  requeue,
  succeed,
  writesBeyondTheJob,
  type Run,
  type Success,
} from '../../core/jobs/settle.ts';
import { announce, wants } from '../../core/webhooks/announce.ts';
import { countFinishedJob } from '../../core/metrics/jobs.ts';
import type { TaskDeps } from '../task.ts';
import { Deferred, describe, permanent } from '../../core/jobs/errors.ts';
import type { Outcome } from '../job.ts';
import { Background } from '../background.ts';

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

type Verdict = 'settled' | 'canceled' | 'taken over';

/** The success, its writes beyond the job followed by `then` (in its settling transaction). */
function afterOwnWrites(done: Success, then: () => Promise<void>): Success {
  return {
    ...done,
    commit: async (tx, made) => {
      const added = await done.commit?.(tx, made);
      await then();
      return added;
    },
  };
}

/** Thrown in a settling transaction whose job this run no longer holds, to roll back what it wrote. */
class NotHeld extends Error {
  override name = 'NotHeld';
}

/** What became of a job this run no longer holds: canceled, or taken over by another worker. */
function whyNotHeld(current: JobRow | null, job: JobRow): Exclude<Verdict, 'settled'> | null {
  if (!current) return 'canceled';
  // Another claim counts attempts up; a cancel leaves them as they are.
  if (current.attempts !== job.attempts) return 'taken over';
  if (current.status === 'canceled') return 'canceled';
  if (current.status !== 'running' || current.locked_by !== job.locked_by) return 'taken over';
  return null;
}

/**
 * Settles the run: one statement that applies only while this run holds the
 * job. A change that writes more than that (media, a post, a queue entry) is
 * a transaction of its own, rolled back when its statement on the job finds
 * the job no longer held, so nothing of it is written for a run that lost the
 * job. (It used to lock the job's row first: a round trip more for every job,
 * to learn what the rollback tells as well.)
 */
async function settle(
  db: DatabasePool,
  job: JobRow,
  apply: (db: CommonQueryMethods, run: Run) => Promise<JobRow | null>,
  options: { transaction: boolean },
): Promise<Verdict> {
  const run = { lockedBy: job.locked_by, attempts: job.attempts };
  if (options.transaction) {
    const held = await db
      .transaction(async (tx) => {
        if (!(await apply(tx, run))) throw new NotHeld();
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof NotHeld) return false;
        throw error;
      });
    if (held) return 'settled';
  } else if (await apply(db, run)) return 'settled';
  const current = await jobById(db, job.id);
  return whyNotHeld(current, job) ?? 'taken over';
}

export async function runJob(deps: TaskDeps, jobId: string, run: QueueRun): Promise<void> {
  const { db, logger } = deps;
  // Listening before the claim: a cancel committed after it is heard, one committed before it leaves nothing to claim.
  const canceled = new AbortController();
  const unsubscribe = await deps.events.subscribe(jobId, (event) => {
    if (event.status === 'canceled') canceled.abort(permanent('canceled', 'The job was canceled.'));
  });
  const job = await claim(db, jobId, run.workerId).catch((error: unknown) => {
    unsubscribe();
    throw error;
  });
  if (!job) {
    unsubscribe();
    return;
  }
  // Not in the claim's statement: a worker lost before this is made up for by the next claim of the run.
  await announce(db, job, 'start');
  const log = logger.child({ job_id: job.id, kind: job.kind, attempt: job.attempts });
  const signal = AbortSignal.any([canceled.signal, run.signal]);
  const background = new Background(log);
  let outcome: Outcome | undefined;
  try {
    const handler = deps.kinds.get(job.kind);
    if (!handler) throw permanent('unknown_kind', `This worker cannot run ${job.kind} jobs.`);
    const input = handler.input.safeParse(job.input);
    if (!input.success) throw permanent('invalid_input', 'The job’s input is not valid for its kind.');
    const context = {
      job,
      db,
      // A test job runs on the local stand-ins whatever the job does (core/jobs/test-mode.ts).
      config: job.test_mode ? testModeConfig(deps.config) : deps.config,
      logger: log,
      storage: deps.storage,
      resolve: deps.resolve,
      services: deps.services,
      signal,
      background,
      progress: async (fraction: number, stage: string, options: { atMostEveryMs?: number } = {}) =>
        background.latest('progress', () => reportProgress(db, job, fraction, stage), options.atMostEveryMs),
    };
    if (job.provider_result !== null) {
      if (!handler.finish) throw permanent('unknown_kind', `${job.kind} jobs cannot be finished by a provider.`);
      outcome = await handler.finish(input.data, job.provider_result, context);
    } else {
      outcome = await handler.run(input.data, context);
    }
    const done = outcome;
    // Its progress and events go out before its end does: a settling transaction waits for them after its
    // own writes (they overlap), any other settling before it begins.
    const backgroundDone = async () => {
      await background.done();
      if (background.failure !== undefined) throw background.failure as unknown;
    };
    const transaction = done.status === 'succeeded' && (writesBeyondTheJob(done) || wants(job, 'completed'));
    if (!transaction) await backgroundDone();
    const settled = await settle(
      db,
      job,
      (tx, held) =>
        done.status === 'waiting'
          ? park(tx, job, done.provider, done.providerRef, { run: held })
          : succeed(tx, job, transaction ? afterOwnWrites(done, backgroundDone) : done, { run: held }),
      { transaction },
    );
    if (settled === 'settled') {
      log.info({ status: done.status }, 'job settled');
      if (done.status === 'succeeded') countFinishedJob(job, 'succeeded');
    } else await discard(deps, job, settled === 'canceled' ? outcome : undefined, settled);
    if (settled === 'taken over') throw takenOver();
  } catch (thrown) {
    if (thrown instanceof TakenOver) throw thrown;
    // Its progress and events go out before its end does.
    await background.done();
    if (canceled.signal.aborted) {
      await discard(deps, job, outcome, 'canceled');
      return;
    }
    if (run.signal.aborted) {
      // Shutting down: the job goes back to the queue as a fresh run (this run's
      // attempts may be spent, and stopping is not the job's fault), and this
      // run ends normally.
      const settled = await settle(
        db,
        job,
        async (tx, held) => {
          const requeued = await requeue(
            tx,
            job,
            { code: 'worker_stopped', message: 'The worker stopped; the job runs again.' },
            { run: held },
          );
          if (requeued) await schedule(tx, requeued);
          return requeued;
        },
        { transaction: true },
      );
      if (settled === 'taken over') throw takenOver();
      return;
    }
    if (thrown instanceof Deferred) {
      // Its provider has no free slot: back in the queue without counting an attempt, due when one will be.
      const settled = await settle(
        db,
        job,
        async (tx, held) => {
          const deferred = await defer(tx, job, thrown.stage, { run: held });
          if (deferred) await schedule(tx, deferred, { runAt: new Date(Date.now() + thrown.waitMs) });
          return deferred;
        },
        { transaction: true },
      );
      if (settled === 'taken over') throw takenOver();
      log.info({ wait_ms: thrown.waitMs, stage: thrown.stage }, 'job deferred');
      return;
    }
    const error = describe(thrown);
    const last = !error.transient || run.attempts >= run.maxAttempts;
    if (error.code === 'internal_error') log.error({ err: thrown }, 'job failed unexpectedly');
    // The job's error says what went wrong in a sentence; the log keeps the library's own words (its cause).
    else log.warn({ code: error.code, err: error, last }, 'job attempt failed');
    const spent = last ? await spentBy(deps, job) : 0;
    const settled = await settle(
      db,
      job,
      (tx, held) =>
        last
          ? fail(tx, job, { code: error.code, message: error.message }, { run: held, spent })
          : requeue(tx, job, { code: error.code, message: error.message }, { run: held }),
      { transaction: last && wants(job, 'completed') },
    );
    if (settled === 'taken over') throw takenOver();
    if (last && settled === 'settled') countFinishedJob(job, 'failed', error.code);
    if (!last) throw error;
  } finally {
    unsubscribe();
  }
}

/** What the failing job spent anyway (its handler says); nothing when that cannot be read now. */
async function spentBy(deps: TaskDeps, job: JobRow): Promise<number> {
  const spent = deps.kinds.get(job.kind)?.spent;
  return spent ? spent({ db: deps.db, job }).catch(() => 0) : 0;
}

/**
 * A run whose result will not be used: its attempt is closed, and the files of
 * a canceled job removed (a job taken over writes the same keys: they stay).
 */
async function discard(deps: TaskDeps, job: JobRow, outcome: Outcome | undefined, why: string) {
  deps.logger.info({ job_id: job.id, why }, 'job run discarded');
  await closeAttempt(deps.db, job, 'canceled');
  if (why === 'canceled') countFinishedJob(job, 'canceled');
  if (outcome?.status === 'succeeded') {
    for (const media of outcome.media ?? []) {
      for (const key of [media.storageKey, ...(media.variants ?? []).map((variant) => variant.key)])
        await deps.storage.delete(key);
    }
  }
}
