// What a process hands to the API and the worker: built once at start,
// passed explicitly, never imported as a global.
import type { CacheStore } from './cache/store.ts';
import type { Config } from './config.ts';
import type { RateLimits } from './identity/rate-limit.ts';
import type { JobEvents } from './jobs/events.ts';
import type { Logger } from './logger.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { MigrationFile } from '../db/migrations.ts';

export type Services = {
  config: Config;
  db: DatabasePool;
  cache: CacheStore;
  rateLimits: RateLimits;
  logger: Logger;
  /** Job changes as they happen (LISTEN/NOTIFY); connects on first use. */
  jobEvents: JobEvents;
  /** The migration files this build expects applied; readiness compares against them. */
  migrations: MigrationFile[];
};
