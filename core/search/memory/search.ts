// A search of a site's copy held in memory, answering what PostgreSQL's
// search_candidates and search_page answer (../query.ts): the query read as
// websearch_to_tsquery reads it, matched, counted and ranked here, and only
// the page's texts read from the database (kept for the next searches).
import { z } from 'zod';
import { prepared, sql, type CommonQueryMethods } from '../../../db/pool.ts';
import { timestamp } from '../../timestamp.ts';
import type { Found } from '../found.ts';
import { searchKinds, type SearchKind } from '../kinds.ts';
import { tsQuery } from '../ts-query.ts';
import type { SearchIndexes } from './indexes.ts';
import type { After } from './page.ts';
import { queryTree } from './query-tree.ts';
import type { SiteCopy } from './site-copy.ts';
import { documentKey } from './site-index.ts';
import { shownLexemes } from './tsquery.ts';

/** What is searched: the query as typed, where, which page, and how many candidates are ranked. */
export type Asked = {
  locales: string[];
  /** Only items in this locale; every locale of the site otherwise. */
  locale: string | undefined;
  kinds: SearchKind[];
  limit: number;
  text: string;
  /** The moment the ranking's recency is reckoned from. */
  at: string;
  after: After | undefined;
  candidates: number;
};

const textRow = z.object({
  kind: z.enum(searchKinds),
  item_id: z.uuid(),
  locale: z.string(),
  title: z.string(),
  path: z.string().nullable(),
  published_at: timestamp.nullable(),
  version: z.number(),
  text: z.string(),
});

/**
 * A search of the site's copy held in memory (./indexes.ts), when
 * it can evaluate the query (not a phrase): matched, counted and ranked
 * there, then the page's texts read by primary key. Undefined otherwise.
 */
export async function searchInMemory(
  db: CommonQueryMethods,
  indexes: SearchIndexes,
  index: SiteCopy,
  asked: Asked,
): Promise<Found | undefined> {
  const { locales, kinds, text, at, after, limit } = asked;
  const atMs = Date.parse(at);
  if (Number.isNaN(atMs)) return undefined;
  const tree = await queryTree(db, indexes, index, locales, text, () =>
    db.oneFirst(sql.type(z.object({ q: z.string() }))`select (${tsQuery(locales, text)})::text as q`),
  );
  if (tree === undefined) return undefined;
  if (tree === null) return { facets: {}, exact: true, stems: [], hits: [], more: false };
  // Ranked in the search thread; a copy it no longer holds (dropped meanwhile, or the thread lost) is searched in PostgreSQL.
  const page = await index
    .rank(
      tree,
      { locale: asked.locale, kinds },
      { newest: asked.candidates, atMicros: atMs * 1000, after, pageSize: limit + 1 },
    )
    .catch(() => undefined);
  if (!page) return undefined;
  const { facets, hits } = page;
  const shown = hits.slice(0, limit);
  // Texts kept from earlier searches where they are of the version held; the rest read by primary key.
  const kept = shown.map((hit) => index.text(hit.doc));
  const missing = shown.filter((_, n) => !kept[n]);
  const missingKinds = sql.array(
    missing.map((hit) => hit.doc.kind),
    'text',
  );
  const missingIds = sql.array(
    missing.map((hit) => hit.doc.itemId),
    'uuid',
  );
  const rows = missing.length
    ? await db.any(
        prepared(sql.type(textRow)`
          select d.kind, d.item_id, d.locale, d.title, d.path, d.published_at, d.changed::text::int8 as version,
                 left(btrim(d.summary || ' ' || d.body), 20000) as text
          from search_documents d join unnest(${missingKinds}, ${missingIds}) as f (kind, item_id)
            on d.kind = f.kind and d.item_id = f.item_id`),
      )
    : [];
  const read = new Map(rows.map(({ kind, item_id, ...text }) => [documentKey(kind, item_id), text]));
  // A hit whose row is gone since (the copy not yet caught up with its removal) is left out.
  const texts = shown.flatMap(({ doc, score }, n) => {
    let text = kept[n];
    if (!text) {
      text = read.get(documentKey(doc.kind, doc.itemId));
      if (!text) return [];
      index.keepText(doc, text);
    }
    const { locale, title, path, published_at } = text;
    return [{ kind: doc.kind, id: doc.itemId, locale, title, path, score, published_at, text: text.text }];
  });
  return {
    facets,
    exact: true,
    stems: [...shownLexemes(tree)],
    hits: texts,
    more: hits.length > limit,
  };
}
