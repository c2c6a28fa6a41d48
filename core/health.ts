// Dependency checks behind /health, /health/ready and /health/cachestore.
// Each answers within a bounded time, whatever state the dependency is in.
import { z } from 'zod';
import { timestamp } from './timestamp.ts';
import { sql, type CommonQueryMethods } from '../db/pool.ts';
import { verifyApplied } from '../db/migrate.ts';
import type { MigrationFile } from '../db/migrations.ts';
import type { CacheStore } from './cache/store.ts';

export type CheckResult = { status: 'up' | 'down'; latency_ms: number; error?: string };

const checkTimeoutMs = 2000;

export async function timed(check: () => Promise<unknown>, timeoutMs = checkTimeoutMs): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'up', latency_ms: elapsed(started) };
  } catch (error) {
    return { status: 'down', latency_ms: elapsed(started), error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;

export const checkDatabase = (db: CommonQueryMethods) =>
  timed(() => db.oneFirst(sql.type(z.object({ one: z.number() }))`select 1 as one`));

export const checkCache = (cache: CacheStore) => timed(() => cache.ping());

const appliedRow = z.object({ id: z.number(), name: z.string(), checksum: z.string() });

export type MigrationCheck = CheckResult & { pending: string[] };

/** Up when every migration file is applied unchanged and graphile-worker's schema exists. */
export async function checkMigrations(db: CommonQueryMethods, files: MigrationFile[]): Promise<MigrationCheck> {
  let pending: string[] = [];
  const result = await timed(async () => {
    const exists = await db.oneFirst(sql.type(z.object({ ready: z.boolean() }))`
      select to_regclass('public.schema_migrations') is not null
         and to_regclass('graphile_worker.migrations') is not null as ready`);
    if (!exists) {
      pending = files.map((file) => file.name);
      throw new Error('migrations have not been applied');
    }
    const applied = await db.any(sql.type(appliedRow)`select id, name, checksum from schema_migrations order by id`);
    verifyApplied([...applied], files);
    pending = files.filter((file) => !applied.some((row) => row.id === file.id)).map((file) => file.name);
    if (pending.length > 0) throw new Error(`${pending.length} migration(s) pending`);
  });
  return { ...result, pending };
}

/** The heartbeat task's row: which worker ran it last, and when (read by checkWorkers). */
export async function recordHeartbeat(db: CommonQueryMethods, name: string, workerId: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    insert into worker_heartbeats (name, worker_id, ran_at) values (${name}, ${workerId}, now())
    on conflict (name) do update set worker_id = excluded.worker_id, ran_at = excluded.ran_at`);
}

const heartbeat = z.object({ ran_at: timestamp, age_seconds: z.number() });

/** When a worker last ran the heartbeat job; the queue is stale when no worker has for a while. */
export async function checkWorkers(
  db: CommonQueryMethods,
): Promise<CheckResult & { last_heartbeat_at: string | null }> {
  let lastHeartbeatAt: string | null = null;
  const result = await timed(async () => {
    const last = await db.maybeOne(sql.type(heartbeat)`
      select ran_at, extract(epoch from now() - ran_at)::float8 as age_seconds
      from worker_heartbeats where name = 'queue'`);
    lastHeartbeatAt = last?.ran_at ?? null;
    // The heartbeat runs every minute; three missed beats mean no worker is taking jobs.
    if (!last || last.age_seconds > 180) throw new Error('no worker has run a job in the last 3 minutes');
  });
  return { ...result, last_heartbeat_at: lastHeartbeatAt };
}
