// What may be wrong with a site, each check with a status and the count
// behind it; and the statistics pipeline's own health (the last writes of
// the API processes' counters, how far behind they are).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import type { StatisticsRecorder } from './recorder.ts';

const checkSchema = z.object({
  check: z.enum([
    'published_pages',
    'missing_translations',
    'failed_jobs_24h',
    'media_stuck_processing',
    'search_index',
    'statistics_flush',
  ]),
  status: z.enum(['ok', 'warning', 'problem', 'unavailable']),
  count: z.number().int().nullable(),
  detail: z.string(),
});

export const diagnosticSchema = z
  .object({ site_id: z.uuid(), checked_at: timestamp, checks: z.array(checkSchema) })
  .meta({ id: 'SiteDiagnostic' });

const figures = z.object({
  published_pages: z.number(),
  missing_translations: z.number(),
  failed_jobs: z.number(),
  stuck_media: z.number(),
  last_flush: timestamp.nullable(),
  checked_at: timestamp,
});

export async function diagnose(db: CommonQueryMethods, site: Site, flushSeconds: number) {
  const others = site.locales.filter((locale) => locale !== site.default_locale);
  const found = await db.one(sql.type(figures)`
    select
      (select count(*) from pages where site_id = ${site.id} and status = 'published')::int8 as published_pages,
      -- Published masters without a published translation, counted once per locale of the site they lack.
      (select count(*) from content_elements m, unnest(${sql.array(others, 'text')}) as wanted(locale)
        where m.site_id = ${site.id} and m.master_id is null and m.status = 'published'
          and exists (select 1 from content_types t where t.id = m.type_id
                      and jsonb_path_exists(t.fields, '$[*] ? (@.localized == true)'))
          and not exists (select 1 from content_elements tr where tr.master_id = m.id and tr.locale = wanted.locale
                          and tr.status = 'published'))::int8 as missing_translations,
      (select count(*) from jobs where site_id = ${site.id} and status = 'failed'
        and finished_at > now() - interval '24 hours')::int8 as failed_jobs,
      (select count(*) from media_items where site_id = ${site.id} and status = 'processing'
        and updated_at < now() - interval '15 minutes')::int8 as stuck_media,
      (select max(flushed_at) from stats_flushes) as last_flush,
      now() as checked_at`);
  const flushAge = found.last_flush ? (Date.parse(found.checked_at) - Date.parse(found.last_flush)) / 1000 : null;
  const checks: z.infer<typeof checkSchema>[] = [
    {
      check: 'published_pages',
      status: found.published_pages > 0 ? 'ok' : 'problem',
      count: found.published_pages,
      detail:
        found.published_pages > 0 ? 'Pages are published.' : 'No page is published: public delivery shows nothing.',
    },
    {
      check: 'missing_translations',
      status: found.missing_translations > 0 ? 'warning' : 'ok',
      count: found.missing_translations,
      detail:
        others.length === 0
          ? 'The site has one locale.'
          : `Published elements with localized fields lacking a published translation, per locale of ${others.join(', ')}.`,
    },
    {
      check: 'failed_jobs_24h',
      status: found.failed_jobs > 0 ? 'warning' : 'ok',
      count: found.failed_jobs,
      detail: 'Jobs of the site that failed in the last 24 hours.',
    },
    {
      check: 'media_stuck_processing',
      status: found.stuck_media > 0 ? 'problem' : 'ok',
      count: found.stuck_media,
      detail: 'Media items still processing after 15 minutes.',
    },
    {
      check: 'search_index',
      status: 'unavailable',
      count: null,
      detail: 'Search is not built yet: there is no index to be stale.',
    },
    {
      check: 'statistics_flush',
      status: flushAge === null ? 'warning' : flushAge > 3 * flushSeconds ? 'warning' : 'ok',
      count: null,
      detail:
        flushAge === null
          ? 'No API process has written its counters yet.'
          : `The counters were last written ${Math.round(flushAge)} s ago (every ${flushSeconds} s expected).`,
    },
  ];
  return { site_id: site.id, checked_at: found.checked_at, checks };
}

export const statisticsHealthSchema = z
  .object({
    status: z.enum(['ok', 'lagging', 'no_data']),
    last_flush_at: timestamp.nullable(),
    lag_seconds: z.number().nullable().describe('Since the most recent write of any process'),
    flush_interval_seconds: z.number().int(),
    processes: z.array(
      z.object({ process: z.string(), flushed_at: timestamp, requests: z.number().int(), views: z.number().int() }),
    ),
    pending: z
      .object({ requests: z.number().int(), views: z.number().int() })
      .describe('Counted by this process, not yet written'),
  })
  .meta({ id: 'StatisticsHealth' });

export async function statisticsHealth(db: CommonQueryMethods, recorder: StatisticsRecorder, flushSeconds: number) {
  const processes = await db.any(sql.type(statisticsHealthSchema.shape.processes.element)`
    select process, flushed_at, requests, views from stats_flushes
    where flushed_at > now() - interval '1 hour' order by flushed_at desc limit 50`);
  const { last, lag } = await db.one(sql.type(z.object({ last: timestamp.nullable(), lag: z.number().nullable() }))`
    select max(flushed_at) as last, extract(epoch from now() - max(flushed_at))::float8 as lag from stats_flushes`);
  return {
    status: lag === null ? ('no_data' as const) : lag > 3 * flushSeconds ? ('lagging' as const) : ('ok' as const),
    last_flush_at: last,
    lag_seconds: lag === null ? null : Math.round(lag * 10) / 10,
    flush_interval_seconds: flushSeconds,
    processes: [...processes],
    pending: recorder.pending(),
  };
}
