// ts_rank_cd(document, query, 32) for the queries the in-memory index
// evaluates (words, and, or, not): PostgreSQL's cover density ranking
// (src/backend/utils/adt/tsrank.c, calc_rank_cd and Cover), rewritten so that
// a hit ranked here scores as it would ranked by PostgreSQL. A cover is a
// shortest stretch of the document that satisfies the query; each adds its
// words' weights over the words between them, and 32 maps the sum s to
// s / (s + 1).
import { holds, type QueryNode } from './tsquery.ts';
import { positionOf, weightOf } from './tsvector.ts';

// PostgreSQL's default weights of D, C, B and A, single precision as it keeps them.
const inverseWeights = [0.1, 0.2, 0.4, 1.0].map((weight) => 1 / Math.fround(weight));

/** PostgreSQL orders lexemes by their UTF-8 bytes, a shorter one first when it is the other's beginning. */
const lexemeOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The rank of a document for the query, from the packed positions
 * (./tsvector.ts) of each of the query's lexemes in it, `lexemes[i]` at
 * `positions[i]` (undefined or empty where the document lacks it).
 */
export function coverDensity(
  query: QueryNode,
  lexemes: readonly string[],
  positions: readonly (ArrayLike<number> | undefined)[],
): number {
  // The document as PostgreSQL sees it for ranking: each position of a query lexeme, in order.
  const entries: { at: number; packed: number; lexeme: number }[] = [];
  lexemes.forEach((_, lexeme) => {
    const these = positions[lexeme];
    if (these)
      for (let i = 0; i < these.length; i++) entries.push({ at: positionOf(these[i]!), packed: these[i]!, lexeme });
  });
  if (entries.length === 0) return 0;
  entries.sort((a, b) => a.at - b.at || lexemeOrder(lexemes[a.lexeme]!, lexemes[b.lexeme]!));

  const seen = new Array<boolean>(lexemes.length);
  const has = (lexeme: string) => seen[lexemes.indexOf(lexeme)] === true;
  const satisfiedAt = (i: number) => {
    seen[entries[i]!.lexeme] = true;
    return holds(query, has);
  };
  let sum = 0;
  let from = 0;
  for (;;) {
    // The end of the next cover: the first entry from `from` on at which the query holds.
    seen.fill(false);
    let end = -1;
    for (let i = from; i < entries.length; i++) {
      if (satisfiedAt(i)) {
        end = i;
        break;
      }
    }
    if (end < 0) break;
    // Its beginning: walking back from the end, the first entry at which the query holds again.
    seen.fill(false);
    let begin = from - 1;
    for (let i = end; i >= from; i--) {
      if (satisfiedAt(i)) {
        begin = i;
        break;
      }
    }
    const p = begin >= from ? entries[begin]!.at : Infinity;
    const q = entries[end]!.at;
    if (p > q) {
      from++;
      continue;
    }
    let inverseSum = 0;
    for (let i = begin; i <= end; i++) inverseSum += inverseWeights[weightOf(entries[i]!.packed)]!;
    const density = (end - begin + 1) / inverseSum;
    // Words between the cover's ends that are not its own; past 16,383 positions share one, so guess half.
    let noise = q - p - (end - begin);
    if (noise < 0) noise = Math.trunc((end - begin) / 2);
    sum += density / (1 + noise);
    from = begin + 1;
  }
  return Math.fround(sum / (sum + 1));
}
