// Prometheus metrics for operators, read from the database at each scrape so
// that every API process answers for the whole deployment (workers serve no
// HTTP): queue depth and age per kind, jobs per state, recent durations and
// failures, live workers; plus this process's own runtime metrics.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';

// Durations and failures are over this window, so the figures move with what happens now.
const windowMinutes = 15;

const queuedRow = z.object({ kind: z.string(), count: z.number(), oldest: z.number() });
const stateRow = z.object({ kind: z.string(), status: z.string(), count: z.number() });
const durationRow = z.object({
  kind: z.string(),
  p50: z.number(),
  p95: z.number(),
  max: z.number(),
  count: z.number(),
});
const failureRow = z.object({ kind: z.string(), code: z.string(), count: z.number() });

export type JobMetrics = {
  contentType: string;
  /** The metrics as text, the database ones read now through `db` (scrapes run one at a time). */
  render(db: CommonQueryMethods): Promise<string>;
};

export function jobMetrics(config: Config): JobMetrics {
  const registry = new Registry();
  // The database of the scrape under way: gauges read through it when the registry collects.
  let db: CommonQueryMethods | undefined;
  const reading = () => {
    if (!db) throw new Error('metrics are read only during a scrape');
    return db;
  };
  collectDefaultMetrics({ register: registry, prefix: 'cap_process_' });
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    collect: (g: Gauge<L>) => Promise<void>,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        await collect(this);
      },
    });

  const queuedByKind = () =>
    reading().any(sql.type(queuedRow)`
      select kind, count(*)::int as count, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest
      from jobs where status = 'queued' group by kind`);
  gauge('cap_jobs_queued', 'Jobs waiting for a worker, per kind', ['kind'], async (g) => {
    const rows = await queuedByKind();
    for (const row of rows) g.set({ kind: row.kind }, row.count);
  });
  gauge('cap_jobs_queued_oldest_age_seconds', 'Age of the oldest queued job, per kind', ['kind'], async (g) => {
    const rows = await queuedByKind();
    for (const row of rows) g.set({ kind: row.kind }, row.oldest);
  });
  gauge('cap_jobs', 'Jobs kept, per kind and state', ['kind', 'status'], async (g) => {
    const rows = await reading().any(
      sql.type(stateRow)`select kind, status, count(*)::int as count from jobs group by kind, status`,
    );
    for (const row of rows) g.set({ kind: row.kind, status: row.status }, row.count);
  });
  gauge(
    'cap_job_duration_seconds',
    `Run time of jobs that succeeded in the last ${windowMinutes} minutes, per kind`,
    ['kind', 'quantile'],
    async (g) => {
      const rows = await reading().any(sql.type(durationRow)`
      select kind, count(*)::int as count,
             percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at))::float8 as p50,
             percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at))::float8 as p95,
             max(extract(epoch from finished_at - started_at))::float8 as max
      from jobs where status = 'succeeded' and finished_at > now() - ${windowMinutes} * interval '1 minute' and started_at is not null
      group by kind`);
      for (const row of rows) {
        g.set({ kind: row.kind, quantile: '0.5' }, row.p50);
        g.set({ kind: row.kind, quantile: '0.95' }, row.p95);
        g.set({ kind: row.kind, quantile: '1' }, row.max);
      }
    },
  );
  gauge(
    'cap_job_failures',
    `Jobs that failed in the last ${windowMinutes} minutes, per kind and error code`,
    ['kind', 'code'],
    async (g) => {
      const rows = await reading().any(sql.type(failureRow)`
      select kind, coalesce(error->>'code', 'unknown') as code, count(*)::int as count
      from jobs where status = 'failed' and finished_at > now() - ${windowMinutes} * interval '1 minute' group by 1, 2`);
      for (const row of rows) g.set({ kind: row.kind, code: row.code }, row.count);
    },
  );
  gauge('cap_workers_alive', 'Worker processes whose heartbeat is current', [], async (g) => {
    const alive = await reading().oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from worker_processes where beat_at > now() - ${config.worker.lostAfterMs} * interval '1 millisecond'`);
    g.set(alive);
  });
  let previous: Promise<unknown> = Promise.resolve();
  return {
    contentType: registry.contentType,
    render(through) {
      const scrape = previous.then(async () => {
        db = through;
        try {
          return await registry.metrics();
        } finally {
          db = undefined;
        }
      });
      previous = scrape.catch(() => undefined);
      return scrape;
    },
  };
}
