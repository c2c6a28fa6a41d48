// The markup of a text, as the sequence of its tags (`p`, `/p`, `a`...), to
// check that a translation kept it: a provider asked to translate only the
// text between tags may still drop, add or reorder some. HTML here is what
// sanitize-html stored (well-formed, no scripts or comments), so a tag scan
// is enough to compare two texts' structure; Markdown is compared by the
// HTML it renders to.
import { marked } from 'marked';

const tag = /<\/?([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*>/g;

function tagsOf(html: string): string[] {
  return [...html.matchAll(tag)].map((match) => `${match[0].startsWith('</') ? '/' : ''}${match[1]!.toLowerCase()}`);
}

export function markupOf(text: string, format: 'plain' | 'html' | 'markdown'): string[] {
  if (format === 'plain') return [];
  return tagsOf(format === 'markdown' ? marked.parse(text, { async: false }) : text);
}

/** Whether `translated` has the markup of `source`: the same tags in the same order. */
export function sameMarkup(source: string, translated: string, format: 'plain' | 'html' | 'markdown'): boolean {
  const [a, b] = [markupOf(source, format), markupOf(translated, format)];
  return a.length === b.length && a.every((name, index) => name === b[index]);
}
