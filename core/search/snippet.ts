// A hit's snippet: the window of its text with the most words of the query,
// HTML-escaped, those words in <mark>. Cut here rather than by ts_headline,
// which parses and stems the whole text of every hit in the database (~0.1 ms
// a post, a tenth of a search). A word matches when it starts with a stem of
// the query (keepers ← keeper) or is one of the query's own words as typed.
//
// A word is what /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/u matches. Every hit's
// whole text is read for its best window, so the words are found by a scan
// of character codes, ASCII decided by a table and the rest by that pattern
// one character at a time: matching the pattern itself made an object per
// word, and snippets were a quarter of a search held in memory.
const wordPattern = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu;
const startsWord = /[\p{L}\p{N}]/uy;
const continuesWord = /[\p{L}\p{N}\p{M}'’-]/uy;
const windowWords = 30;

/** For each ASCII code: 2 when a word may start with it, 1 when a word may only go on with it, 0 otherwise. */
const ascii = Uint8Array.from({ length: 128 }, (_, code) => {
  const char = String.fromCharCode(code);
  return /[A-Za-z0-9]/.test(char) ? 2 : char === "'" || char === '-' ? 1 : 0;
});

/** Outside ASCII: the length of the character at `at` when it may start a word (first) or go on with one, else 0. */
function beyondAscii(text: string, at: number, first: boolean): number {
  const pattern = first ? startsWord : continuesWord;
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex - at : 0;
}

/** Where each word of the text starts and ends, end to end in a reused array: [start, end, start, end, …]. */
let bounds = new Int32Array(1024);
function findWords(text: string): number {
  const { length } = text;
  let n = 0;
  let at = 0;
  while (at < length) {
    const code = text.charCodeAt(at);
    const first = code < 128 ? (ascii[code] === 2 ? 1 : 0) : beyondAscii(text, at, true);
    if (first === 0) {
      // A character of two code units (an emoji) passed whole, as the pattern passes it.
      const pair = (code & 0xfc00) === 0xd800 && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00;
      at += pair ? 2 : 1;
      continue;
    }
    const start = at;
    at += first;
    while (at < length) {
      const next = text.charCodeAt(at);
      const step = next < 128 ? (ascii[next] === 0 ? 0 : 1) : beyondAscii(text, at, false);
      if (step === 0) break;
      at += step;
    }
    if (n + 2 > bounds.length) {
      const larger = new Int32Array(bounds.length * 2);
      larger.set(bounds);
      bounds = larger;
    }
    bounds[n++] = start;
    bounds[n++] = at;
  }
  return n / 2;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const escapeHtml = (text: string) => text.replace(/[&<>]/g, (char) => escapes[char]!);
const asIs = (text: string) => text;

export function snippet(text: string, stems: readonly string[], typed: string): string {
  const targets = [
    ...new Set([...stems, ...(typed.toLowerCase().match(wordPattern) ?? [])].filter((word) => word.length >= 2)),
  ];
  // Lower-cased once, where that keeps every character in place (it does but for a few letters, such as İ).
  const lowered = text.toLowerCase();
  const inPlace = lowered.length === text.length;
  const count = findWords(text);
  if (count === 0) return '';
  const hits = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const start = bounds[2 * i]!;
    const length = bounds[2 * i + 1]! - start;
    if (inPlace) {
      const code = lowered.charCodeAt(start);
      for (const target of targets)
        if (target.charCodeAt(0) === code && target.length <= length && lowered.startsWith(target, start)) {
          hits[i] = 1;
          break;
        }
    } else {
      const word = text.slice(start, start + length).toLowerCase();
      if (targets.some((target) => word.startsWith(target))) hits[i] = 1;
    }
  }
  // The window of windowWords words holding the most hits, the first of equals.
  let best = 0;
  let bestHits = -1;
  let inWindow = 0;
  for (let i = 0; i < count; i++) {
    inWindow += hits[i]!;
    if (i >= windowWords) inWindow -= hits[i - windowWords]!;
    if (inWindow > bestHits) {
      bestHits = inWindow;
      best = Math.max(0, i - windowWords + 1);
    }
  }
  const last = Math.min(count, best + windowWords);
  const escape = /[&<>]/.test(text) ? escapeHtml : asIs;
  let out = best > 0 ? '… ' : '';
  let at = bounds[2 * best]!;
  for (let i = best; i < last; i++) {
    const start = bounds[2 * i]!;
    const end = bounds[2 * i + 1]!;
    out += escape(text.slice(at, start));
    const written = escape(text.slice(start, end));
    out += hits[i] ? `<mark>${written}</mark>` : written;
    at = end;
  }
  return out + (last < count ? ' …' : '');
}
