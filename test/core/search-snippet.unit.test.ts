// Snippets are cut by a scan of character codes (core/search/snippet.ts) for
// speed; what they must equal is the plain definition kept here: words as the
// pattern finds them, matched against the query's stems and typed words.
import { snippet } from '../../core/search/snippet.ts';

const wordPattern = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu;
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function definition(text: string, stems: readonly string[], typed: string): string {
  const targets = [
    ...new Set([...stems, ...(typed.toLowerCase().match(wordPattern) ?? [])].filter((word) => word.length >= 2)),
  ];
  const words = [...text.matchAll(wordPattern)].map((match) => ({
    start: match.index,
    end: match.index + match[0].length,
    hit: targets.some((target) => match[0].toLowerCase().startsWith(target)),
  }));
  if (words.length === 0) return '';
  let best = 0;
  let bestHits = -1;
  for (let first = 0; first < words.length; first++) {
    const inWindow = words.slice(first, first + 30).filter((word) => word.hit).length;
    if (inWindow > bestHits) [best, bestHits] = [first, inWindow];
    if (first + 30 >= words.length) break;
  }
  const shown = words.slice(best, best + 30);
  let out = best > 0 ? '… ' : '';
  let at = shown[0]!.start;
  for (const word of shown) {
    const written = escapeHtml(text.slice(word.start, word.end));
    out += escapeHtml(text.slice(at, word.start)) + (word.hit ? `<mark>${written}</mark>` : written);
    at = word.end;
  }
  return out + (best + 30 < words.length ? ' …' : '');
}

// Letters, digits, marks, apostrophes and hyphens, other scripts, astral letters and emoji, markup, lone surrogates.
const pieces = [
  'narwhal',
  'Narwhals',
  'keeper',
  'KEEPERS',
  'lighthouse',
  'the',
  'a',
  '42',
  'x2',
  "o'neil",
  'rock’n’roll',
  'well-known',
  '-dash',
  "'quote",
  'café',
  'cafe\u0301',
  'Straße',
  'İstanbul',
  'ﬁsh',
  'Ωmega',
  '日本語',
  '𝒳ray',
  '😀',
  '\ud800',
  '\udc00',
  '<b>',
  '&amp;',
  'a < b & c > d',
  '…',
  '.',
  ',',
  ' ',
  ' ',
  '\n',
  '\t',
  '١٢٣',
  'ǅemal',
];

let seed = 7;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;

describe('snippet', () => {
  it('equals the plain definition over random texts and queries', () => {
    for (let round = 0; round < 3_000; round++) {
      const length = Math.floor(random() * (round % 10 === 0 ? 200 : 40));
      const text = Array.from({ length }, () => pick(pieces) + (random() < 0.6 ? ' ' : '')).join('');
      const stems = Array.from({ length: Math.floor(random() * 3) }, () => pick(pieces).toLowerCase().slice(0, 6));
      const typed = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(pieces)).join(' ');
      expect([text, snippet(text, stems, typed)]).toEqual([text, definition(text, stems, typed)]);
    }
  });

  it('marks the words found and escapes the rest', () => {
    expect(snippet('a < b & c > d, the narwhals swim', ['narwhal'], 'narwhal')).toBe(
      'a &lt; b &amp; c &gt; d, the <mark>narwhals</mark> swim',
    );
  });

  it('shows the window with the most words found', () => {
    const text = `${'filler '.repeat(100)}the narwhal and the narwhal ${'filler '.repeat(100)}`;
    const cut = snippet(text, ['narwhal'], 'narwhal');
    expect(cut.startsWith('… ')).toBe(true);
    expect(cut.endsWith(' …')).toBe(true);
    expect(cut.match(/<mark>narwhal<\/mark>/g)).toHaveLength(2);
  });

  it('is empty for a text without words', () => {
    expect(snippet(' … — ', ['narwhal'], 'narwhal')).toBe('');
  });
});
