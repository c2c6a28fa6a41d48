// `npm run api` (Procfile: web): the HTTP API alone, against DATABASE_URL.
import { closeServices, createServices, ensureAdmin } from '../core/boot.ts';
import { loadConfig, requireDatabaseUrl } from '../core/config.ts';
import { exitOnStartupError, handleShutdown } from '../core/lifecycle.ts';
import { createLogger } from '../core/logger.ts';
import { startApi } from './server.ts';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'api' });
  const services = await createServices(config, requireDatabaseUrl(config), logger, 'api');
  await ensureAdmin(services);
  const api = await startApi(services);
  handleShutdown(
    logger,
    [
      { name: 'http', run: api.close },
      { name: 'services', run: () => closeServices(services) },
    ],
    config.shutdownTimeoutMs,
  );
  logger.info({ docs: `${api.url}/docs` }, 'API documentation');
} catch (error) {
  exitOnStartupError(error);
}
