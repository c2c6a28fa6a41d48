// Starts a graphile-worker pool on its own pg pool. Signals are the process's
// business (see core/lifecycle.ts): stop() drains — running jobs finish, and
// after the grace period their AbortSignal fires and unfinished ones are
// released for another worker.
import { run, type Runner } from 'graphile-worker';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { TaskDefinition } from './task.ts';
import { loadTaskDefinitions, toTaskList } from './tasks.ts';

export type WorkerHandle = { runner: Runner; stop(): Promise<void> };

export type StartWorkerOptions = {
  databaseUrl: string;
  config: Config;
  db: DatabasePool;
  logger: Logger;
  /** Off in tests, which enqueue exactly what they need. */
  crontab?: string;
  /** Tasks beside those in worker/tasks/ (tests add slow or failing ones). */
  extraTasks?: Map<string, TaskDefinition>;
};

export const defaultCrontab = ['* * * * * system__heartbeat ?fill=1m', '17 * * * * maintenance__cleanup'].join('\n');

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const { config, logger } = options;
  const definitions = new Map([...(await loadTaskDefinitions()), ...(options.extraTasks ?? [])]);
  const runner = await run({
    connectionString: options.databaseUrl,
    concurrency: config.worker.concurrency,
    // One connection per concurrent job, plus one for LISTEN and one spare.
    maxPoolSize: config.worker.concurrency + 2,
    pollInterval: config.worker.pollIntervalMs,
    noHandleSignals: true,
    gracefulShutdownAbortTimeout: config.worker.shutdownGraceMs,
    logger: workerLogger(logger),
    taskList: toTaskList(definitions, { db: options.db, config, logger }),
    crontab: options.crontab ?? defaultCrontab,
    // Unbatched, graphile-worker does not await a job's completion before its
    // pool ends, so a job finished during shutdown stays locked (and runs
    // again hours later). Batched completions are flushed before the pool closes.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  // Beat once now rather than at the next minute, so /health reflects this worker at once.
  await runner.addJob('system__heartbeat', {}, { jobKey: 'system__heartbeat' });
  logger.info({ concurrency: config.worker.concurrency, tasks: [...definitions.keys()] }, 'worker started');
  let stopping: Promise<void> | undefined;
  return {
    runner,
    stop: () => (stopping ??= runner.stop('shutdown').then(() => logger.info('worker stopped'))),
  };
}
