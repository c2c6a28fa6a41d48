// Worker processes say they are alive every WORKER_HEARTBEAT_MS, outside the
// job queue so that a busy queue cannot delay it. On each beat a process also
// looks for others whose beat stopped WORKER_LOST_AFTER_MS ago: their queue
// runs are unlocked for the living (graphile-worker alone would wait four
// hours), so a killed worker's jobs run again within a minute.
import { hostname } from 'node:os';
import { z } from 'zod';
import { sql, type DatabasePool } from '../db/pool.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { jobColumns, jobRow } from '../core/jobs/model.ts';
import { fail } from '../core/jobs/settle.ts';

export type Liveness = { beat(): Promise<void>; stop(): Promise<void> };

const lost = z.object({ id: z.string(), worker_ids: z.array(z.string()) });

export async function startLiveness(options: {
  db: DatabasePool;
  config: Config;
  logger: Logger;
  processId: string;
  workerIds: () => string[];
}): Promise<Liveness> {
  const { db, config, logger, processId } = options;
  let lastBeat = Date.now();
  const beat = async () => {
    await db.query(sql.typeAlias('void')`
      insert into worker_processes (id, worker_ids, hostname, pid, concurrency)
      values (${processId}, ${sql.array(options.workerIds(), 'text')}, ${hostname()}, ${process.pid}, ${config.worker.concurrency})
      on conflict (id) do update set worker_ids = excluded.worker_ids, beat_at = now()`);
    // After a gap in our own beats (the database was away, say) everyone else
    // looks silent too: judge others only once we have been beating ourselves.
    const gap = Date.now() - lastBeat;
    lastBeat = Date.now();
    if (gap > config.worker.lostAfterMs) return;
    await reapLost(db, config, logger);
    await failStranded(db, config, logger);
  };
  await beat();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = beat().catch((error: unknown) =>
      logger.warn({ err: (error as Error).message }, 'worker heartbeat failed'),
    );
  }, config.worker.heartbeatMs);
  timer.unref();
  return {
    beat,
    async stop() {
      clearInterval(timer);
      await running;
      await db.query(sql.typeAlias('void')`delete from worker_processes where id = ${processId}`);
    },
  };
}

/** Releases the queue runs of processes that stopped beating, once each (the row is locked and deleted). */
export async function reapLost(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  return db.transaction(async (tx) => {
    const gone = await tx.any(sql.type(lost)`
      select id, worker_ids from worker_processes
      where beat_at < now() - ${config.worker.lostAfterMs} * interval '1 millisecond'
      for update skip locked`);
    for (const process of gone) {
      await tx.query(
        sql.typeAlias(
          'void',
        )`select from graphile_worker.force_unlock_workers(${sql.array(process.worker_ids, 'text')})`,
      );
      await tx.query(sql.typeAlias('void')`
        update jobs set stage = 'worker lost; runs again' where status = 'running' and locked_by = any(${sql.array(process.worker_ids, 'text')})`);
      await tx.query(sql.typeAlias('void')`delete from worker_processes where id = ${process.id}`);
      logger.warn(
        { process: process.id, workers: process.worker_ids },
        'released the jobs of a worker process that stopped beating',
      );
    }
    return gone.length;
  });
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
            and not exists (select 1 from graphile_worker.jobs q
                            where q.key = 'job:' || jobs.id and (q.locked_at is not null or q.attempts < q.max_attempts)))
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
