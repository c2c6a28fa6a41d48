// Public site search: the query read as a web search (quotes, OR, -word) in
// the text search configuration of every locale asked, ranked by cover
// density with a boost for recent items, a highlighted snippet per hit,
// counts per kind, cursor pages. A query that finds nothing is tried once
// more with its misspelt words corrected (./correct.ts).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { cursorTimestamp } from '../pagination.ts';
import { unstorableFields } from '../storable.ts';
import { siteLocales } from '../content/locales.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { correctQuery } from './correct.ts';
import type { Found } from './found.ts';
import { searchKinds, type SearchKind } from './kinds.ts';
import type { SearchIndexes } from './memory/indexes.ts';
import { searchInMemory } from './memory/search.ts';
import { snippet } from './snippet.ts';
import { tsQuery } from './ts-query.ts';

// Bounds on the work of one search (search_candidates in 0023): matches are
// counted exactly up to this many, and the hits ranked are the newest this
// many matches of the whole text and half as many of titles and summaries.
const exactUpTo = 1_000;
const candidates = 60;

export { searchKinds, type SearchKind } from './kinds.ts';

/** The kinds filter as the document gives it: names of searchKinds, comma-separated (spaces allowed around them). */
const kindList = `^\\s*(?:${searchKinds.join('|')})\\s*(?:,\\s*(?:${searchKinds.join('|')})\\s*)*$`;

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(200).describe('What to look for: words, "a phrase", `or`, `-word`'),
  kind: z
    .string()
    .max(100)
    .meta({ pattern: kindList })
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
export type SearchHit = z.infer<typeof searchHitSchema>;

export const searchResultSchema = z
  .object({
    items: z.array(searchHitSchema),
    total: z.number().int().describe('Hits of the kinds asked'),
    facets: z.record(z.enum(searchKinds), z.number().int()).describe('Hits per kind, whatever `kind` asked'),
    exact: z
      .boolean()
      .describe(
        `False when the query is expected to match more than ${exactUpTo.toLocaleString('en')} items of a site searched in PostgreSQL: ` +
          '`total` and `facets` are then estimates. A large site held in memory (SEARCH_MEMORY_MB) counts every match. ' +
          `Either way the hits ranked are the ${candidates} newest matches and the ${candidates / 2} newest matches of titles and summaries, so pages end there`,
      ),
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

/** Where the next page starts, the clock the ranking was made with and the query run (corrected or not). */
const position = z.tuple([
  // Values PostgreSQL takes: a forged cursor with the year 0000 or a NUL in its query was a 500.
  cursorTimestamp,
  z.number(),
  z.enum(searchKinds),
  z.uuid(),
  z
    .string()
    .max(200)
    .refine((text) => unstorableFields(text, 'cursor').length === 0),
]);
type Position = z.infer<typeof position>;

function decodeCursor(cursor: string): Position {
  try {
    return position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  }
}

/** The counts, repeated on each hit; one row without a hit (its columns null) when nothing was found. */
const pageRow = z.object({
  facets: z.record(z.string(), z.number()),
  exact: z.boolean(),
  stems: z.array(z.string()),
  kind: z.enum(searchKinds).nullable(),
  item_id: z.uuid().nullable(),
  locale: z.string().nullable(),
  title: z.string().nullable(),
  path: z.string().nullable(),
  published_at: timestamp.nullable(),
  score: z.number().nullable(),
  text: z.string().nullable(),
});

/**
 * The hits to rank and the counts (search_candidates), then a page of them
 * ranked (search_page), in one statement: see 0023 and 0029.
 */
async function inPostgres(
  db: CommonQueryMethods,
  site: Site,
  query: SearchQuery,
  text: string,
  at: string,
  after?: Position,
): Promise<Found> {
  const locales = query.locale ? [query.locale] : siteLocales(site);
  const kinds = query.kind ?? [...searchKinds];
  const rows = await db.any(sql.type(pageRow)`
    select c.facets, c.exact, c.stems, p.kind, p.item_id, p.locale, p.title, p.path, p.published_at, p.score, p.text
    from search_candidates(${site.id}, ${tsQuery(locales, text)}, ${query.locale ?? null}, ${sql.array(kinds, 'text')},
                           ${candidates}, ${exactUpTo}) c
    left join lateral search_page(${tsQuery(locales, text)}, coalesce(c.found_kinds, '{}'), coalesce(c.found_ids, '{}'), ${at},
                                  ${after?.[1] ?? null}, ${after?.[2] ?? null}, ${after?.[3] ?? null}, ${query.limit + 1}) p on true
    order by p.score desc, p.kind desc, p.item_id desc`);
  const found = rows[0]!;
  const hits = rows.flatMap((row) =>
    row.item_id
      ? [
          {
            kind: row.kind!,
            id: row.item_id,
            locale: row.locale!,
            title: row.title!,
            path: row.path,
            score: row.score!,
            published_at: row.published_at,
            text: row.text!,
          },
        ]
      : [],
  );
  return {
    facets: found.facets,
    exact: found.exact,
    stems: found.stems,
    hits: hits.slice(0, query.limit),
    more: hits.length > query.limit,
  };
}

async function run(
  db: CommonQueryMethods,
  indexes: SearchIndexes | undefined,
  site: Site,
  query: SearchQuery,
  text: string,
  at: string,
  after?: Position,
) {
  const index = await indexes?.current(site.id);
  const found =
    (index &&
      (await searchInMemory(db, indexes!, index, {
        locales: query.locale ? [query.locale] : siteLocales(site),
        locale: query.locale,
        kinds: query.kind ?? [...searchKinds],
        limit: query.limit,
        text,
        at,
        after: after && { score: after[1], kind: after[2], id: after[3] },
        candidates,
      }))) ??
    (await inPostgres(db, site, query, text, at, after));
  const kinds = query.kind ?? [...searchKinds];
  const facets = Object.fromEntries(searchKinds.map((kind) => [kind, Math.round(found.facets[kind] ?? 0)])) as Record<
    SearchKind,
    number
  >;
  const counts = { facets, total: kinds.reduce((sum, kind) => sum + facets[kind], 0), exact: found.exact };
  const items = found.hits.map(({ text: hitText, ...hit }) => ({
    ...hit,
    snippet: snippet(hitText, found.stems, text),
  }));
  const last = items.at(-1);
  return {
    ...counts,
    items,
    next_cursor:
      found.more && last
        ? Buffer.from(JSON.stringify([at, last.score, last.kind, last.id, text])).toString('base64url')
        : null,
  };
}

/** One page of a search of the site's published items. */
export async function searchSite(
  db: CommonQueryMethods,
  site: Site,
  query: SearchQuery,
  indexes?: SearchIndexes,
): Promise<SearchResult> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  if (after) {
    const text = after[4];
    return {
      ...(await run(db, indexes, site, query, text, after[0], after)),
      corrected_query: text === query.q ? null : text,
    };
  }
  const at = new Date().toISOString();
  const found = await run(db, indexes, site, query, query.q, at);
  if (found.total > 0) return { ...found, corrected_query: null };
  const corrected = await correctQuery(db, site.id, query.q, query.locale);
  if (!corrected) return { ...found, corrected_query: null };
  return { ...(await run(db, indexes, site, query, corrected, at)), corrected_query: corrected };
}
