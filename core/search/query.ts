// Public site search: the query read as a web search (quotes, OR, -word) in
// the text search configuration of every locale asked, ranked by cover
// density with a boost for recent items, a highlighted snippet per hit,
// counts per kind, cursor pages. A query that finds nothing is tried once
// more with its misspelt words corrected (./correct.ts).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { siteLocales } from '../content/locales.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { correctQuery } from './correct.ts';

export const searchKinds = ['post', 'page', 'element', 'media'] as const;
export type SearchKind = (typeof searchKinds)[number];

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(200).describe('What to look for: words, "a phrase", `or`, `-word`'),
  kind: z
    .string()
    .max(100)
    .optional()
    .transform((value, context) => {
      if (value === undefined) return undefined;
      const kinds = value.split(',').map((kind) => kind.trim());
      const unknown = kinds.filter((kind) => !(searchKinds as readonly string[]).includes(kind));
      if (unknown.length) {
        context.addIssue({
          code: 'custom',
          message: `unknown kind ${unknown.join(', ')}; one of ${searchKinds.join(', ')}`,
        });
        return z.NEVER;
      }
      return kinds as SearchKind[];
    })
    .describe('Only these kinds, comma-separated: post, page, element, media'),
  locale: z.string().max(35).optional().describe('Only items in this locale; every locale of the site otherwise'),
  limit: z.coerce.number().int().min(1).max(50).default(10),
  cursor: z.string().max(500).optional(),
});
export type SearchQuery = z.output<typeof searchQuery>;

export const searchHitSchema = z
  .object({
    kind: z.enum(searchKinds),
    id: z.uuid(),
    locale: z.string(),
    title: z.string(),
    path: z.string().nullable().describe('A post’s slug or a page’s path, for building its URL; null otherwise'),
    snippet: z
      .string()
      .describe('Text around the words found, HTML-escaped, the words themselves in `<mark>`: safe to insert as HTML'),
    score: z.number().describe('Relevance, recent items boosted; only comparable within one search'),
    published_at: timestamp.nullable(),
  })
  .meta({ id: 'SearchHit' });

export const searchResultSchema = z
  .object({
    items: z.array(searchHitSchema),
    total: z.number().int().describe('Hits of the kinds asked'),
    facets: z.record(z.enum(searchKinds), z.number().int()).describe('Hits per kind, whatever `kind` asked'),
    corrected_query: z
      .string()
      .nullable()
      .describe(
        'When the query as written found nothing: the query with misspelt words replaced, whose hits these are',
      ),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'SearchResult' });
export type SearchResult = z.infer<typeof searchResultSchema>;

// Recency: a hit published now counts 1.5 times one published long ago; half
// that boost is gone at 90 days. Measured from the first page's time, so a
// cursor's order does not drift while a reader pages.
const recencyBoost = 0.5;
const recencyDays = 90;

/** Where the next page starts, the clock the ranking was made with and the query run (corrected or not). */
const position = z.tuple([
  z.iso.datetime({ offset: true }),
  z.number(),
  z.enum(searchKinds),
  z.uuid(),
  z.string().max(200),
]);
type Position = z.infer<typeof position>;

function decodeCursor(cursor: string): Position {
  try {
    return position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  }
}

const hitRow = searchHitSchema.extend({
  facets: z.record(z.string(), z.number()).nullable(),
  kind: z.enum(searchKinds).nullable(),
  id: z.uuid().nullable(),
  locale: z.string().nullable(),
  title: z.string().nullable(),
  snippet: z.string().nullable(),
  score: z.number().nullable(),
});

/** The query in the configuration of each locale, OR-ed: a German item is found by German stems. */
function tsQuery(locales: string[], text: string) {
  return sql.join(
    locales.map((locale) => sql.fragment`websearch_to_tsquery(search_config(${locale}), ${text})`),
    sql.fragment` || `,
  );
}

async function run(db: CommonQueryMethods, site: Site, query: SearchQuery, text: string, at: string, after?: Position) {
  const locales = query.locale ? [query.locale] : siteLocales(site);
  const kinds = query.kind ?? [...searchKinds];
  const rows = await db.any(sql.type(hitRow)`
    with q as (select ${tsQuery(locales, text)} as query),
    matches as materialized (
      select d.kind, d.item_id, d.locale, d.title, d.path, d.summary, d.body, d.published_at,
             (ts_rank_cd(d.document, q.query, 32) * (1 + ${recencyBoost}::float8 / (1 + greatest(0,
               extract(epoch from ${at}::timestamptz - coalesce(d.published_at, ${at}::timestamptz))) / ${recencyDays * 86400}::float8)))::float8 as score
      from search_documents d, q
      where d.site_id = ${site.id} and d.document @@ q.query
        ${query.locale ? sql.fragment`and d.locale = ${query.locale}` : sql.fragment``}
    ),
    counted as (select coalesce(jsonb_object_agg(kind, n), '{}') as facets from (select kind, count(*) as n from matches group by kind) f),
    page as (
      select * from matches
      where kind = any (${sql.array(kinds, 'text')})
        ${after ? sql.fragment`and (score, kind, item_id) < (${after[1]}::float8, ${after[2]}, ${after[3]}::uuid)` : sql.fragment``}
      order by score desc, kind desc, item_id desc
      limit ${query.limit + 1}
    )
    select p.kind, p.item_id as id, p.locale, p.title, p.path, p.published_at, p.score, c.facets,
           ts_headline(search_config(p.locale),
             replace(replace(replace(left(btrim(p.summary || ' ' || p.body), 20000), '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
             q.query, 'MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", StartSel=<mark>, StopSel=</mark>') as snippet
    from counted c cross join q left join page p on true
    order by p.score desc, p.kind desc, p.item_id desc`);
  const facets = Object.fromEntries(searchKinds.map((kind) => [kind, Number(rows[0]?.facets?.[kind] ?? 0)])) as Record<
    SearchKind,
    number
  >;
  const hits = rows.filter((row) => row.id !== null) as z.infer<typeof searchHitSchema>[];
  const items = hits.slice(0, query.limit);
  const last = items.at(-1);
  return {
    items,
    facets,
    total: kinds.reduce((sum, kind) => sum + facets[kind], 0),
    next_cursor:
      hits.length > query.limit && last
        ? Buffer.from(JSON.stringify([at, last.score, last.kind, last.id, text])).toString('base64url')
        : null,
  };
}

/** One page of a search of the site's published items. */
export async function searchSite(db: CommonQueryMethods, site: Site, query: SearchQuery): Promise<SearchResult> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (after) {
    const text = after[4];
    return { ...(await run(db, site, query, text, after[0], after)), corrected_query: text === query.q ? null : text };
  }
  const at = new Date().toISOString();
  const found = await run(db, site, query, query.q, at);
  if (found.total > 0) return { ...found, corrected_query: null };
  const corrected = await correctQuery(db, site.id, query.q, query.locale);
  if (!corrected) return { ...found, corrected_query: null };
  return { ...(await run(db, site, query, corrected, at)), corrected_query: corrected };
}
