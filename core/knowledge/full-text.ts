// The full-text side of a knowledge search: the chunks that hold the query's
// words, in the languages of the agent's chunks, best first.
//
// Any of the words counts (a question rarely has all its words in one
// passage). A chunk scores the sum of the inverse document frequencies of
// the query's words it holds (BM25's idf: ln(1 + (N − n + 0.5) / (n + 0.5)),
// N chunks, n holding the word; migration 0027 keeps both counts), so holding a rare word counts for more than holding a common one,
// plus its cover density (ts_rank_cd, below 1: how often and how close
// together the words appear, the document's title included), which orders
// chunks holding the same words.
//
// Bounded work: a search reads the row (the vector) of each chunk it ranks,
// some 10 µs with the index lookups that find it. So the candidates are the
// chunks holding the query's rarer words, rarest first, as long as they hold
// at most `budget` chunks together; the words left out still count in the
// scores of those. When even the rarest word is in more than `budget` chunks
// (every word of the query is common), the candidates are the first
// `budget` chunks found holding the rarest: a sample, so such a search is
// approximate (among the sample, the chunks holding more of the words still
// rank first). At most `maxTerms` of the rarest words are scored.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

export const budget = 500;
const maxTerms = 16;

export type Ranked = { id: string; score: number };

/**
 * Which chunks a search ranks: those of `sites` (null: every site of the
 * agent's tenants), and, when asked, of documents in a language (`locale`;
 * `en` takes its regional variants, `en-GB`, too) or of a kind of source.
 */
export type ChunkFilter = { sites: string[] | null; locale?: string | undefined; sourceKind?: string | undefined };

/** The filter as conditions on a table alias (`c` chunks, `s` signatures), each with the site, locale and kind of source. */
export function filterConditions(alias: 'c' | 's', filter: ChunkFilter) {
  const column = (name: string) => sql.identifier([alias, name]);
  const conditions = [
    ...(filter.sites ? [sql.fragment`${column('site_id')} = any(${sql.array(filter.sites, 'uuid')})`] : []),
    ...(filter.locale
      ? [sql.fragment`(${column('locale')} = ${filter.locale} or ${column('locale')} like ${`${filter.locale}-%`})`]
      : []),
    ...(filter.sourceKind ? [sql.fragment`${column('source_kind')} = ${filter.sourceKind}`] : []),
  ];
  return conditions.length ? sql.fragment`and ${sql.join(conditions, sql.fragment` and `)}` : sql.fragment``;
}

const termRow = z.object({ lexeme: z.string(), chunks: z.number(), total: z.number() });

/**
 * The query's lexemes in each language of the agent's chunks (those asked
 * for, with a locale filter), with how many chunks hold each; absent ones left out.
 */
async function termsOf(db: CommonQueryMethods, agentId: string, query: string, locale: string | undefined) {
  const inLocale = locale ? sql.fragment`and (locale = ${locale} or locale like ${`${locale}-%`})` : sql.fragment``;
  return db.any(sql.type(termRow)`
    with languages as (
      select locale, chunks from knowledge_locale_counts where agent_id = ${agentId} and chunks > 0 ${inLocale}
    ),
    lexemes as (
      select distinct unnest(tsvector_to_array(to_tsvector(search_config(l.locale), ${query}))) as lexeme
      from languages l
    )
    select lexeme, chunks, (select sum(chunks) from languages)::int as total
    from (select lexeme, knowledge_lexeme_chunks(${agentId}, lexeme) as chunks from lexemes) q
    where chunks > 0
    order by chunks, lexeme
    limit ${maxTerms}`);
}

/** A tsquery of lexemes as they are (already normalised): quoted, joined by `|` or `&`. */
const tsquery = (lexemes: string[], join: '|' | '&') =>
  lexemes.map((lexeme) => `'${lexeme.replace(/'/g, "''")}'`).join(` ${join} `);

const idf = (total: number, holding: number) => Math.log(1 + (total - holding + 0.5) / (holding + 0.5));

/** The `limit` best chunks of the agent for the query, among those the filter takes. */
export async function fullTextRanking(
  db: CommonQueryMethods,
  agentId: string,
  filter: ChunkFilter,
  query: string,
  limit: number,
): Promise<Ranked[]> {
  // Backslashes would be read as escapes in tsquery text; no stemmer keeps one in a word.
  const terms = (await termsOf(db, agentId, query, filter.locale)).filter((term) => !term.lexeme.includes('\\'));
  if (terms.length === 0) return [];
  let held = 0;
  const rarer = terms.filter((term) => (held += term.chunks) <= budget).map((term) => term.lexeme);
  const all = terms.map((term) => term.lexeme);
  const matching = (text: string) => sql.fragment`
    select c.id, c.tsv from knowledge_chunks c
    where c.agent_id = ${agentId} and c.tsv @@ ${text}::tsquery ${filterConditions('c', filter)} limit ${budget}`;
  // The rarer words within the budget; else a sample of the chunks holding the rarest word.
  const candidates = matching(tsquery(rarer.length > 0 ? rarer : all.slice(0, 1), '|'));
  const weights = sql.join(
    terms.map(
      (term) =>
        sql.fragment`case when k.tsv @@ ${tsquery([term.lexeme], '|')}::tsquery then ${idf(term.total, term.chunks)}::float8 else 0 end`,
    ),
    sql.fragment` + `,
  );
  const rows = await db.any(sql.type(z.object({ id: z.uuid(), score: z.number() }))`
    select k.id, (${weights} + ts_rank_cd(k.tsv, ${tsquery(all, '|')}::tsquery, 1))::float8 as score
    from (${candidates}) k
    order by score desc, k.id limit ${limit}`);
  return [...rows];
}
