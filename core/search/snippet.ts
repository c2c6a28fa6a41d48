// A hit's snippet: the window of its text with the most words of the query,
// HTML-escaped, those words in <mark>. Cut here rather than by ts_headline,
// which parses and stems the whole text of every hit in the database (~0.1 ms
// a post, a tenth of a search). A word matches when it starts with a stem of
// the query (keepers ← keeper) or is one of the query's own words as typed.
const wordPattern = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu;
const windowWords = 30;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function snippet(text: string, stems: readonly string[], typed: string): string {
  const targets = [
    ...new Set([...stems, ...(typed.toLowerCase().match(wordPattern) ?? [])].filter((word) => word.length >= 2)),
  ];
  const words = [...text.matchAll(wordPattern)].map((match) => ({
    start: match.index,
    end: match.index + match[0].length,
    hit: targets.some((target) => match[0].toLowerCase().startsWith(target)),
  }));
  if (words.length === 0) return '';
  // The window of windowWords words holding the most hits, the first of equals.
  let best = 0;
  let bestHits = -1;
  let hits = 0;
  for (let i = 0; i < words.length; i++) {
    if (words[i]!.hit) hits++;
    if (i >= windowWords && words[i - windowWords]!.hit) hits--;
    const first = Math.max(0, i - windowWords + 1);
    if (hits > bestHits) {
      bestHits = hits;
      best = first;
    }
  }
  const shown = words.slice(best, best + windowWords);
  let out = best > 0 ? '… ' : '';
  let at = shown[0]!.start;
  for (const word of shown) {
    out += escapeHtml(text.slice(at, word.start));
    const written = escapeHtml(text.slice(word.start, word.end));
    out += word.hit ? `<mark>${written}</mark>` : written;
    at = word.end;
  }
  return out + (best + windowWords < words.length ? ' …' : '');
}
