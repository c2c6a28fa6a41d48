// The article in a web page: its text with @mozilla/readability, on a
// linkedom DOM (no scripts run, no resources load: linkedom only parses).
// The page's own metadata is read first, since Readability rearranges the
// document as it works: published time (article:published_time, JSON-LD
// datePublished, a <time datetime>), language (<html lang>) and lead image
// (og:image). Relative links resolve against the URL the page came from.
// The content is not sanitised here: the post's writer does that.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

export type Article = {
  title: string;
  byline: string | null;
  published_at: string | null;
  lang: string | null;
  lead_image_url: string | null;
  excerpt: string;
  /** HTML, unsanitised. */
  content: string;
  /** Characters of text, for what the job's output reports. */
  text_length: number;
};

type Doc = ReturnType<typeof parseHTML>['document'];

const meta = (document: Doc, ...names: string[]) => {
  for (const name of names) {
    const value = document
      .querySelector(`meta[property="${name}"], meta[name="${name}"]`)
      ?.getAttribute('content')
      ?.trim();
    if (value) return value;
  }
  return null;
};

/** datePublished from JSON-LD blocks, also inside @graph arrays; unreadable blocks are skipped. */
function jsonLdPublished(document: Doc): string | null {
  for (const script of document.querySelectorAll('script[type="application/ld+json"]')) {
    let data: unknown;
    try {
      data = JSON.parse(script.textContent ?? '');
    } catch {
      continue;
    }
    const queue = [data];
    while (queue.length > 0) {
      const item = queue.shift();
      if (Array.isArray(item)) queue.push(...item);
      else if (item && typeof item === 'object') {
        const record = item as Record<string, unknown>;
        if (typeof record.datePublished === 'string') return record.datePublished;
        if (record['@graph']) queue.push(record['@graph']);
      }
    }
  }
  return null;
}

/** An ISO 8601 instant, or null for text that is not a date. */
function isoDate(text: string | null | undefined): string | null {
  if (!text) return null;
  const time = Date.parse(text);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function absolute(url: string | null, base: string): string | null {
  if (!url) return null;
  try {
    const resolved = new URL(url, base);
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.href : null;
  } catch {
    return null;
  }
}

/** The article of the page at `url`, or null when Readability finds none (a home page, a login form). */
export function extractArticle(html: string, url: string): Article | null {
  const { document } = parseHTML(html);
  const publishedAt =
    isoDate(meta(document, 'article:published_time', 'og:published_time', 'date', 'dc.date')) ??
    isoDate(jsonLdPublished(document)) ??
    isoDate(document.querySelector('time[datetime]')?.getAttribute('datetime'));
  const lang = document.documentElement?.getAttribute('lang')?.trim() || null;
  const leadImage = absolute(meta(document, 'og:image', 'og:image:url', 'twitter:image'), url);
  // linkedom has no document URL: a <base> is how Readability learns where relative links point.
  for (const element of document.querySelectorAll('base')) element.remove();
  const base = document.createElement('base');
  base.setAttribute('href', url);
  (document.head ?? document.documentElement)?.prepend(base);
  const parsed = new Readability(document).parse();
  const text = parsed?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
  if (!parsed?.content || text.length < 50) return null;
  return {
    title: (parsed.title ?? '').trim() || meta(document, 'og:title') || text.slice(0, 80),
    byline: parsed.byline?.replace(/^by\s+/i, '').trim() || null,
    published_at: publishedAt ?? isoDate(parsed.publishedTime),
    lang: lang ?? parsed.lang ?? null,
    lead_image_url: leadImage,
    excerpt: (parsed.excerpt ?? '').replace(/\s+/g, ' ').trim().slice(0, 500),
    content: parsed.content,
    text_length: text.length,
  };
}
