// Prometheus metrics for operators. The job gauges are read from the database
// at each scrape, so that every API process answers for the whole deployment:
// queue depth and oldest wait per kind (what an autoscaler sizes each worker
// pool by), jobs per state, live workers. After them come this process's own
// metrics (core/metrics/process.ts): runtime, HTTP requests, and the jobs a
// worker in this process settled (a worker process serves its own,
// worker/metrics-server.ts).
import { Gauge, Registry } from 'prom-client';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { processMetrics } from '../metrics/process.ts';

const queuedRow = z.object({ kind: z.string(), count: z.number(), oldest: z.number() });
const stateRow = z.object({ kind: z.string(), status: z.string(), count: z.number() });

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
          // Two expositions one after the other are one: no name is in both.
          return (await registry.metrics()) + (await processMetrics().registry.metrics());
        } finally {
          db = undefined;
        }
      });
      previous = scrape.catch(() => undefined);
      return scrape;
    },
  };
}
