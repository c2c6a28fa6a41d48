// `npm run worker` (Procfile: worker): a graphile-worker pool alone, against
// DATABASE_URL. Run as many as the queue needs; they share it safely.
import { closeServices, createServices } from '../core/boot.ts';
import { loadConfig, requireDatabaseUrl } from '../core/config.ts';
import { exitOnStartupError, handleShutdown } from '../core/lifecycle.ts';
import { createLogger } from '../core/logger.ts';
import { serveWorkerMetrics } from './metrics-server.ts';
import { startWorker } from './runner.ts';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'worker' });
  const databaseUrl = requireDatabaseUrl(config);
  const services = await createServices(config, databaseUrl, logger, 'worker');
  // Its own metrics for Prometheus, when WORKER_METRICS_PORT is set (docs/metrics.md): listening before the
  // worker starts, so the port answers from the moment the process counts as up.
  const metrics =
    config.workerMetricsPort === undefined
      ? undefined
      : await serveWorkerMetrics({ port: config.workerMetricsPort, token: config.metricsToken, logger });
  const starting = startWorker({
    databaseUrl,
    config,
    db: services.db,
    logger,
    services,
    onStoppedItself: () => process.exit(1),
  });
  // Heard from before the worker starts: it takes jobs before startWorker returns, and a SIGTERM in that
  // window used to end the process as a SIGKILL would. One now waits for the start, then stops it cleanly.
  handleShutdown(
    logger,
    [
      { name: 'worker', run: async () => (await starting).stop() },
      { name: 'services', run: () => closeServices(services) },
      ...(metrics ? [{ name: 'metrics', run: metrics.close }] : []),
    ],
    config.worker.shutdownGraceMs + 10_000,
  );
  await starting;
} catch (error) {
  exitOnStartupError(error);
}
