// Where the admin command line finds its database, as the service does:
// DATABASE_URL when set; else the embedded server `npm start` keeps under
// DATA_DIR. A running one is reached where it listens. When none runs, the
// cluster is started for the one command and stopped after it: starting it
// refuses a data folder another live process holds (db/embedded.ts), and the
// folder is never initialised here, so a typo in DATA_DIR cannot create an
// empty installation.
import type { Config } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { hasEmbeddedCluster, runningEmbeddedPostgres, startEmbeddedPostgres } from '../../db/embedded.ts';

/** The same database name scripts/start.ts creates on the embedded server. */
const embeddedDatabase = 'app';

export class UsageError extends Error {
  override name = 'UsageError';
}

export class CommandError extends Error {
  override name = 'CommandError';
}

export type DatabaseSource = 'DATABASE_URL' | 'embedded (running)' | 'embedded (started for this command)';

export type Reached = { url: string; source: DatabaseSource; stop(): Promise<void> };

const noCluster = (config: Config) =>
  new CommandError(
    `No database: DATABASE_URL is not set and ${config.dataDir} holds no embedded PostgreSQL. Set DATABASE_URL, or run \`npm start\` once to create one.`,
  );

/** The URL without starting anything: DATABASE_URL, or the running embedded server's; null when none runs. */
export function currentDatabaseUrl(config: Config): { url: string; source: DatabaseSource } | null {
  if (config.databaseUrl) return { url: config.databaseUrl, source: 'DATABASE_URL' };
  const running = runningEmbeddedPostgres(config.dataDir);
  return running ? { url: running.urlFor(embeddedDatabase), source: 'embedded (running)' } : null;
}

export async function reachDatabase(config: Config): Promise<Reached> {
  const current = currentDatabaseUrl(config);
  if (current) return { ...current, stop: async () => {} };
  if (!hasEmbeddedCluster(config.dataDir)) throw noCluster(config);
  const embedded = await startEmbeddedPostgres({ dir: config.dataDir, logger: createLogger('silent') });
  return { url: embedded.urlFor(embeddedDatabase), source: 'embedded (started for this command)', stop: embedded.stop };
}

export function describeMissing(config: Config): string {
  return hasEmbeddedCluster(config.dataDir)
    ? `The embedded PostgreSQL in ${config.dataDir} is not running. \`npm start\` starts it; run this again while it runs. (The other commands start it themselves, for their own duration.)`
    : noCluster(config).message;
}
