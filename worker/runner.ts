// Starts a graphile-worker pool on its own pg pool. Signals are the process's
// business (see core/lifecycle.ts): stop() drains — running jobs finish, and
// after the grace period their AbortSignal fires and unfinished ones are
// released for another worker.
import type { Services } from '../core/services.ts';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { run, type Runner, type WorkerEvents, type WorkerPool } from 'graphile-worker';
import type { Config } from '../core/config.ts';
import { JobEvents } from '../core/jobs/events.ts';
import { Notifications } from '../core/notifications.ts';
import type { Logger } from '../core/logger.ts';
import { createStorage } from '../core/storage/index.ts';
import { workerLogger } from '../core/worker-logger.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Resolve } from '../core/net/safe-fetch.ts';
import type { JobHandler } from './job.ts';
import { jobKinds } from './jobs/kinds.ts';
import { actingForTheirTenant } from './jobs/acting-for-tenant.ts';
import { startLiveness } from './liveness.ts';
import { QueueGate } from './queue-gate.ts';
import { TenantSlots } from './tenant-slots.ts';
import type { TaskDefinition } from './task.ts';
import { loadTaskDefinitions, toTaskList } from './tasks.ts';
import { GraphilePool } from './graphile-pool.ts';
import { GetJobConnection } from './get-job-connection.ts';

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
  /** Kinds of platform job beside the built-in ones (tests add no-op, slow and flaky kinds). */
  extraKinds?: Map<string, JobHandler>;
  /**
   * Called when graphile-worker's pool stopped on its own (it does after a
   * completion it could not write): this process's beats have stopped, so the
   * others release its runs as lost; `npm run worker` and `npm start` exit 1
   * then, for their supervisor to start them again.
   */
  onStoppedItself?: (error: unknown) => void;
  /** How user-given URLs' host names are resolved (tests make a name resolve to a private address). */
  resolve?: Resolve;
  /**
   * The process's services, for the jobs that act as the API does: an agent
   * run's tools are the MCP server's (api/mcp/tools.ts) and need its caches
   * and limits. A worker without them fails agent runs with a clear error.
   */
  services?: Services;
};

export const defaultCrontab = [
  '* * * * * system__heartbeat ?fill=1m',
  '17 * * * * maintenance__cleanup',
  '*/15 * * * * credits__expire',
  '23 * * * * subscriptions__allocate',
  '41 3 * * * storage__sweep',
].join('\n');

/** How long graphile-worker's queries wait for a database that cannot be reached (./graphile-pool.ts). */
const databaseWaitMs = 5 * 60_000;

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const { config, logger } = options;
  // Before anything is opened: an unknown name in WORKER_KINDS is a configuration error.
  const gate = new QueueGate({
    kinds: config.worker.kinds,
    known: [...jobKinds.keys(), ...(options.extraKinds?.keys() ?? [])],
    db: options.db,
    logger,
    onLifted: () => workerPool?.nudge(config.worker.concurrency),
  });
  let workerPool: WorkerPool | undefined;
  // One connection per concurrent job, plus one for LISTEN and one spare; and one for the looks for jobs.
  const pgPool = new GraphilePool(
    { connectionString: options.databaseUrl, max: config.worker.concurrency + 2 },
    logger,
    databaseWaitMs,
  );
  const looks = new GetJobConnection(options.databaseUrl, logger, databaseWaitMs);
  pgPool.on('connect', looks.route);
  const definitions = new Map([...(await loadTaskDefinitions()), ...(options.extraTasks ?? [])]);
  const notifications = new Notifications(options.databaseUrl, logger);
  const jobEvents = new JobEvents(notifications);
  const deps = {
    db: options.db,
    config,
    logger,
    events: jobEvents,
    storage: createStorage(config),
    kinds: actingForTheirTenant(new Map([...jobKinds, ...(options.extraKinds ?? [])])),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.services ? { services: options.services } : {}),
  };
  // graphile-worker locks runs with its pool's id (not each worker's); the heartbeat reports it.
  const lockIds = new Set<string>();
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => lockIds.add(workerPool.id));
  events.on('pool:create', (created) => {
    workerPool = created.workerPool;
  });
  const slots = new TenantSlots({
    concurrency: config.worker.concurrency,
    perTenant: config.jobs.tenantConcurrency,
    kinds: config.worker.kinds,
    db: options.db,
    logger,
    alsoSkip: () => gate.flags(),
    onFreed: () => workerPool?.nudge(config.worker.concurrency),
  });
  slots.attach(events);
  await slots.start();
  await gate.start(notifications);
  const runner = await run({
    events,
    pgPool,
    concurrency: config.worker.concurrency,
    pollInterval: config.worker.pollIntervalMs,
    forbiddenFlags: slots.forbiddenFlags,
    noHandleSignals: true,
    gracefulShutdownAbortTimeout: config.worker.shutdownGraceMs,
    logger: workerLogger(logger),
    taskList: toTaskList(definitions, deps),
    crontab: options.crontab ?? defaultCrontab,
    // Unbatched, graphile-worker does not await a job's completion before its
    // pool ends, so a job finished during shutdown stays locked (and runs
    // again hours later). Batched completions are flushed before the pool closes.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  // Beat once now rather than at the next minute, so /health reflects this worker at once.
  await runner.addJob('system__heartbeat', {}, { jobKey: 'system__heartbeat' });
  const liveness = await startLiveness({
    db: options.db,
    config,
    logger,
    processId: `${process.pid}-${randomUUID()}`,
    workerIds: () => [...lockIds],
  });
  logger.info(
    {
      concurrency: config.worker.concurrency,
      pool: config.worker.kinds.length ? config.worker.kinds : 'every kind',
      tasks: [...definitions.keys()],
      kinds: [...deps.kinds.keys()],
    },
    'worker started',
  );
  let stopping: Promise<void> | undefined;
  // A pool that ended though nobody stopped it keeps its runs locked; a process still beating for it would
  // keep them from being released for ever.
  const stoppedItself = async (error: unknown) => {
    if (stopping) return;
    logger.error(
      { err: (error as Error | undefined)?.message },
      'graphile-worker stopped on its own; this worker falls silent',
    );
    await liveness.halt();
    options.onStoppedItself?.(error);
  };
  runner.promise.then(
    () => stoppedItself(undefined),
    (error: unknown) => stoppedItself(error),
  );
  const stop = async () => {
    pgPool.stopWaiting();
    looks.stopWaiting();
    await runner.stop('shutdown');
    await slots.stop();
    await gate.stop();
    await liveness.stop();
    await notifications.close();
    await pgPool.end();
    await looks.end();
    logger.info('worker stopped');
  };
  return { runner, stop: () => (stopping ??= stop()) };
}
