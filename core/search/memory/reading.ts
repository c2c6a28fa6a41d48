// How a site's search documents are read for the copy held in memory
// (./indexes.ts): all of them, newest first, in one snapshot; or the rows
// written and the removals made since a snapshot, by the transactions it did
// not see (migration 0037).
import { z } from 'zod';
import { sql, type DatabasePool } from '../../../db/pool.ts';
import { searchKinds } from '../kinds.ts';
import type { SearchEngine } from './engine.ts';
import { SiteCopyBuilder, type SiteCopy } from './site-copy.ts';
import type { IndexedDocument } from './site-index.ts';

const documentRow = z.object({
  kind: z.enum(['post', 'page', 'element', 'media']),
  item_id: z.string(),
  locale: z.string(),
  published: z.number().nullable(),
  version: z.number(),
  vector: z.string(),
});
type DocumentRow = z.infer<typeof documentRow>;

/** Rows read from the loading cursor at a time (its fetch says so too): between two reads the process answers others. */
const loadBatch = 500;

/**
 * The site's most common words (search_terms) read as a query in each of its
 * locales, so that a search of them asks PostgreSQL nothing (./query-tree.ts):
 * about 150 bytes of heap each.
 */
const vocabularyWords = 50_000;
const wordRow = z.object({ locale: z.string(), term: z.string(), q: z.string() });

/** Locales' strings, one of each: every row read brings its own copy. */
const localeStrings = new Map<string, string>();

const docOf = (row: DocumentRow): IndexedDocument => {
  let locale = localeStrings.get(row.locale);
  if (locale === undefined) localeStrings.set(row.locale, (locale = row.locale));
  return {
    kind: searchKinds.find((kind) => kind === row.kind)!,
    itemId: row.item_id,
    locale,
    published: row.published ?? Infinity,
    version: row.version,
  };
};

// The columns read for a document; the publication time in microseconds, exactly.
const documentColumns = sql.fragment`
  d.kind, d.item_id, d.locale, (extract(epoch from d.published_at) * 1000000)::float8 as published,
  d.changed::text::int8 as version, d.document::text as vector`;

/**
 * The site's documents, newest first, read in one snapshot a batch at a time
 * and built into a copy by the search thread; and that snapshot.
 */
export async function readSite(
  db: DatabasePool,
  engine: SearchEngine,
  siteId: string,
): Promise<{ index: SiteCopy; snapshot: string }> {
  const builder = new SiteCopyBuilder(engine);
  const snapshot = await db
    .transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`set transaction isolation level repeatable read, read only`);
      const taken = await tx.oneFirst(sql.type(z.object({ s: z.string() }))`select pg_current_snapshot()::text as s`);
      await tx.query(sql.typeAlias('void')`
        declare search_load no scroll cursor for
        select ${documentColumns} from search_documents d where d.site_id = ${siteId}
        order by d.published_at desc nulls first, d.kind desc, d.item_id desc`);
      for (;;) {
        const rows = await tx.any(sql.unsafe`fetch 500 from search_load`);
        for (const row of rows as readonly DocumentRow[]) builder.add(docOf(row), row.vector);
        if (rows.length < loadBatch) break;
      }
      await tx.query(sql.typeAlias('void')`
        declare search_words no scroll cursor for
        select l.locale, t.term, websearch_to_tsquery(search_config(l.locale), t.term)::text as q
        from (select term from search_terms where site_id = ${siteId} and term ~ '^[[:alpha:]]+$'
              group by term order by max(documents) desc limit ${vocabularyWords}) t
        cross join (select distinct locale from search_terms where site_id = ${siteId}) l`);
      for (;;) {
        const rows = await tx.any(sql.type(wordRow)`fetch 5000 from search_words`);
        for (const { locale, term, q } of rows) builder.addWord(locale, term, q);
        if (rows.length < 5000) break;
      }
      return taken;
    })
    .catch((error: unknown) => {
      builder.abandon();
      throw error;
    });
  return { index: await builder.finish(), snapshot };
}

export type Changes = {
  /** The snapshot they were read in: the next catch-up's starting point. */
  snapshot: string;
  written: { doc: IndexedDocument; vector: string }[];
  removed: { kind: string; itemId: string }[];
};

/** What transactions unseen by `since` wrote and removed in the site; undefined past `most` of either. */
export async function readChanges(
  db: DatabasePool,
  siteId: string,
  since: string,
  most: number,
): Promise<Changes | undefined> {
  const unseen = (column: ReturnType<typeof sql.identifier>) =>
    sql.fragment`${column} >= pg_snapshot_xmin(${since}::pg_snapshot) and not pg_visible_in_snapshot(${column}, ${since}::pg_snapshot)`;
  const found = await db.one(sql.type(
    z.object({
      snapshot: z.string(),
      written: z.array(documentRow),
      removed: z.array(z.object({ kind: z.string(), item_id: z.string() })),
    }),
  )`
    select pg_current_snapshot()::text as snapshot,
           coalesce((select json_agg(w) from (select ${documentColumns} from search_documents d
                      where d.site_id = ${siteId} and ${unseen(sql.identifier(['d', 'changed']))} limit ${most + 1}) w), '[]') as written,
           coalesce((select json_agg(r) from (select r.kind, r.item_id from search_removals r
                      where r.site_id = ${siteId} and ${unseen(sql.identifier(['r', 'changed']))} limit ${most + 1}) r), '[]') as removed`);
  if (found.written.length > most || found.removed.length > most) return undefined;
  return {
    snapshot: found.snapshot,
    written: found.written.map((row) => ({ doc: docOf(row), vector: row.vector })),
    removed: found.removed.map(({ kind, item_id }) => ({ kind, itemId: item_id })),
  };
}
