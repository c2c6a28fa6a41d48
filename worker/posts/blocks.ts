// A post body as a list of blocks (headings and paragraphs of plain text),
// what the recrawl diff compares and the local transforms read. HTML is read
// with linkedom (innermost block elements, so a <p> inside an <li> counts
// once); Markdown by blank-line-separated paragraphs, `#` lines as headings.
import { parseHTML } from 'linkedom';

export type Block = { kind: 'heading' | 'paragraph'; text: string };

const blockTags = 'h1, h2, h3, h4, h5, h6, p, li, blockquote, pre, figcaption, td, th, dt, dd';
const clean = (text: string) => text.replace(/\s+/g, ' ').trim();

export function textBlocks(body: string, format: 'html' | 'markdown'): Block[] {
  if (format === 'markdown') {
    return body
      .split(/\n\s*\n/)
      .map((chunk) => chunk.trim())
      .filter(Boolean)
      .map((chunk) =>
        /^#{1,6}\s/.test(chunk)
          ? { kind: 'heading' as const, text: clean(chunk.replace(/^#{1,6}\s+/, '')) }
          : { kind: 'paragraph' as const, text: clean(chunk.replace(/^[-*>]\s+/gm, '')) },
      )
      .filter((block) => block.text);
  }
  const { document } = parseHTML(`<!doctype html><html><body>${body}</body></html>`);
  const blocks: Block[] = [];
  for (const element of document.querySelectorAll(blockTags)) {
    if (element.querySelector(blockTags)) continue;
    const text = clean(element.textContent ?? '');
    if (text) blocks.push({ kind: /^H[1-6]$/.test(element.tagName) ? 'heading' : 'paragraph', text });
  }
  // Text outside any block element (a bare body): one paragraph.
  if (blocks.length === 0) {
    const text = clean(document.body?.textContent ?? '');
    if (text) blocks.push({ kind: 'paragraph', text });
  }
  return blocks;
}

export const wordCount = (blocks: Block[]) =>
  blocks.reduce((sum, block) => sum + (block.text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0), 0);

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** Blocks back into a body of the given format. */
export function renderBlocks(blocks: Block[], format: 'html' | 'markdown', headingLevel = 2): string {
  if (format === 'markdown')
    return blocks
      .map((block) => (block.kind === 'heading' ? `${'#'.repeat(headingLevel)} ${block.text}` : block.text))
      .join('\n\n');
  return blocks
    .map((block) =>
      block.kind === 'heading'
        ? `<h${headingLevel}>${escapeHtml(block.text)}</h${headingLevel}>`
        : `<p>${escapeHtml(block.text)}</p>`,
    )
    .join('\n');
}
