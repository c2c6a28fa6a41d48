// A page of hits from a site's in-memory index, ranked as PostgreSQL's
// search_page ranks them (0023): cover density, boosted for recent items by
// up to half again, fading over 90 days; best first, ties by kind and id
// (descending, as PostgreSQL orders them); after the cursor's position.
import type { SearchKind } from '../kinds.ts';
import { coverDensity } from './rank.ts';
import type { IndexedDocument, Scope, SiteIndex } from './site-index.ts';
import { lexemesOf, type QueryNode } from './tsquery.ts';

export type RankedHit = { doc: IndexedDocument; score: number };
export type After = { score: number; kind: SearchKind; id: string };

const fadeSeconds = 90 * 86_400;

/** Whether hit a ranks before b. */
const before = (a: { score: number; kind: string; id: string }, b: { score: number; kind: string; id: string }) =>
  a.score !== b.score ? a.score > b.score : a.kind !== b.kind ? a.kind > b.kind : a.id > b.id;

export function rankedPage(
  index: SiteIndex,
  query: QueryNode,
  scope: Scope,
  options: { newest: number; atMicros: number; after: After | undefined; pageSize: number },
): { facets: Partial<Record<SearchKind, number>>; hits: RankedHit[] } {
  const lexemes = [...lexemesOf(query)];
  const { facets, toRank } = index.matches(query, scope, options.newest, lexemes);
  const ranked = toRank.map(({ doc, positions }) => {
    const age = Math.max(0, options.atMicros - (doc.published === Infinity ? options.atMicros : doc.published)) / 1e6;
    return { doc, score: coverDensity(query, lexemes, positions) * (1 + 0.5 / (1 + age / fadeSeconds)) };
  });
  const keyed = (hit: RankedHit) => ({ score: hit.score, kind: hit.doc.kind, id: hit.doc.itemId });
  const { after } = options;
  const hits = ranked
    .filter((hit) => !after || before(after, keyed(hit)))
    .sort((a, b) => (before(keyed(a), keyed(b)) ? -1 : 1))
    .slice(0, options.pageSize);
  return { facets, hits };
}
