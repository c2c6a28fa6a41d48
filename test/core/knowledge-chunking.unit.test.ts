// Knowledge-base text: what counts as a token, how each format becomes
// paragraphs, and where chunks are cut (paragraph ends first, then sentence
// ends, then word ends), with their overlap.
import { splitIntoChunks, type Chunk } from '../../core/knowledge/chunking.ts';
import { cleanText, countTokens, paragraphsOf } from '../../core/knowledge/text.ts';

/** A sentence of exactly `tokens` tokens (words of at most six characters, and a full stop), its words naming it. */
const sentence = (name: string, tokens: number) =>
  `${Array.from({ length: tokens - 1 }, (_, i) => `${name}w${i.toString(36)}`).join(' ')}.`;
/** Sentences named by the paragraph's name (two characters at most) and their place (base 36). */
const paragraph = (name: string, sentences: number, tokens: number) =>
  Array.from({ length: sentences }, (_, i) => sentence(`${name}${i.toString(36)}`, tokens)).join(' ');

const chunksOf = (paragraphs: string[], chunkTokens: number, overlapTokens: number) =>
  splitIntoChunks(cleanText(paragraphs), { chunkTokens, overlapTokens });

/** What every split must hold: slices of the text, within the size, counted right, covering it all in order. */
function expectWellFormed(text: string, chunks: Chunk[], chunkTokens: number) {
  let covered = 0;
  for (const chunk of chunks) {
    expect(chunk.content).toBe(text.slice(chunk.start, chunk.end));
    expect(chunk.tokens).toBe(countTokens(chunk.content));
    expect(chunk.tokens).toBeLessThanOrEqual(chunkTokens);
    expect(chunk.start).toBeLessThanOrEqual(covered + 2); // at most the blank line between paragraphs skipped
    covered = Math.max(covered, chunk.end);
  }
  expect(covered).toBe(text.length);
  expect(chunks.map((chunk) => chunk.ordinal)).toEqual(chunks.map((_, i) => i));
}

describe('tokens', () => {
  it('counts a word per started six characters, each CJK character and each other visible character', () => {
    expect(countTokens('The knowledge base.')).toBe(5);
    expect(countTokens('  ')).toBe(0);
    expect(countTokens('日本語の知識')).toBe(6);
    expect(countTokens('e-mail: a@b.io')).toBe(9);
    expect(countTokens(sentence('x', 12))).toBe(12);
  });

  it('adds up: a text has the tokens of its pieces, whitespace being free', () => {
    const a = 'Harbour boats leave at dawn,';
    const b = 'and return with the tide!';
    expect(countTokens(`${a}\n\n${b}`)).toBe(countTokens(a) + countTokens(b));
  });
});

describe('parsing', () => {
  it('reads Markdown and HTML as paragraphs of plain text, without markup, scripts or styles', () => {
    const markdown =
      '# Opening hours\n\nThe *museum* opens at [nine](https://example.com).\n\n- Mondays closed\n- Free on Sundays';
    expect(cleanText(paragraphsOf(markdown, 'markdown')).text).toBe(
      'Opening hours\n\nThe museum opens at nine.\n\nMondays closed\n\nFree on Sundays',
    );
    const html =
      '<h2>Tickets</h2><p>Adults pay &euro;12,<br>children   nothing.</p><script>alert(1)</script><style>p{}</style>' +
      '<table><tr><td>Mon</td><td>closed</td></tr></table>';
    expect(cleanText(paragraphsOf(html, 'html')).text).toBe(
      'Tickets\n\nAdults pay €12, children nothing.\n\nMon closed',
    );
  });

  it('splits plain text at blank lines, joining wrapped lines and dropping invisible characters', () => {
    const clean = cleanText(paragraphsOf('First line\nwrapped.\n\n\u200bSecond\u0007 one.\r\n\r\n\n', 'plain'));
    expect(clean.text).toBe('First line wrapped.\n\nSecond one.');
    expect(clean.paragraphs).toEqual([
      { start: 0, end: 19 },
      { start: 21, end: 32 },
    ]);
  });
});

