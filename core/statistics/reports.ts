// What the counted requests and views, and the site's own tables, say about a
// site over a period. Percentiles come from the merged histograms.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { mergeBuckets, percentile } from './histogram.ts';
import { periodSchema, timeZoneOf, type Period } from './period.ts';

const latencySchema = z.object({
  p50_ms: z.number().nullable(),
  p95_ms: z.number().nullable(),
  p99_ms: z.number().nullable(),
});

const latencyOf = (buckets: number[]) => ({
  p50_ms: percentile(buckets, 0.5),
  p95_ms: percentile(buckets, 0.95),
  p99_ms: percentile(buckets, 0.99),
});

const routeRow = z.object({
  route: z.string(),
  status_class: z.number(),
  count: z.number(),
  duration_ms: z.number(),
  buckets: z.array(z.number()),
});

/** Counted requests in the period, per route and status class, histograms merged: of these sites, or (null) of all. */
async function requestRows(
  db: CommonQueryMethods,
  siteIds: readonly string[] | null,
  period: { from: string; to: string },
) {
  const ofSites = (alias: string) =>
    siteIds
      ? sql.fragment`${sql.identifier([alias, 'site_id'])} = any(${sql.array([...siteIds], 'uuid')})`
      : sql.fragment`true`;
  return db.any(sql.type(routeRow)`
    select route, status_class, sum(count)::int8 as count, sum(duration_ms)::float8 as duration_ms,
      array(select sum(b)::int8 from request_stats r2, unnest(r2.buckets) with ordinality as u(b, i)
            where r2.route = r.route and r2.status_class = r.status_class and ${ofSites('r2')}
              and r2.minute >= ${period.from} and r2.minute < ${period.to}
            group by i order by i) as buckets
    from request_stats r
    where ${ofSites('r')} and minute >= ${period.from} and minute < ${period.to}
    group by route, status_class`);
}

export const endpointMetricSchema = z
  .object({
    route: z.string().describe('The manifest key'),
    count: z.number().int(),
    errors_4xx: z.number().int(),
    errors_5xx: z.number().int(),
    error_rate: z.number().describe('Share of 5xx answers'),
    avg_ms: z.number(),
    ...latencySchema.shape,
  })
  .meta({ id: 'EndpointMetric' });

/** Per route over the period, busiest first: of the site, or (null) of every site and of requests without one. */
export async function endpointMetrics(db: CommonQueryMethods, site: Site | null, period: { from: string; to: string }) {
  const byRoute = new Map<string, { count: number; e4: number; e5: number; duration: number; buckets: number[] }>();
  for (const row of await requestRows(db, site ? [site.id] : null, period)) {
    const entry = byRoute.get(row.route) ?? { count: 0, e4: 0, e5: 0, duration: 0, buckets: [] };
    entry.count += row.count;
    entry.duration += row.duration_ms;
    if (row.status_class === 4) entry.e4 += row.count;
    if (row.status_class === 5) entry.e5 += row.count;
    mergeBuckets(entry.buckets, row.buckets);
    byRoute.set(row.route, entry);
  }
  return [...byRoute.entries()]
    .map(([route, entry]) => ({
      route,
      count: entry.count,
      errors_4xx: entry.e4,
      errors_5xx: entry.e5,
      error_rate: entry.count ? Math.round((entry.e5 / entry.count) * 10_000) / 10_000 : 0,
      avg_ms: entry.count ? Math.round((entry.duration / entry.count) * 100) / 100 : 0,
      ...latencyOf(entry.buckets),
    }))
    .sort((a, b) => b.count - a.count || a.route.localeCompare(b.route));
}

const activityRow = z.object({
  site_id: z.uuid(),
  requests: z.number(),
  errors_4xx: z.number(),
  errors_5xx: z.number(),
  public_views: z.number(),
  jobs: z.number(),
  credits_spent: z.number(),
});

