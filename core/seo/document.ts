// What an SEO check reads in a body: its text, headings in order, first
// paragraph, links and images. HTML is parsed with htmlparser2 (the parser
// sanitize-html uses; a forgiving tokenizer, no DOM); Markdown is rendered
// to HTML first, so both formats are read alike.
import { Parser } from 'htmlparser2';
import { marked } from 'marked';

export type Heading = { level: number; text: string };
export type Image = { src: string; alt: string | null };

export type Document = {
  text: string;
  headings: Heading[];
  firstParagraph: string;
  links: string[];
  images: Image[];
};

const ignored = new Set(['script', 'style', 'noscript', 'template']);
// Elements that end a word: headings and blocks; inline ones (em, a, span) run on within a word.
const blocks = new Set(['p', 'div', 'li', 'br', 'tr', 'td', 'th', 'blockquote', 'pre', 'section', 'article']);
const separates = (name: string) => blocks.has(name) || /^h[1-6]$/.test(name);

export function readDocument(body: string, format: 'html' | 'markdown'): Document {
  const html = format === 'markdown' ? marked.parse(body, { async: false }) : body;
  const document: Document = { text: '', headings: [], firstParagraph: '', links: [], images: [] };
  const parts: string[] = [];
  let skipping = 0;
  let heading: Heading | null = null;
  let paragraph: string[] | null = null;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (ignored.has(name)) skipping++;
        if (/^h[1-6]$/.test(name)) heading = { level: Number(name[1]), text: '' };
        if (name === 'p' && !document.firstParagraph) paragraph = [];
        if (name === 'a' && attributes.href) document.links.push(attributes.href);
        if (name === 'img') document.images.push({ src: attributes.src ?? '', alt: attributes.alt ?? null });
        if (separates(name)) parts.push(' ');
      },
      ontext(text) {
        if (skipping) return;
        parts.push(text);
        if (heading) heading.text += text;
        paragraph?.push(text);
      },
      onclosetag(name) {
        if (ignored.has(name)) skipping = Math.max(0, skipping - 1);
        if (heading && name === `h${heading.level}`) {
          document.headings.push({ level: heading.level, text: squeeze(heading.text) });
          heading = null;
        }
        if (name === 'p' && paragraph) {
          document.firstParagraph = squeeze(paragraph.join(''));
          paragraph = null;
        }
        if (separates(name)) parts.push(' ');
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  document.text = squeeze(parts.join(''));
  return document;
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();