describe('chunk boundaries', () => {
  it('packs whole paragraphs while they fit', () => {
    const paragraphs = ['a', 'b', 'c', 'd', 'e'].map((name) => paragraph(name, 4, 25)); // 100 tokens each
    const chunks = chunksOf(paragraphs, 250, 0);
    expect(chunks.map((chunk) => chunk.tokens)).toEqual([200, 200, 100]);
    expect(chunks.map((chunk) => chunk.content)).toEqual([
      `${paragraphs[0]}\n\n${paragraphs[1]}`,
      `${paragraphs[2]}\n\n${paragraphs[3]}`,
      paragraphs[4],
    ]);
  });

  it('ends a chunk at a paragraph’s end rather than within the next paragraph, once half full', () => {
    const first = paragraph('a', 5, 30); // 150 tokens
    const second = paragraph('b', 5, 30);
    const chunks = chunksOf([first, second], 250, 0);
    // Greedy packing would take three sentences of the second paragraph (240 tokens).
    expect(chunks.map((chunk) => chunk.content)).toEqual([first, second]);
  });

  it('cuts a paragraph longer than a chunk at sentence ends, each chunk starting with the last sentence before', () => {
    const text = paragraph('p', 20, 30); // 600 tokens, one paragraph
    const chunks = chunksOf([text], 250, 40);
    expectWellFormed(text, chunks, 250);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.content).toMatch(/^p[0-9a-z]w0 /); // a sentence's first word
      expect(chunk.content.endsWith('.')).toBe(true);
      if (i === 0) continue;
      const lastSentence = chunks[i - 1]!.content.split(/(?<=\.) /).at(-1)!;
      expect(chunk.content.startsWith(lastSentence)).toBe(true);
      expect(countTokens(lastSentence)).toBeLessThanOrEqual(40);
    }
    // Eight sentences a chunk: the one repeated and seven new ones.
    expect(chunks[1]!.tokens).toBe(240);
  });

  it('cuts a sentence longer than a chunk at word ends, repeating the last words', () => {
    const words = Array.from({ length: 700 }, (_, i) => `w${i}`);
    const text = words.join(' ');
    const chunks = chunksOf([text], 300, 20);
    expectWellFormed(text, chunks, 300);
    // Runs of 280 words, each chunk starting with the 20 words before its run.
    expect(chunks.map((chunk) => [chunk.content.split(' ')[0], chunk.content.split(' ').at(-1)])).toEqual([
      ['w0', 'w279'],
      ['w260', 'w559'],
      ['w540', 'w699'],
    ]);
  });

  it('splits a word longer than a chunk too, and never returns an empty chunk', () => {
    const text = `Short start. ${'x'.repeat(6 * 130)} end.`;
    const chunks = chunksOf([text], 50, 0);
    expectWellFormed(text, chunks, 50);
    expect(chunks.every((chunk) => chunk.tokens > 0)).toBe(true);
    expect(chunksOf([], 500, 50)).toEqual([]);
  });

  it('makes chunks of about 500 tokens repeating about 50 by default settings, the same every time', () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) =>
      paragraph(`q${i.toString(36)}`, 3 + (i % 4), 10 + (i % 13)),
    );
    const clean = cleanText(paragraphs);
    const chunks = splitIntoChunks(clean, { chunkTokens: 500, overlapTokens: 50 });
    expectWellFormed(clean.text, chunks, 500);
    expect(chunks.slice(0, -1).every((chunk) => chunk.tokens >= 250)).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const repeated = chunks[i - 1]!.end - chunks[i]!.start;
      expect(repeated).toBeGreaterThan(0);
      expect(countTokens(clean.text.slice(chunks[i]!.start, chunks[i - 1]!.end))).toBeLessThanOrEqual(50);
    }
    expect(splitIntoChunks(clean, { chunkTokens: 500, overlapTokens: 50 })).toEqual(chunks);
  });

  it('refuses an overlap of more than half a chunk', () => {
    expect(() => chunksOf(['text'], 100, 51)).toThrow(RangeError);
  });
});
