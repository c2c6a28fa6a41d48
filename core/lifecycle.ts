// Orderly shutdown on SIGINT/SIGTERM: the steps run once, in order (stop
// taking requests, drain the worker, close pools, stop PostgreSQL). A second
// signal, or a step that overruns the deadline, ends the process at once.
import type { Logger } from './logger.ts';

export type ShutdownStep = { name: string; run: () => Promise<unknown> };

export function handleShutdown(logger: Logger, steps: ShutdownStep[], deadlineMs: number): () => Promise<void> {
  let shuttingDown: Promise<void> | undefined;
  const shutdown = () =>
    (shuttingDown ??= (async () => {
      const timer = setTimeout(() => {
        logger.error({ deadline_ms: deadlineMs }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, deadlineMs);
      timer.unref();
      let failed = false;
      for (const step of steps) {
        try {
          await step.run();
        } catch (error) {
          failed = true;
          logger.error({ err: error, step: step.name }, 'shutdown step failed');
        }
      }
      clearTimeout(timer);
      logger.info('shut down');
      process.exitCode = failed ? 1 : 0;
    })());

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (shuttingDown) {
        logger.warn({ signal }, 'second signal: exiting without waiting');
        process.exit(1);
      }
      logger.info({ signal }, 'shutting down');
      void shutdown();
    });
  }
  return shutdown;
}

/**
 * Stops a process that cannot start. Expected refusals (a bad variable, an
 * edited migration, a busy data folder) print their message alone; anything
 * else prints its stack too, for whoever has to debug it.
 */
export function exitOnStartupError(error: unknown): never {
  const expected = error instanceof Error && ['ConfigError', 'MigrationError'].includes(error.name);
  const text = error instanceof Error ? (expected ? error.message : (error.stack ?? error.message)) : String(error);
  process.stderr.write(`\n${text}\n\n`);
  process.exit(1);
}
