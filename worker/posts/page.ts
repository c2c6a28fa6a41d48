// A fetched web page as text and as an article. The bytes are decoded by the
// charset the server declared, else the one the page declares in its first
// kilobytes, else UTF-8. Anything but HTML is refused (not_an_article).
import type { SafeFetchResult } from '../../core/net/safe-fetch.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { extractArticle, type Article } from './article.ts';

const htmlTypes = new Set(['text/html', 'application/xhtml+xml']);

/** The Accept header a page is asked for with: HTML first. */
export const acceptHtml = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' };

function charsetOf(result: SafeFetchResult): string {
  const declared = /charset\s*=\s*"?([\w-]+)/i.exec(String(result.headers['content-type'] ?? ''))?.[1];
  const inPage = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(result.body.subarray(0, 2048).toString('latin1'))?.[1];
  return declared ?? inPage ?? 'utf-8';
}

function decode(result: SafeFetchResult): string {
  try {
    return new TextDecoder(charsetOf(result)).decode(result.body);
  } catch {
    return new TextDecoder('utf-8').decode(result.body); // a charset Node does not know
  }
}

export function articleOf(result: SafeFetchResult): Article {
  if (result.contentType && !htmlTypes.has(result.contentType))
    throw permanent('not_an_article', `The URL answered ${result.contentType}, not an HTML page.`);
  const article = extractArticle(decode(result), result.url);
  if (!article) throw permanent('not_an_article', 'No article was found on the page (too little text in one place).');
  return article;
}

/** What the output shows of an article: everything but its body. */
export const extracted = ({ content: _content, ...rest }: Article) => rest;
