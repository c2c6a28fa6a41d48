// A knowledge-base document as plain text: parsed from its format into
// paragraphs, cleaned, and counted in tokens.
//
// Tokens are an estimate, the same on every machine (no model's vocabulary is
// shipped): a run of letters, marks or digits is one token per started six
// characters ("knowledge" is two), each Chinese or Japanese character is one,
// and so is every other visible character (punctuation, symbols); whitespace
// is free. English prose comes out near 1.25 tokens a word, close to what the
// common BPE vocabularies give. Because whitespace is free, a slice of a text
// has exactly the tokens of the pieces it joins, which the chunker relies on.
import { Parser } from 'htmlparser2';
import { marked } from 'marked';

export const bodyFormats = ['plain', 'markdown', 'html'] as const;
export type BodyFormat = (typeof bodyFormats)[number];

/** Characters of a word run counted as one token. */
const charactersPerToken = 6;

const tokenPattern = /\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|[\p{L}\p{M}\p{N}]+|\S/gu;

/** The tokens of a text (see above). */
export function countTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(tokenPattern)) tokens += Math.ceil(match[0].length / charactersPerToken);
  return tokens;
}

/** A token and where it lies in the text: a long word is several, each of at most six characters. */
export type Atom = { start: number; end: number };

export function* atoms(text: string, from = 0, to = text.length): Generator<Atom> {
  const part = text.slice(from, to);
  for (const match of part.matchAll(tokenPattern)) {
    const start = from + match.index;
    for (let at = 0; at < match[0].length; at += charactersPerToken)
      yield { start: start + at, end: start + Math.min(match[0].length, at + charactersPerToken) };
  }
}

// Elements whose text is a paragraph of its own; what is inside them (em, a, span) runs on.
const blockElements = new Set([
  'p',
  'div',
  'li',
  'blockquote',
  'pre',
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'tr',
  'dt',
  'dd',
  'figcaption',
  'table',
  'ul',
  'ol',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const ignoredElements = new Set(['script', 'style', 'noscript', 'template', 'head']);

function htmlParagraphs(html: string): string[] {
  const paragraphs: string[] = [];
  let current: string[] = [];
  let skipping = 0;
  const close = () => {
    if (current.length) paragraphs.push(current.join(''));
    current = [];
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (ignoredElements.has(name)) skipping++;
        if (blockElements.has(name)) close();
        // Cells and line breaks separate words within a paragraph.
        else if (name === 'br' || name === 'td' || name === 'th') current.push(' ');
      },
      ontext(text) {
        if (!skipping) current.push(text);
      },
      onclosetag(name) {
        if (ignoredElements.has(name)) skipping = Math.max(0, skipping - 1);
        if (blockElements.has(name)) close();
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  close();
  return paragraphs;
}

/** The document's paragraphs, as written: Markdown and HTML lose their markup, plain text splits at blank lines. */
export function paragraphsOf(body: string, format: BodyFormat): string[] {
  if (format === 'plain') return body.split(/\r?\n[ \t]*\r?\n/);
  return htmlParagraphs(format === 'markdown' ? marked.parse(body, { async: false }) : body);
}

/** A cleaned text: its paragraphs joined by blank lines, and where each lies. */
export type CleanText = { text: string; paragraphs: { start: number; end: number }[] };

// Control characters (but tabs and line ends, which become spaces) and zero-width marks carry no words.
const invisible = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b-\u200d\u2060\ufeff]/g;

/** Unicode-normalised, invisible characters dropped, whitespace collapsed, empty paragraphs gone. */
export function cleanText(paragraphs: string[]): CleanText {
  const kept = paragraphs
    .map((paragraph) => paragraph.normalize('NFC').replace(invisible, '').replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const spans: CleanText['paragraphs'] = [];
  let at = 0;
  for (const paragraph of kept) {
    spans.push({ start: at, end: at + paragraph.length });
    at += paragraph.length + 2;
  }
  return { text: kept.join('\n\n'), paragraphs: spans };
}
