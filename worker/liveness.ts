// Worker processes say they are alive every WORKER_HEARTBEAT_MS, outside the
// job queue so that a busy queue cannot delay it. On each beat a process also
// looks for others whose beat stopped WORKER_LOST_AFTER_MS ago: their queue
// runs are unlocked for the living (graphile-worker alone would wait four
// hours), so a killed worker's jobs run again within a minute. A process on
// the same host needs no wait: when the pid its predecessor recorded is gone
// (worker/process-identity.ts), that one's runs are released at start.
import { hostname } from 'node:os';
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool } from '../db/pool.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { jobColumns, jobRow } from '../core/jobs/model.ts';
import { entryCanRun } from '../core/jobs/queue.ts';
import { fail } from '../core/jobs/settle.ts';
import { retryStrandedDeliveries } from '../core/webhooks/stranded.ts';
import { certainlyGone, ownIdentity, type ProcessIdentity } from './process-identity.ts';

/** stop(): this process leaves (its row goes); halt(): it falls silent, so others release its runs as lost. */
export type Liveness = { beat(): Promise<void>; stop(): Promise<void>; halt(): Promise<void> };

const released = z.object({ id: z.string(), worker_ids: z.array(z.string()), concurrency: z.number() });

export async function startLiveness(options: {
  db: DatabasePool;
  config: Config;
  logger: Logger;
  processId: string;
  workerIds: () => string[];
}): Promise<Liveness> {
  const { db, config, logger, processId } = options;
  const own = ownIdentity();
  let lastBeat = Date.now();
  const beat = async () => {
    await db.query(sql.typeAlias('void')`
      insert into worker_processes (id, worker_ids, hostname, pid, concurrency, pid_scope, pid_started)
      values (${processId}, ${sql.array(options.workerIds(), 'text')}, ${hostname()}, ${process.pid}, ${config.worker.concurrency},
              ${own.scope}, ${own.started})
      on conflict (id) do update set worker_ids = excluded.worker_ids, beat_at = now()`);
    // A pid seen gone is a fact, not an inference from silence: judged even after a gap.
    await reapGone(db, own, processId, logger);
    // After a gap in our own beats (the database was away, say) everyone else
    // looks silent too: judge others only once we have been beating ourselves.
    const gap = Date.now() - lastBeat;
    lastBeat = Date.now();
    if (gap > config.worker.lostAfterMs) return;
    await reapLost(db, config, logger);
    await failStranded(db, config, logger);
    await retryStrandedDeliveries(db, config, logger);
  };
  await beat();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = beat().catch((error: unknown) =>
      logger.warn({ err: (error as Error).message }, 'worker heartbeat failed'),
    );
  }, config.worker.heartbeatMs);
  timer.unref();
  const halt = async () => {
    clearInterval(timer);
    await running;
  };
  return {
    beat,
    halt,
    async stop() {
      await halt();
      await db.query(sql.typeAlias('void')`delete from worker_processes where id = ${processId}`);
    },
  };
}

/** Releases the queue runs of processes that stopped beating, once each (the row is locked and deleted). */
export async function reapLost(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  return db.transaction(async (tx) => {
    const gone = await tx.any(sql.type(released)`
      select id, worker_ids, concurrency from worker_processes
      where beat_at < now() - ${config.worker.lostAfterMs} * interval '1 millisecond'
      for update skip locked`);
    await release(tx, gone, logger, 'released the jobs of a worker process that stopped beating');
    return gone.length;
  });
}

/**
 * Releases the queue runs of the processes in our pid scope whose pid is gone
 * (killed, say, and started again): no need to wait for their beat to age.
 */
export async function reapGone(
  db: DatabasePool,
  own: ProcessIdentity,
  processId: string,
  logger: Logger,
): Promise<number> {
  if (own.scope === null) return 0;
  return db.transaction(async (tx) => {
    const neighbours = await tx.any(sql.type(released.extend({ pid: z.number(), pid_started: z.number().nullable() }))`
      select id, worker_ids, concurrency, pid, pid_started from worker_processes
      where pid_scope = ${own.scope} and id <> ${processId}
      for update skip locked`);
    const gone = neighbours.filter((row) =>
      certainlyGone(own, { pid: row.pid, scope: own.scope, started: row.pid_started }),
    );
    await release(tx, gone, logger, 'released the jobs of a worker process whose pid is gone');
    return gone.length;
  });
}

/**
 * The one way a process's runs are released: graphile-worker unlocks its runs
 * and named queues, the jobs say why they run again, its row goes, and the
 * living workers are nudged (as by a new job) rather than left to their next poll.
 */
async function release(
  tx: CommonQueryMethods,
  processes: readonly z.infer<typeof released>[],
  logger: Logger,
  message: string,
) {
  for (const lost of processes) {
    const workerIds = sql.array(lost.worker_ids, 'text');
    await tx.query(sql.typeAlias('void')`select from graphile_worker.force_unlock_workers(${workerIds})`);
    await tx.query(sql.typeAlias('void')`
      update jobs set stage = 'worker lost; runs again', locked_by = null
      where status = 'running' and locked_by = any(${workerIds})`);
    await tx.query(sql.typeAlias('void')`delete from worker_processes where id = ${lost.id}`);
    logger.warn({ process: lost.id, workers: lost.worker_ids }, message);
  }
  const lanes = processes.reduce((sum, lost) => sum + lost.concurrency, 0);
  if (lanes > 0)
    await tx.query(sql.typeAlias('void')`select from pg_notify('jobs:insert', ${JSON.stringify({ count: lanes })})`);
}

/**
 * Jobs no run will ever finish, failed so their credits come back:
 * - queued or running (or waiting with a delivered result) with no queue entry
 *   left that can run — its attempts were spent by crashes, say;
 * - waiting for a provider's webhook longer than JOB_WAITING_HOURS.
 * A minute's grace keeps jobs whose transaction is just committing out of it.
 */
export async function failStranded(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  return db.transaction(async (tx) => {
    const stranded = await tx.any(sql.type(jobRow)`
      select ${jobColumns} from jobs
      where jobs.updated_at < now() - interval '1 minute'
        and (
          ((jobs.status in ('queued', 'running') or (jobs.status = 'waiting' and jobs.provider_result is not null))
            and not ${entryCanRun(sql.fragment`'job:' || jobs.id`)})
          or (jobs.status = 'waiting' and jobs.provider_result is null
              and jobs.waiting_at < now() - ${config.jobs.waitingHours} * interval '1 hour')
        )
      order by jobs.updated_at
      limit 100
      for update of jobs skip locked`);
    for (const job of stranded) {
      const waiting = job.status === 'waiting' && job.provider_result === null;
      await fail(
        tx,
        job,
        waiting
          ? {
              code: 'provider_timeout',
              message: `The provider sent no result within ${config.jobs.waitingHours} hours.`,
            }
          : {
              code: 'attempts_exhausted',
              message: 'The job could not be run to its end (its worker stopped each time).',
            },
        { attempt: 'lost' },
      );
      logger.warn({ job_id: job.id, status: job.status }, 'failed a job that nothing would finish');
    }
    return stranded.length;
  });
}
