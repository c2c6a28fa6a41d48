// What a process hands to the API and the worker: built once at start,
// passed explicitly, never imported as a global.
import type { CacheStore } from './cache/store.ts';
import type { Config } from './config.ts';
import type { AccessCache } from './access-cache.ts';
import type { PublicCache } from './content/public-cache.ts';
import type { SearchIndexes } from './search/memory/indexes.ts';
import type { RateLimits } from './identity/rate-limit.ts';
import type { StatisticsRecorder } from './statistics/recorder.ts';
import type { JobEvents } from './jobs/events.ts';
import type { RunEvents } from './agents/run-event-channel.ts';
import type { Logger } from './logger.ts';
import type { Notifications } from './notifications.ts';
import type { Storage } from './storage/storage.ts';
import type { BackendCanceller } from '../db/canceller.ts';
import type { CommonQueryMethods, DatabasePool } from '../db/pool.ts';
import type { ReadReplica } from '../db/replica.ts';
import type { MigrationFile } from '../db/migrations.ts';

export type Services = {
  config: Config;
  /** The process's pool. The API's handlers never see it: they get a database bound to their request. */
  db: DatabasePool;
  /** Cancels statements of requests past their deadline, on a connection outside the pool. */
  canceller: BackendCanceller;
  /** The read replica, with DATABASE_READ_URL: routes that declare `reads: 'replica'` read it while it is fresh enough. */
  replica?: ReadReplica;
  cache: CacheStore;
  /** Where files go: a local folder or S3, chosen by STORAGE_DRIVER. */
  storage: Storage;
  rateLimits: RateLimits;
  logger: Logger;
  /** The process's one LISTEN connection (connects on first use). */
  notifications: Notifications;
  /** Job changes as they happen. */
  jobEvents: JobEvents;
  /** Agent runs' events as they happen (text, tool calls), for their event streams. */
  runEvents: RunEvents;
  /** Sessions, service accounts, sites and roles kept in memory while changes to them are heard. */
  accessCache: AccessCache;
  /** Public delivery's answers, kept while changes to what they show are heard. */
  publicCache: PublicCache;
  /** Large sites' search documents held in memory, caught up with every change heard. */
  searchIndexes: SearchIndexes;
  /** Requests and public views counted in memory, written once a minute. */
  statistics: StatisticsRecorder;
  /** The migration files this build expects applied; readiness compares against them. */
  migrations: MigrationFile[];
};

/**
 * What a domain operation that reaches beyond the database is given: the
 * caller's database (in the API, bound to the request) and the process's
 * configuration, storage and log. Worker tasks and job runs get the same.
 */
export type Deps = { db: CommonQueryMethods; config: Config; storage: Storage; logger: Logger };
