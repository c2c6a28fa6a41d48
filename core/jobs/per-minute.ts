// The jobs of the last hours minute by minute, for the admin console's
// charts: per kind, how many finished and failed, how many sat in the queue,
// and the median and 95th percentile of their wait and run times. It is read
// from the jobs table itself (created, started and finished times), so it
// needs no sampler and covers every worker; Prometheus (core/jobs/metrics.ts)
// remains the place for longer history.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { timestamp } from '../timestamp.ts';

export const perMinuteQuery = z.object({
  hours: z.coerce
    .number()
    .int()
    .min(1)
    .max(24)
    .default(3)
    .describe('How many hours back, ending with the current minute (1 to 24; default 3)'),
});

const minuteSchema = z.object({
  minute: timestamp.describe('The start of the minute'),
  kind: z.string(),
  succeeded: z.number().int().describe('Jobs of the kind that succeeded in this minute'),
  failed: z.number().int().describe('Jobs of the kind that failed in this minute'),
  canceled: z.number().int(),
  queued: z
    .number()
    .int()
    .describe('Jobs of the kind in the queue at the end of the minute (submitted, not yet started)'),
  wait_ms_p50: z.number().nullable().describe('Median wait from submit to start of the jobs that finished then'),
  wait_ms_p95: z.number().nullable(),
  run_ms_p50: z.number().nullable().describe('Median time from start to finish (a provider’s wait included)'),
  run_ms_p95: z.number().nullable(),
});

export const perMinuteSchema = z
  .object({
    from: timestamp.describe('The first minute'),
    to: timestamp.describe('The last minute (the current one, still filling)'),
    items: z
      .array(minuteSchema)
      .describe(
        'One row per minute and kind in which a job of the kind finished or waited in the queue, by minute then kind; ' +
          'a minute and kind left out had none',
      ),
  })
  .meta({ id: 'JobsPerMinute' });

export type JobsPerMinute = z.infer<typeof perMinuteSchema>;

export async function jobsPerMinute(
  db: CommonQueryMethods,
  actor: Actor,
  query: z.output<typeof perMinuteQuery>,
): Promise<JobsPerMinute> {
  requireGlobalAdmin(actor);
  const span = await db.one(sql.type(z.object({ from: timestamp, to: timestamp }))`
    select date_trunc('minute', now()) - make_interval(mins => ${query.hours * 60 - 1}) as "from",
           date_trunc('minute', now()) as "to"`);
  // Queue depth without a sampler: each job adds one to its kind's queue in the
  // minute it was submitted (or the first minute, if earlier) and takes it away
  // in the minute it started (or finished, when canceled before it ran); the
  // running sum over the minutes is the depth. Only jobs still unfinished or
  // finished inside the span can have been queued in it, which the status and
  // finished_at indexes find. A retried job counts from its first submit.
  const items = await db.any(sql.type(minuteSchema)`
    with moves as (
      select j.kind, greatest(date_trunc('minute', j.created_at), ${span.from}::timestamptz) as minute, 1 as delta
      from jobs j
      where (j.status in ('queued', 'running', 'waiting') or j.finished_at >= ${span.from}::timestamptz)
        and (coalesce(j.started_at, j.finished_at) is null or coalesce(j.started_at, j.finished_at) >= ${span.from}::timestamptz)
      union all
      select j.kind, date_trunc('minute', coalesce(j.started_at, j.finished_at)), -1
      from jobs j
      where (j.status in ('queued', 'running', 'waiting') or j.finished_at >= ${span.from}::timestamptz)
        and coalesce(j.started_at, j.finished_at) >= ${span.from}::timestamptz
    ),
    done as (
      select date_trunc('minute', j.finished_at) as minute, j.kind,
             count(*) filter (where j.status = 'succeeded')::int as succeeded,
             count(*) filter (where j.status = 'failed')::int as failed,
             count(*) filter (where j.status = 'canceled')::int as canceled,
             percentile_cont(0.5) within group (order by extract(epoch from j.started_at - j.created_at) * 1000) as wait_ms_p50,
             percentile_cont(0.95) within group (order by extract(epoch from j.started_at - j.created_at) * 1000) as wait_ms_p95,
             percentile_cont(0.5) within group (order by extract(epoch from j.finished_at - j.started_at) * 1000) as run_ms_p50,
             percentile_cont(0.95) within group (order by extract(epoch from j.finished_at - j.started_at) * 1000) as run_ms_p95
      from jobs j
      where j.finished_at >= ${span.from}::timestamptz
      group by 1, 2
    ),
    grid as (
      select m.minute, k.kind
      from generate_series(${span.from}::timestamptz, ${span.to}::timestamptz, interval '1 minute') as m(minute),
           (select kind from moves union select kind from done) as k
    ),
    moved as (select kind, minute, sum(delta) as delta from moves group by 1, 2),
    depth as (
      select g.minute, g.kind, sum(coalesce(moved.delta, 0)) over (partition by g.kind order by g.minute)::int as queued
      from grid g left join moved on moved.kind = g.kind and moved.minute = g.minute
    )
    select d.minute, d.kind, coalesce(done.succeeded, 0) as succeeded, coalesce(done.failed, 0) as failed,
           coalesce(done.canceled, 0) as canceled, d.queued,
           done.wait_ms_p50, done.wait_ms_p95, done.run_ms_p50, done.run_ms_p95
    from depth d left join done on done.minute = d.minute and done.kind = d.kind
    where d.queued > 0 or done.kind is not null
    order by d.minute, d.kind`);
  return { ...span, items: [...items] };
}
