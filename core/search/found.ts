// What a search found before its snippets are cut, whether in PostgreSQL or
// in a site's copy held in memory: the same shape from both (./query.ts).
import type { SearchHit } from './query.ts';

/** A hit with the text its snippet is cut from. */
export type Ranked = Omit<SearchHit, 'snippet'> & { text: string };
/** What a search found, before the snippets: the counts, the words to mark, a page of hits and whether more follow. */
export type Found = {
  facets: Partial<Record<string, number>>;
  exact: boolean;
  stems: string[];
  hits: Ranked[];
  more: boolean;
};
