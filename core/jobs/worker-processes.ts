// The worker processes' rows (worker_processes): each process beats on its
// own row, and the living release the queue runs of a process that fell
// silent or whose pid is gone. When and whom to judge is decided by the
// worker (worker/liveness.ts); these are the statements.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Logger } from '../logger.ts';

const workerProcessSchema = z.object({ id: z.string(), worker_ids: z.array(z.string()), concurrency: z.number() });

export type WorkerProcess = z.infer<typeof workerProcessSchema>;

/** What a process says of itself on each beat; pidScope and pidStarted let a neighbour judge its pid (worker/process-identity.ts). */
export type Beat = {
  id: string;
  workerIds: string[];
  hostname: string;
  pid: number;
  concurrency: number;
  pidScope: string | null;
  pidStarted: number | null;
};

/** The first beat writes the row; later ones refresh its worker ids and beat time. */
export async function recordBeat(db: CommonQueryMethods, beat: Beat): Promise<void> {
  await db.query(sql.typeAlias('void')`
    insert into worker_processes (id, worker_ids, hostname, pid, concurrency, pid_scope, pid_started)
    values (${beat.id}, ${sql.array(beat.workerIds, 'text')}, ${beat.hostname}, ${beat.pid}, ${beat.concurrency},
            ${beat.pidScope}, ${beat.pidStarted})
    on conflict (id) do update set worker_ids = excluded.worker_ids, beat_at = now()`);
}

/** A process that stops in order leaves: nobody need release its runs. */
export async function removeWorkerProcess(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.typeAlias('void')`delete from worker_processes where id = ${id}`);
}

/** Processes whose last beat is older than `lostAfterMs`, locked; one another process is judging is skipped. */
export async function lockSilentProcesses(db: CommonQueryMethods, lostAfterMs: number) {
  return db.any(sql.type(workerProcessSchema)`
    select id, worker_ids, concurrency from worker_processes
    where beat_at < now() - ${lostAfterMs} * interval '1 millisecond'
    for update skip locked`);
}

/** The other processes of a pid scope (one kernel boot and pid namespace), locked, with the pid each recorded. */
export async function lockProcessesInScope(db: CommonQueryMethods, scope: string, exceptId: string) {
  return db.any(sql.type(workerProcessSchema.extend({ pid: z.number(), pid_started: z.number().nullable() }))`
    select id, worker_ids, concurrency, pid, pid_started from worker_processes
    where pid_scope = ${scope} and id <> ${exceptId}
    for update skip locked`);
}

/**
 * The one way a process's runs are released: graphile-worker unlocks its runs
 * and named queues, the jobs say why they run again, its row goes, and the
 * living workers are nudged (as by a new job) rather than left to their next poll.
 */
export async function releaseProcesses(
  tx: CommonQueryMethods,
  processes: readonly WorkerProcess[],
  logger: Logger,
  message: string,
): Promise<void> {
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
