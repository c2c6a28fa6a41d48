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

export type Liveness = { beat(): Promise<void>; stop(): Promise<void> };

const lost = z.object({ id: z.string(), worker_ids: z.array(z.string()) });

export async function startLiveness(options: { db: DatabasePool; config: Config; logger: Logger; processId: string; workerIds: () => string[] }): Promise<Liveness> {
  const { db, config, logger, processId } = options;
  const beat = async () => {
    await db.query(sql.typeAlias('void')`
      insert into worker_processes (id, worker_ids, hostname, pid, concurrency)
      values (${processId}, ${sql.array(options.workerIds(), 'text')}, ${hostname()}, ${process.pid}, ${config.worker.concurrency})
      on conflict (id) do update set worker_ids = excluded.worker_ids, beat_at = now()`);
    await reapLost(db, config, logger);
  };
  await beat();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = beat().catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'worker heartbeat failed'));
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
      await tx.query(sql.typeAlias('void')`select from graphile_worker.force_unlock_workers(${sql.array(process.worker_ids, 'text')})`);
      await tx.query(sql.typeAlias('void')`
        update jobs set stage = 'worker lost; runs again' where status = 'running' and locked_by = any(${sql.array(process.worker_ids, 'text')})`);
      await tx.query(sql.typeAlias('void')`delete from worker_processes where id = ${process.id}`);
      logger.warn({ process: process.id, workers: process.worker_ids }, 'released the jobs of a worker process that stopped beating');
    }
    return gone.length;
  });
}
