// What readers search for. Each public search (its first page) is kept with
// its locale and hit count, and nothing about who asked: no address, no
// token, no session (counted in memory and written within a minute by
// core/statistics/recorder.ts). Analytics read those rows back per site.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { StatisticsRecorder } from '../statistics/recorder.ts';
import type { Site } from '../tenancy/sites.ts';
import type { SearchIndexes } from './memory/indexes.ts';
import { searchSite, type SearchQuery, type SearchResult } from './query.ts';

/**
 * A reader's search of a public site done by an agent (the endpoint keeps its
 * answers, api/search/cache.ts), its first page counted for analytics.
 */
export async function searchLogged(
  db: CommonQueryMethods,
  statistics: Pick<StatisticsRecorder, 'search'>,
  site: Site,
  query: SearchQuery,
  indexes?: SearchIndexes,
): Promise<SearchResult> {
  const result = await searchSite(db, site, query, indexes);
  if (!query.cursor) statistics.search(site.id, query.q, query.locale, result.total);
  return result;
}

export const analyticsQuery = z.object({
  days: z.coerce.number().int().min(1).max(365).default(30).describe('How many days back, today included'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Queries per list'),
});

const queryCount = z.object({
  query: z.string(),
  searches: z.number().int(),
  average_hits: z.number(),
});

export const analyticsSchema = z
  .object({
    since: z.iso.date(),
    searches: z.number().int(),
    searches_without_results: z.number().int(),
    top_queries: z.array(queryCount).describe('Most searched, most first'),
    queries_without_results: z.array(queryCount.omit({ average_hits: true })).describe('Searched and found nothing'),
    per_day: z.array(z.object({ day: z.iso.date(), searches: z.number().int(), without_results: z.number().int() })),
  })
  .meta({ id: 'SearchAnalytics' });

export async function searchAnalytics(
  db: CommonQueryMethods,
  siteId: string,
  { days, limit }: z.output<typeof analyticsQuery>,
) {
  // Whole UTC days: `days` = 1 is today.
  const since = sql.fragment`((now() at time zone 'UTC')::date - ${days - 1}::int)`;
  const window = sql.fragment`site_id = ${siteId} and created_at >= ${since}::timestamp at time zone 'UTC'`;
  return db.one(sql.type(analyticsSchema)`
    select to_char(${since}, 'YYYY-MM-DD') as since,
      (select count(*)::int from search_queries where ${window}) as searches,
      (select count(*)::int from search_queries where ${window} and hits = 0) as searches_without_results,
      coalesce((select jsonb_agg(r order by r.searches desc, r.query) from (
        select query, count(*)::int as searches, round(avg(hits), 1)::float8 as average_hits
        from search_queries where ${window} group by query order by count(*) desc, query limit ${limit}) r), '[]') as top_queries,
      coalesce((select jsonb_agg(r order by r.searches desc, r.query) from (
        select query, count(*)::int as searches
        from search_queries where ${window} and hits = 0 group by query order by count(*) desc, query limit ${limit}) r), '[]') as queries_without_results,
      coalesce((select jsonb_agg(r order by r.day) from (
        select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as searches,
               (count(*) filter (where hits = 0))::int as without_results
        from search_queries where ${window} group by 1) r), '[]') as per_day`);
}
