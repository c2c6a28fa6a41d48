// `npm run migrate` (Procfile: release): applies pending migrations and exits.
import { loadConfig, requireDatabaseUrl } from '../core/config.ts';
import { exitOnStartupError } from '../core/lifecycle.ts';
import { createLogger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import { migrate } from './migrate.ts';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'migrate' });
  const report = await migrate(requireDatabaseUrl(config), { workerLogger: workerLogger(logger) });
  logger.info(report, report.applied.length ? 'migrations applied' : 'database already up to date');
} catch (error) {
  exitOnStartupError(error);
}
