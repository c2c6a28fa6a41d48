// The whole system at a glance, for global admins: the database (a round
// trip's latency, connections by application against the server's maximum),
// migrations, worker processes and their last beat, the queue per job kind,
// storage, the public cache, and this API process (event-loop delay, memory).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { MigrationFile } from '../../db/migrations.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import type { PublicCache } from '../content/public-cache.ts';
import { jobStatistics } from '../jobs/admin.ts';
import { timestamp } from '../timestamp.ts';
import { eventLoopDelay } from './event-loop.ts';

export const systemHealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']).describe('degraded: a migration pending, no live worker, or a slow database'),
    problems: z.array(z.string()),
    checked_at: timestamp,
    database: z.object({
      latency_ms: z.number(),
      server_version: z.string(),
      connections: z.object({
        max: z.number().int(),
        used: z.number().int(),
        by_application: z.array(z.object({ application: z.string(), connections: z.number().int() })),
      }),
      pool_size: z.number().int().describe('DATABASE_POOL_SIZE of each API process'),
    }),
    migrations: z.object({ applied: z.number().int(), expected: z.number().int(), pending: z.array(z.string()) }),
    workers: z.array(
      z.object({
        id: z.string(),
        hostname: z.string(),
        pid: z.number().int(),
        beat_at: timestamp,
        alive: z.boolean(),
        running: z.number().int(),
      }),
    ),
    queue: z.array(z.object({ kind: z.string(), queued: z.number().int(), oldest_age_seconds: z.number() })),
    storage: z.object({ driver: z.string() }),
    cache: z.object({
      store: z.string(),
      entries: z.number().int(),
      hits: z.number().int(),
      misses: z.number().int(),
      invalidations: z.number().int(),
      evictions: z.number().int(),
    }),
    process: z.object({
      pid: z.number().int(),
      uptime_seconds: z.number(),
      event_loop_delay: z.object({
        p50_ms: z.number(),
        p99_ms: z.number(),
        max_ms: z.number(),
        sampling_since_s: z.number(),
      }),
      memory: z.object({
        rss_bytes: z.number().int(),
        heap_used_bytes: z.number().int(),
        heap_total_bytes: z.number().int(),
        external_bytes: z.number().int(),
      }),
    }),
  })
  .meta({ id: 'SystemHealth' });

const serverRow = z.object({
  checked_at: timestamp,
  server_version: z.string(),
  max: z.number(),
  by_application: z.array(z.object({ application: z.string(), connections: z.number() })),
});

export async function systemHealth(
  db: CommonQueryMethods,
  actor: Actor,
  deps: { config: Config; migrations: readonly MigrationFile[]; publicCache: PublicCache },
) {
  const began = performance.now();
  await db.query(sql.typeAlias('void')`select`);
  const latency = Math.round((performance.now() - began) * 100) / 100;
  const server = await db.one(sql.type(serverRow)`
    select now() as checked_at, current_setting('server_version') as server_version,
      current_setting('max_connections')::int as max,
      coalesce((select jsonb_agg(jsonb_build_object('application', application, 'connections', n) order by n desc)
                from (select coalesce(nullif(application_name, ''), backend_type) as application, count(*)::int as n
                      from pg_stat_activity where datname = current_database() group by 1) a), '[]'::jsonb) as by_application`);
  const applied = await db.anyFirst(sql.type(z.object({ name: z.string() }))`select name from schema_migrations`);
  const pending = deps.migrations.map((file) => file.name).filter((name) => !applied.includes(name));
  const jobs = await jobStatistics(db, actor, deps.config);
  const workers = jobs.workers.map(({ id, hostname, pid, beat_at, alive, running }) => ({
    id,
    hostname,
    pid,
    beat_at,
    alive,
    running,
  }));
  const problems = [
    ...(pending.length > 0 ? [`${pending.length} migration(s) not applied`] : []),
    ...(workers.some((worker) => worker.alive) ? [] : ['no live worker process: jobs are not running']),
    ...(latency > 100 ? [`the database took ${latency} ms to answer`] : []),
  ];
  const memory = process.memoryUsage();
  return {
    status: problems.length > 0 ? ('degraded' as const) : ('ok' as const),
    problems,
    checked_at: server.checked_at,
    database: {
      latency_ms: latency,
      server_version: server.server_version,
      connections: {
        max: server.max,
        used: server.by_application.reduce((sum, row) => sum + row.connections, 0),
        by_application: server.by_application,
      },
      pool_size: deps.config.databasePoolSize,
    },
    migrations: { applied: applied.length, expected: deps.migrations.length, pending },
    workers,
    queue: jobs.queued.map((row) => ({
      kind: row.kind,
      queued: row.count,
      oldest_age_seconds: row.oldest_age_seconds,
    })),
    storage: { driver: deps.config.storage.driver },
    cache: deps.publicCache.counts(),
    process: {
      pid: process.pid,
      uptime_seconds: Math.round(process.uptime()),
      event_loop_delay: eventLoopDelay(),
      memory: {
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal,
        external_bytes: memory.external,
      },
    },
  };
}