/** Requests, views, jobs and credits spent per site over the period. */
function activity(db: CommonQueryMethods, siteIds: readonly string[], period: { from: string; to: string }) {
  const sites = sql.array([...siteIds], 'uuid');
  return db.any(sql.type(activityRow)`
    select s.id as site_id,
      coalesce((select sum(count) from request_stats where site_id = s.id and minute >= ${period.from} and minute < ${period.to}), 0)::int8 as requests,
      coalesce((select sum(count) from request_stats where site_id = s.id and status_class = 4 and minute >= ${period.from} and minute < ${period.to}), 0)::int8 as errors_4xx,
      coalesce((select sum(count) from request_stats where site_id = s.id and status_class = 5 and minute >= ${period.from} and minute < ${period.to}), 0)::int8 as errors_5xx,
      coalesce((select sum(views) from view_stats where site_id = s.id
                and day >= (${period.from}::timestamptz)::date and day < (${period.to}::timestamptz)::date + 1), 0)::int8 as public_views,
      (select count(*) from jobs where site_id = s.id and created_at >= ${period.from} and created_at < ${period.to})::int8 as jobs,
      coalesce((select -sum(amount) from credit_entries where site_id = s.id and kind = 'debit'
                and created_at >= ${period.from} and created_at < ${period.to}), 0)::int8 as credits_spent
    from sites s where s.id = any(${sites})`);
}

const contentRow = z.object({
  site_id: z.uuid(),
  pages: z.number(),
  published_pages: z.number(),
  elements: z.number(),
  published_elements: z.number(),
  content_types: z.number(),
  media_items: z.number(),
  media_bytes: z.number(),
});

function contentCounts(db: CommonQueryMethods, siteIds: readonly string[]) {
  return db.any(sql.type(contentRow)`
    select s.id as site_id,
      (select count(*) from pages where site_id = s.id)::int8 as pages,
      (select count(*) from pages where site_id = s.id and status = 'published')::int8 as published_pages,
      (select count(*) from content_elements where site_id = s.id)::int8 as elements,
      (select count(*) from content_elements where site_id = s.id and status = 'published')::int8 as published_elements,
      (select count(*) from content_types where site_id = s.id)::int8 as content_types,
      (select count(*) from media_items where site_id = s.id)::int8 as media_items,
      coalesce((select sum(size_bytes) from media_items where site_id = s.id), 0)::int8 as media_bytes
    from sites s where s.id = any(${sql.array([...siteIds], 'uuid')})`);
}

const contentSchema = contentRow.omit({ site_id: true });
const activitySchema = activityRow.omit({ site_id: true });

export const siteOverviewSchema = z
  .object({
    site_id: z.uuid(),
    period: periodSchema,
    content: contentSchema,
    requests: z.object({
      total: z.number().int(),
      errors_4xx: z.number().int(),
      errors_5xx: z.number().int(),
      ...latencySchema.shape,
    }),
    public_views: z.object({
      total: z.number().int(),
      by_kind: z.record(z.string(), z.number().int()),
    }),
    top_pages: z.array(z.object({ page_id: z.uuid(), title: z.string(), path: z.string(), views: z.number().int() })),
    search: z.object({ requests: z.number().int().describe('Requests to the search routes') }),
    jobs: z.object({ total: z.number().int(), by_status: z.record(z.string(), z.number().int()) }),
    credits_spent: z.number().int(),
  })
  .meta({ id: 'SiteStatisticsOverview' });

