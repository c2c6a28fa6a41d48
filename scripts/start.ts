// `npm start`: the whole service in one command. Without DATABASE_URL it runs
// an embedded PostgreSQL with its data under DATA_DIR (./.data); then it
// migrates, creates the bootstrap admin, and runs the API and a worker.
import { mkdirSync } from 'node:fs';
import { startApi } from '../api/server.ts';
import { closeServices, createServices, ensureAdmin } from '../core/boot.ts';
import { loadConfig } from '../core/config.ts';
import { exitOnStartupError, handleShutdown, type ShutdownStep } from '../core/lifecycle.ts';
import { createLogger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPostgres } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { startWorker } from '../worker/runner.ts';

let embedded: EmbeddedPostgres | undefined;
try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'start' });
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dir: config.dataDir, logger });
    await ensureDatabase(embedded.adminUrl, 'app');
    databaseUrl = embedded.urlFor('app');
  }
  mkdirSync(config.mediaDir, { recursive: true });
  const report = await migrate(databaseUrl, { workerLogger: workerLogger(logger) });
  if (report.applied.length) logger.info({ applied: report.applied }, 'migrations applied');

  const services = await createServices(config, databaseUrl, logger, 'start');
  await ensureAdmin(services);
  const api = await startApi(services);
  const worker = await startWorker({ databaseUrl, config, db: services.db, logger });

  const steps: ShutdownStep[] = [
    { name: 'http', run: api.close },
    { name: 'worker', run: worker.stop },
    { name: 'services', run: () => closeServices(services) },
  ];
  const database = embedded;
  if (database) steps.push({ name: 'postgres', run: () => database.stop() });
  handleShutdown(logger, steps, config.shutdownTimeoutMs + config.worker.shutdownGraceMs);

  logger.info({ docs: `${api.url}/docs`, database: embedded ? 'embedded' : 'DATABASE_URL' }, 'ready');
  process.stdout.write(`\n  API documentation: ${api.url}/docs\n  Press Ctrl-C to stop.\n\n`);
} catch (error) {
  await embedded?.stop().catch(() => undefined);
  exitOnStartupError(error);
}
