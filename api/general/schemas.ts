import { z } from 'zod';
import { timestamp } from '../../core/timestamp.ts';

export const check = z
  .object({
    status: z.enum(['up', 'down']),
    latency_ms: z.number().describe('Time the check took, in milliseconds'),
    error: z.string().optional().describe('Why the dependency is down'),
  })
  .meta({ id: 'DependencyCheck' });

export const root = z
  .object({
    name: z.string(),
    version: z.string(),
    docs_url: z.url(),
    openapi_url: z.url(),
    endpoints: z.object({
      total: z.number().int().describe('Endpoints of the specification'),
      implemented: z.number().int().describe('Of those, the ones built (every one)'),
      beyond_spec: z.number().int().describe('Endpoints added beyond the specification (jobs, admin jobs, metrics)'),
    }),
  })
  .meta({ id: 'ServiceInfo' });

export const health = z
  .object({
    status: z
      .enum(['ok', 'degraded', 'down'])
      .describe('down: the database is unreachable or unmigrated; degraded: an optional part is'),
    version: z.string(),
    uptime_seconds: z.number().int(),
    checks: z.object({
      database: check,
      migrations: check.extend({ pending: z.array(z.string()) }),
      cache: check.extend({ store: z.enum(['memory', 'redis']) }),
      workers: check.extend({ last_heartbeat_at: timestamp.nullable() }),
      replica: check
        .extend({
          lag_ms: z
            .number()
            .int()
            .nullable()
            .describe(
              'How far behind the primary the replica is (null: not known to have caught up since it was reached)',
            ),
          max_lag_ms: z
            .number()
            .int()
            .describe('DATABASE_READ_MAX_LAG_MS: further behind, every read goes to the primary'),
        })
        .optional()
        .describe(
          'The read replica (only with DATABASE_READ_URL): down or further behind than max_lag_ms, the primary serves every read',
        ),
    }),
  })
  .meta({ id: 'Health' });

export const live = z.object({ status: z.literal('ok'), uptime_seconds: z.number().int() }).meta({ id: 'Liveness' });

export const ready = z
  .object({
    status: z.literal('ready'),
    checks: z.object({ database: check, migrations: check.extend({ pending: z.array(z.string()) }) }),
  })
  .meta({ id: 'Readiness' });

export const cacheStore = check.extend({ store: z.enum(['memory', 'redis']) }).meta({ id: 'CacheStoreHealth' });
