// Building and tearing down the services a process runs on.
import { z } from 'zod';
import { BackendCanceller } from '../db/canceller.ts';
import { createPool, sql } from '../db/pool.ts';
import { ReadReplica } from '../db/replica.ts';
import { readMigrationFiles } from '../db/migrations.ts';
import { createCacheStore } from './cache/index.ts';
import type { Config } from './config.ts';
import { bootstrapAdmin } from './identity/bootstrap.ts';
import { networkOf } from './net/client-network.ts';
import { createRateLimits } from './identity/rate-limit.ts';
import { AccessCache } from './access-cache.ts';
import { PublicCache } from './content/public-cache.ts';
import { SearchIndexes } from './search/memory/indexes.ts';
import { JobEvents } from './jobs/events.ts';
import { RunEvents } from './agents/run-event-channel.ts';
import { Notifications } from './notifications.ts';
import { StatisticsRecorder } from './statistics/recorder.ts';
import { createStorage } from './storage/index.ts';
import type { Logger } from './logger.ts';
import type { Services } from './services.ts';

export async function createServices(
  config: Config,
  databaseUrl: string,
  logger: Logger,
  applicationName: string,
): Promise<Services> {
  const notifications = new Notifications(databaseUrl, logger);
  const statistics = new StatisticsRecorder(config.statsFlushSeconds, logger);
  // Failed sign-ins (passwords and client secrets) feed the security dashboard, with the account tried.
  const signInFailed = (ip: string | undefined, account: string) =>
    statistics.signal('login_failed', networkOf(ip).network, account);
  const db = await connectWithRetry(
    () =>
      createPool(databaseUrl, {
        maxPoolSize: config.databasePoolSize,
        applicationName,
        role: config.databaseAppRole,
      }),
    logger,
  );
  return {
    config,
    logger,
    db,
    canceller: new BackendCanceller(databaseUrl),
    ...(config.databaseRead && {
      replica: await ReadReplica.create(
        {
          primaryUrl: databaseUrl,
          replicaUrl: config.databaseRead.url,
          maxLagMs: config.databaseRead.maxLagMs,
          poolSize: config.databasePoolSize,
          applicationName,
          role: config.databaseAppRole,
        },
        logger,
      ),
    }),
    cache: createCacheStore(config.redisUrl),
    storage: createStorage(config),
    rateLimits: createRateLimits(databaseUrl, config.rateLimits, signInFailed),
    migrations: readMigrationFiles(),
    notifications,
    jobEvents: new JobEvents(notifications),
    runEvents: new RunEvents(notifications),
    accessCache: new AccessCache(config, logger, notifications),
    publicCache: new PublicCache({ ...config.publicCache, redisUrl: config.redisUrl }, logger, notifications),
    searchIndexes: new SearchIndexes(db, config.searchMemory, logger, notifications),
    statistics,
  };
}

/**
 * A process may start before its database (compose, a rolling restart): wait
 * for it a while, saying so, instead of crash-looping. Readiness stays 503
 * until the pool exists anyway.
 */
async function connectWithRetry<T>(connect: () => Promise<T>, logger: Logger, waitMs = 30_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      logger.warn({ attempt, err: (error as Error).message }, 'database not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 500, 3000)));
    }
  }
}

export async function closeServices(services: Services): Promise<void> {
  services.accessCache.close();
  services.publicCache.close();
  await services.searchIndexes.close();
  // What was counted since the last minute's write goes out before the pool closes.
  await services.statistics.stop(services.db);
  await Promise.allSettled([
    services.db.end(),
    services.cache.close(),
    services.rateLimits.close(),
    services.notifications.close(),
    services.canceller.close(),
    services.replica?.close(),
  ]);
}

/** Creates the first global admin on an empty installation, saying so in the log. */
export async function ensureAdmin(services: Services): Promise<void> {
  const { config, logger } = services;
  if (!config.admin) {
    logger.warn('no ADMIN_EMAIL/ADMIN_PASSWORD set: no bootstrap admin is created in production');
    return;
  }
  if (
    !(await services.db.oneFirst(
      sql.type(z.object({ ready: z.boolean() }))`select to_regclass('public.users') is not null as ready`,
    ))
  ) {
    logger.warn('the database is not migrated yet: npm run migrate creates the bootstrap admin');
    return;
  }
  const id = await bootstrapAdmin(services.db, config.admin);
  if (!id) return;
  if (config.admin.isDefault) {
    logger.warn(
      { email: config.admin.email, password: config.admin.password },
      'created the bootstrap admin with the local default credentials: set ADMIN_EMAIL and ADMIN_PASSWORD for anything but local use',
    );
  } else {
    logger.info({ email: config.admin.email }, 'created the bootstrap admin');
  }
}