export async function siteOverview(db: CommonQueryMethods, site: Site, period: Period) {
  const [{ site_id: _content, ...content }] = (await contentCounts(db, [site.id])) as [z.infer<typeof contentRow>];
  const [counted] = await activity(db, [site.id], period);
  const rows = await requestRows(db, [site.id], period);
  const buckets = rows.reduce((merged, row) => mergeBuckets(merged, row.buckets), [] as number[]);
  const views = await db.any(sql.type(z.object({ kind: z.string(), views: z.number() }))`
    select kind, sum(views)::int8 as views from view_stats
    where site_id = ${site.id} and day >= (${period.from}::timestamptz)::date and day < (${period.to}::timestamptz)::date + 1
    group by kind`);
  const topPages = await db.any(sql.type(siteOverviewSchema.shape.top_pages.element)`
    select v.item_id as page_id, p.title, p.path, sum(v.views)::int8 as views
    from view_stats v join pages p on p.id = v.item_id
    where v.site_id = ${site.id} and v.kind = 'page'
      and v.day >= (${period.from}::timestamptz)::date and v.day < (${period.to}::timestamptz)::date + 1
    group by v.item_id, p.title, p.path order by views desc, p.path limit 10`);
  const jobs = await db.any(sql.type(z.object({ status: z.string(), count: z.number() }))`
    select status, count(*)::int8 as count from jobs
    where site_id = ${site.id} and created_at >= ${period.from} and created_at < ${period.to} group by status`);
  return {
    site_id: site.id,
    period,
    content,
    requests: {
      total: counted!.requests,
      errors_4xx: counted!.errors_4xx,
      errors_5xx: counted!.errors_5xx,
      ...latencyOf(buckets),
    },
    public_views: {
      total: views.reduce((sum, row) => sum + row.views, 0),
      by_kind: Object.fromEntries(views.map((row) => [row.kind, row.views])),
    },
    top_pages: [...topPages],
    search: { requests: rows.filter((row) => row.route.includes('/search')).reduce((sum, row) => sum + row.count, 0) },
    jobs: {
      total: jobs.reduce((sum, row) => sum + row.count, 0),
      by_status: Object.fromEntries(jobs.map((row) => [row.status, row.count])),
    },
    credits_spent: counted!.credits_spent,
  };
}

export const monthlySchema = z
  .object({
    site_id: z.uuid(),
    time_zone: z.string(),
    months: z.array(z.object({ month: z.string().describe('YYYY-MM'), ...activitySchema.shape })),
  })
  .meta({ id: 'SiteStatisticsMonthly' });

/** The last 12 calendar months (the site's time zone), oldest first, the current one included. */
export async function monthly(db: CommonQueryMethods, site: Site) {
  const zone = timeZoneOf(site);
  const months = await db.any(sql.type(z.object({ month: z.string(), from: timestamp, to: timestamp }))`
    select to_char(m, 'YYYY-MM') as month, m at time zone ${zone} as from, (m + interval '1 month') at time zone ${zone} as to
    from generate_series(date_trunc('month', now() at time zone ${zone}) - interval '11 months',
                         date_trunc('month', now() at time zone ${zone}), interval '1 month') as m`);
  const result = [];
  for (const month of months) {
    const [{ site_id: _site, ...figures }] = (await activity(db, [site.id], month)) as [z.infer<typeof activityRow>];
    result.push({ month: month.month, ...figures });
  }
  return { site_id: site.id, time_zone: zone, months: result };
}

export const siteBreakdownSchema = z
  .object({
    period: periodSchema,
    sites: z.array(
      z.object({
        site_id: z.uuid(),
        tenant_id: z.uuid(),
        slug: z.string(),
        name: z.string(),
        content: contentSchema,
        ...activitySchema.shape,
      }),
    ),
  })
  .meta({ id: 'SiteStatisticsBreakdown' });

/** The same figures for each site of the tenant (global admins: every site), busiest first. */
export async function siteBreakdown(db: CommonQueryMethods, site: Site, everySite: boolean, period: Period) {
  const sites = await db.any(sql.type(
    z.object({ id: z.uuid(), tenant_id: z.uuid(), slug: z.string(), name: z.string() }),
  )`
    select id, tenant_id, slug, name from sites
    where ${everySite ? sql.fragment`true` : sql.fragment`tenant_id = ${site.tenant_id}`} order by created_at, id limit 500`);
  const ids = sites.map((row) => row.id);
  const content = new Map((await contentCounts(db, ids)).map((row) => [row.site_id, row]));
  const counted = new Map((await activity(db, ids, period)).map((row) => [row.site_id, row]));
  return {
    period,
    sites: sites
      .map((row) => {
        const { site_id: _content, ...figures } = content.get(row.id)!;
        const { site_id: _activity, ...busy } = counted.get(row.id)!;
        return { site_id: row.id, tenant_id: row.tenant_id, slug: row.slug, name: row.name, content: figures, ...busy };
      })
      .sort((a, b) => b.requests - a.requests || a.slug.localeCompare(b.slug)),
  };
}
