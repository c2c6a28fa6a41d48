// A search's query as the tree the in-memory index evaluates, read as
// PostgreSQL's websearch_to_tsquery reads it in the configuration of each
// locale. A query of plain words is common and made of few distinct words,
// so each word's lexeme per locale is known (the site's common words read
// with it, ./reading.ts) or asked once and remembered, and such a query
// costs no round trip once its words are known: websearch_to_tsquery
// joins plain words with `&`, leaving out stop words, and the locales' reads
// are joined with `|` (query.ts). Anything else (quotes, `or`, `-`, digits,
// punctuation) is asked of PostgreSQL whole, also remembered.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../../db/pool.ts';
import type { SearchIndexes } from './indexes.ts';
import type { SiteCopy } from './site-copy.ts';
import { parseTsquery, type QueryNode } from './tsquery.ts';

// Letters only: the parser reads such a run as one word (digits, hyphens and apostrophes it may split or join).
const plainWord = /^\p{Script=Latin}+$/u;

/** The query's tree; null when it has no lexeme (only stop words); undefined when only PostgreSQL can evaluate it. */
export async function queryTree(
  db: CommonQueryMethods,
  indexes: SearchIndexes,
  index: Pick<SiteCopy, 'wordQuery'>,
  locales: readonly string[],
  text: string,
  askWhole: () => Promise<string>,
): Promise<QueryNode | null | undefined> {
  const whole = async () => parseTsquery(await indexes.queryText(JSON.stringify([locales, text]), askWhole));
  const words = text
    .trim()
    .split(/\s+/)
    .map((word) => word.toLowerCase());
  if (!words.every((word) => plainWord.test(word) && word !== 'or')) return whole();
  const keyOf = (locale: string, word: string) => JSON.stringify([[locale], word]);
  // The site's own words were read with it; others asked once and remembered for every site.
  const known = (locale: string, word: string) =>
    index.wordQuery(locale, word) ?? indexes.knownQueryText(keyOf(locale, word));
  const unknown = locales
    .flatMap((locale) => words.map((word) => ({ locale, word, key: keyOf(locale, word) })))
    .filter(({ locale, word }) => known(locale, word) === undefined);
  if (unknown.length) {
    const read = await db.anyFirst(sql.type(z.object({ q: z.string() }))`
      select websearch_to_tsquery(search_config(a.locale), a.word)::text as q
      from unnest(${sql.array(
        unknown.map(({ locale }) => locale),
        'text',
      )}, ${sql.array(
        unknown.map(({ word }) => word),
        'text',
      )}) with ordinality as a (locale, word, n)
      order by a.n`);
    unknown.forEach(({ key }, n) => indexes.rememberQueryText(key, read[n]!));
  }
  const perLocale: QueryNode[] = [];
  for (const locale of locales) {
    const lexemes: QueryNode[] = [];
    for (const word of words) {
      // Remembered above, unless so many were asked at once that the first are out already: asked whole then.
      const read = known(locale, word);
      const tree = read === undefined ? undefined : parseTsquery(read);
      // A word read as more than one lexeme: the whole query is read by PostgreSQL.
      if (tree === undefined || (tree && tree.op !== 'word')) return whole();
      if (tree) lexemes.push(tree);
    }
    if (lexemes.length) perLocale.push(lexemes.length === 1 ? lexemes[0]! : { op: 'and', args: lexemes });
  }
  if (perLocale.length === 0) return null;
  return perLocale.length === 1 ? perLocale[0]! : { op: 'or', args: perLocale };
}
