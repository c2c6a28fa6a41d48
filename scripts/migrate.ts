// `npm run migrate` (Procfile: release): applies pending migrations, creates
// the bootstrap admin on an empty installation, and exits.
import { closeServices, createServices, ensureAdmin } from '../core/boot.ts';
import { loadConfig, requireDatabaseUrl } from '../core/config.ts';
import { exitOnStartupError } from '../core/lifecycle.ts';
import { createLogger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import { migrate } from '../db/migrate.ts';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'migrate' });
  const databaseUrl = requireDatabaseUrl(config);
  const report = await migrate(databaseUrl, { workerLogger: workerLogger(logger) });
  logger.info(report, report.applied.length ? 'migrations applied' : 'database already up to date');
  const services = await createServices(config, databaseUrl, logger, 'migrate');
  await ensureAdmin(services);
  await closeServices(services);
} catch (error) {
  exitOnStartupError(error);
}
