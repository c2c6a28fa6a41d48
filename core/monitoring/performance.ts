// Performance over a recent window, for global admins: latency per route
// across every site (from the counted requests' merged histograms), the
// slowest routes, and per job kind how long jobs waited in the queue and ran
// (percentiles over the jobs finished in the window).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { endpointMetricSchema, endpointMetrics } from '../statistics/reports.ts';
import { timestamp } from '../timestamp.ts';

const seconds = z.number().nullable();

export const performanceSchema = z
  .object({
    window: z.object({ from: timestamp, to: timestamp }),
    routes: z.array(endpointMetricSchema).describe('Every route asked in the window, busiest first'),
    slowest_routes: z.array(endpointMetricSchema).describe('By p95, among routes asked at least 10 times'),
    job_kinds: z.array(
      z.object({
        kind: z.string(),
        finished: z.number().int(),
        failed: z.number().int(),
        wait_p50_s: seconds.describe('From submit to start'),
        wait_p95_s: seconds,
        run_p50_s: seconds.describe('From start to finish'),
        run_p95_s: seconds,
        run_p99_s: seconds,
      }),
    ),
  })
  .meta({ id: 'PerformanceMetrics' });

export async function performanceMetrics(db: CommonQueryMethods, minutes: number) {
  const window = await db.one(sql.type(z.object({ from: timestamp, to: timestamp }))`
    select now() - make_interval(mins => ${minutes}) as from, now() as to`);
  const routes = await endpointMetrics(db, null, window);
  const jobKinds = await db.any(sql.type(performanceSchema.shape.job_kinds.element)`
    select kind, count(*)::int as finished, count(*) filter (where status = 'failed')::int as failed,
      percentile_cont(0.5) within group (order by extract(epoch from started_at - created_at)) as wait_p50_s,
      percentile_cont(0.95) within group (order by extract(epoch from started_at - created_at)) as wait_p95_s,
      percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at)) as run_p50_s,
      percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at)) as run_p95_s,
      percentile_cont(0.99) within group (order by extract(epoch from finished_at - started_at)) as run_p99_s
    from jobs where finished_at >= ${window.from} and started_at is not null and status in ('succeeded', 'failed')
    group by kind order by kind`);
  return {
    window,
    routes,
    slowest_routes: routes
      .filter((route) => route.count >= 10 && route.p95_ms !== null)
      .sort((a, b) => b.p95_ms! - a.p95_ms!)
      .slice(0, 10),
    job_kinds: [...jobKinds],
  };
}
