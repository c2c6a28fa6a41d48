// What the search index holds: per site (stats) and for the whole service
// (health: sizes, what has not been indexed, which extensions are there).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { timestamp } from '../timestamp.ts';
import type { SearchIndexes } from './memory/indexes.ts';
import { searchKinds } from './kinds.ts';

export const searchStatsSchema = z
  .object({
    documents: z.number().int(),
    per_kind_and_locale: z.array(
      z.object({ kind: z.enum(searchKinds), locale: z.string(), documents: z.number().int() }),
    ),
    words: z.number().int().describe('Distinct words suggestions and typo correction draw on'),
    index_bytes: z.number().int().describe('Stored size of the site’s documents (vectors and snippet text)'),
    last_reindex: z
      .object({ job_id: z.uuid().nullable(), documents: z.number().int(), finished_at: timestamp })
      .nullable(),
    held_in_memory: z
      .object({
        documents: z.number().int(),
        bytes: z.number().int().describe('About what the copy takes in the process’s memory'),
        loaded_at: timestamp,
      })
      .nullable()
      .describe(
        'What the API process that answered holds of the site in memory, where its searches are made; null when they are ' +
          'made in PostgreSQL (a site under SEARCH_MEMORY_MIN_DOCUMENTS documents, not searched yet, or past SEARCH_MEMORY_MB)',
      ),
  })
  .meta({ id: 'SearchStats' });

export async function searchStats(db: CommonQueryMethods, indexes: SearchIndexes, siteId: string) {
  const stored = await db.one(sql.type(searchStatsSchema.omit({ held_in_memory: true }))`
    select
      (select count(*)::int from search_documents where site_id = ${siteId}) as documents,
      coalesce((select jsonb_agg(r order by r.kind, r.locale) from (
        select kind, locale, count(*)::int as documents from search_documents where site_id = ${siteId} group by 1, 2) r), '[]')
        as per_kind_and_locale,
      (select count(distinct term)::int from search_terms where site_id = ${siteId}) as words,
      (select coalesce(sum(pg_column_size(d.*)), 0)::bigint from search_documents d where d.site_id = ${siteId}) as index_bytes,
      (select jsonb_build_object('job_id', job_id, 'documents', documents,
                                 'finished_at', to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       from search_reindexes where site_id = ${siteId}) as last_reindex`);
  return { ...stored, held_in_memory: indexes.state(siteId) };
}

export const searchHealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']).describe('degraded while something published is not in the index'),
    documents: z.number().int(),
    words: z.number().int(),
    logged_queries: z.number().int(),
    table_bytes: z.number().int().describe('The documents and words tables with their indexes'),
    unindexed: z.number().int().describe('Published items (ready media) missing from the index, all sites'),
    oldest_unindexed_change: timestamp.nullable().describe('When the longest-waiting of those last changed'),
    extensions: z.object({
      pg_trgm: z.string().nullable().describe('Installed version; typo tolerance and suggestions need it'),
      btree_gin: z.string().nullable(),
    }),
    text_search_configurations: z
      .array(z.string())
      .describe('Languages with a stemmer; others are indexed as `simple`'),
  })
  .meta({ id: 'SearchHealth' });

// The sources that should have a document (search_sources in 0023) without one.
const unindexed = sql.fragment`
  select p.updated_at from posts p where p.status = 'published'
    and not exists (select 1 from search_documents d where d.kind = 'post' and d.item_id = p.id)
  union all
  select g.updated_at from pages g where g.status = 'published'
    and not exists (select 1 from search_documents d where d.kind = 'page' and d.item_id = g.id)
  union all
  select e.updated_at from content_elements e where e.status = 'published'
    and not exists (select 1 from search_documents d where d.kind = 'element' and d.item_id = e.id)
  union all
  select m.updated_at from media_items m where m.status = 'ready'
    and not exists (select 1 from search_documents d where d.kind = 'media' and d.item_id = m.id)`;

export async function searchHealth(db: CommonQueryMethods) {
  return db.one(sql.type(searchHealthSchema)`
    with missing as (select count(*)::int as n, min(updated_at) as oldest from (${unindexed}) u)
    select case when missing.n = 0 then 'ok' else 'degraded' end as status,
      (select count(*)::int from search_documents) as documents,
      (select count(*)::int from search_terms) as words,
      (select count(*)::int from search_queries) as logged_queries,
      (pg_total_relation_size('search_documents') + pg_total_relation_size('search_terms'))::bigint as table_bytes,
      missing.n as unindexed, missing.oldest as oldest_unindexed_change,
      jsonb_build_object(
        'pg_trgm', (select extversion from pg_extension where extname = 'pg_trgm'),
        'btree_gin', (select extversion from pg_extension where extname = 'btree_gin')) as extensions,
      array(select cfgname::text from pg_ts_config order by 1) as text_search_configurations
    from missing`);
}
