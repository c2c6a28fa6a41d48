// Worker processes say they are alive every WORKER_HEARTBEAT_MS, outside the
// job queue so that a busy queue cannot delay it. On each beat a process also
// looks for others whose beat stopped WORKER_LOST_AFTER_MS ago: their queue
// runs are unlocked for the living (graphile-worker alone would wait four
// hours), so a killed worker's jobs run again within a minute. A process on
// the same host needs no wait: when the pid its predecessor recorded is gone
// (worker/process-identity.ts), that one's runs are released at start.
import { hostname } from 'node:os';
import type { DatabasePool } from '../db/pool.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { failStrandedJobs } from '../core/jobs/stranded.ts';
import {
  lockProcessesInScope,
  lockSilentProcesses,
  recordBeat,
  releaseProcesses,
  removeWorkerProcess,
} from '../core/jobs/worker-processes.ts';
import { retryStrandedDeliveries } from '../core/webhooks/stranded.ts';
import { certainlyGone, ownIdentity, type ProcessIdentity } from './process-identity.ts';

/** stop(): this process leaves (its row goes); halt(): it falls silent, so others release its runs as lost. */
export type Liveness = { beat(): Promise<void>; stop(): Promise<void>; halt(): Promise<void> };

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
    await recordBeat(db, {
      id: processId,
      workerIds: options.workerIds(),
      hostname: hostname(),
      pid: process.pid,
      concurrency: config.worker.concurrency,
      pidScope: own.scope,
      pidStarted: own.started,
    });
    // A pid seen gone is a fact, not an inference from silence: judged even after a gap.
    await reapGone(db, own, processId, logger);
    // After a gap in our own beats (the database was away, say) everyone else
    // looks silent too: judge others only once we have been beating ourselves.
    const gap = Date.now() - lastBeat;
    lastBeat = Date.now();
    if (gap > config.worker.lostAfterMs) return;
    await reapLost(db, config, logger);
    await failStrandedJobs(db, config, logger);
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
      await removeWorkerProcess(db, processId);
    },
  };
}

/** Releases the queue runs of processes that stopped beating, once each (the row is locked and deleted). */
export async function reapLost(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  return db.transaction(async (tx) => {
    const gone = await lockSilentProcesses(tx, config.worker.lostAfterMs);
    await releaseProcesses(tx, gone, logger, 'released the jobs of a worker process that stopped beating');
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
  const scope = own.scope;
  if (scope === null) return 0;
  return db.transaction(async (tx) => {
    const neighbours = await lockProcessesInScope(tx, scope, processId);
    const gone = neighbours.filter((row) => certainlyGone(own, { pid: row.pid, scope, started: row.pid_started }));
    await releaseProcesses(tx, gone, logger, 'released the jobs of a worker process whose pid is gone');
    return gone.length;
  });
}
