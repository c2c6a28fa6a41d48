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
  // Lower-cased once, where that keeps every character in place (it does but for a few letters, such as İ).
  const lowered = text.toLowerCase();
  const inPlace = lowered.length === text.length;
  const starts: number[] = [];
  const ends: number[] = [];
  const hits: boolean[] = [];
  for (const match of text.matchAll(wordPattern)) {
    const start = match.index;
    const { length } = match[0];
    const word = inPlace ? undefined : match[0].toLowerCase();
    starts.push(start);
    ends.push(start + length);
    hits.push(
      targets.some((target) =>
        word ? word.startsWith(target) : target.length <= length && lowered.startsWith(target, start),
      ),
    );
  }
  if (starts.length === 0) return '';
  // The window of windowWords words holding the most hits, the first of equals.
  let best = 0;
  let bestHits = -1;
  let inWindow = 0;
  for (let i = 0; i < starts.length; i++) {
    if (hits[i]) inWindow++;
    if (i >= windowWords && hits[i - windowWords]) inWindow--;
    const first = Math.max(0, i - windowWords + 1);
    if (inWindow > bestHits) {
      bestHits = inWindow;
      best = first;
    }
  }
  const last = Math.min(starts.length, best + windowWords);
  let out = best > 0 ? '… ' : '';
  let at = starts[best]!;
  for (let i = best; i < last; i++) {
    out += escapeHtml(text.slice(at, starts[i]));
    const written = escapeHtml(text.slice(starts[i], ends[i]));
    out += hits[i] ? `<mark>${written}</mark>` : written;
    at = ends[i]!;
  }
  return out + (last < starts.length ? ' …' : '');
}
