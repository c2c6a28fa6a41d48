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
import { ensureDatabase, startEmbeddedPostgres } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { startWorker } from '../worker/runner.ts';

// Each part registers how to stop it as soon as it runs, at the front: a
// signal at any moment, even mid-start, stops what exists, newest first
// (HTTP, then the worker's drain, then pools, then PostgreSQL).
const steps: ShutdownStep[] = [];
const started = (step: ShutdownStep) => steps.unshift(step);

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'start' });
  handleShutdown(logger, steps, config.shutdownTimeoutMs + config.worker.shutdownGraceMs);

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const embedded = await startEmbeddedPostgres({ dir: config.dataDir, logger });
    started({ name: 'postgres', run: () => embedded.stop() });
    await ensureDatabase(embedded.adminUrl, 'app');
    databaseUrl = embedded.urlFor('app');
  }
  mkdirSync(config.mediaDir, { recursive: true });
  const report = await migrate(databaseUrl, { workerLogger: workerLogger(logger) });
  if (report.applied.length) logger.info({ applied: report.applied }, 'migrations applied');

  const services = await createServices(config, databaseUrl, logger, 'start');
  started({ name: 'services', run: () => closeServices(services) });
  await ensureAdmin(services);
  const worker = await startWorker({
    databaseUrl,
    config,
    db: services.db,
    logger,
    services,
    onStoppedItself: () => process.exit(1),
  });
  started({ name: 'worker', run: worker.stop });
  const api = await startApi(services);
  started({ name: 'http', run: api.close });

  logger.info({ docs: `${api.url}/docs`, database: config.databaseUrl ? 'DATABASE_URL' : 'embedded' }, 'ready');
  process.stdout.write(banner(api.url, databaseUrl, Boolean(config.databaseUrl)));
} catch (error) {
  for (const step of steps) await step.run().catch(() => undefined);
  exitOnStartupError(error);
}

/**
 * What a newcomer needs to go on: where the API, its documentation and the
 * admin page are, and the database. The embedded one's URL carries its
 * password, as `npm run admin -- database-url` prints it: it is a local
 * server on 127.0.0.1, and its port stays the same between starts
 * (db/embedded.ts). A DATABASE_URL of one's own is shown without its password.
 */
function banner(apiUrl: string, databaseUrl: string, own: boolean): string {
  const database = own ? `${withoutPassword(databaseUrl)} (DATABASE_URL)` : `${databaseUrl} (embedded)`;
  return [
    '',
    `  API:               ${apiUrl}`,
    `  API documentation: ${apiUrl}/docs`,
    `  Admin page:        ${apiUrl}/admin/ui/`,
    `  Database:          ${database}`,
    '  Press Ctrl-C to stop.',
    '',
    '',
  ].join('\n');
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL';
  }
}
