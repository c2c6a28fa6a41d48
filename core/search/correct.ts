// Typo tolerance: a word of the query that no document of the site holds is
// replaced by the most alike word that some do (pg_trgm similarity over the
// site's vocabulary, search_terms), more documents winning a tie. The query
// keeps its other words and its syntax (quotes, `or`, `-`).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

const wordPattern = /\p{L}[\p{L}\p{M}]*/gu;
// Words shorter than this are too short for trigrams to judge.
const minLength = 3;

/** The query with its unknown words corrected, or null when none could be. */
export async function correctQuery(
  db: CommonQueryMethods,
  siteId: string,
  text: string,
  locale: string | undefined,
): Promise<string | null> {
  const words = [...new Set((text.match(wordPattern) ?? []).map((word) => word.toLowerCase()))].filter(
    (word) => word.length >= minLength && word !== 'or',
  );
  if (words.length === 0) return null;
  // As the tables' owner, so pg_trgm's % can use its index under row-level security (0041).
  const rows = await db.any(sql.type(z.object({ word: z.string(), fix: z.string().nullable() }))`
    select word, fix from search_corrections(${siteId}, ${sql.array(words, 'text')}, ${locale ?? null})`);
  const fixes = new Map(rows.filter((row) => row.fix !== null).map((row) => [row.word, row.fix as string]));
  if (fixes.size === 0) return null;
  return text.replace(wordPattern, (word) => fixes.get(word.toLowerCase()) ?? word);
}
