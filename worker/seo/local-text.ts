// What SEO text an algorithm writes honestly, from the content's own words:
// - title: the item's title, else its first heading, else its first
//   sentence; the focus keyword put in front when the title lacks it; cut
//   at a word boundary to fit (the keyword in front survives the cut).
// - meta description: the first sentences of the body's paragraphs, as many
//   as fit, else the first cut at a word boundary.
// - alt text: a media item's own caption or title, when it has one; an image
//   without words needs a model to look at it (the job says which setting).
import { fitAtWord, seoTextLimits, type SeoSource, type SeoTextKind } from '../../core/seo/generate-text.ts';
import { textBlocks } from '../posts/blocks.ts';
import { sentences } from '../posts/local-transforms.ts';

const capitalise = (text: string) => text.charAt(0).toLocaleUpperCase() + text.slice(1);

export function localTitle(source: SeoSource, keyword: string | undefined): string | null {
  const blocks = textBlocks(source.body, source.format);
  const heading = blocks.find((block) => block.kind === 'heading')?.text;
  const firstSentence = sentences(blocks.find((block) => block.kind === 'paragraph')?.text ?? '', source.locale)[0];
  const title = (source.title?.trim() || heading || firstSentence)?.replace(/[.!?]+$/u, '');
  if (!title) return null;
  const max = seoTextLimits.title;
  if (!keyword || title.toLocaleLowerCase().includes(keyword.toLocaleLowerCase())) return fitAtWord(title, max);
  const front = `${capitalise(keyword)}: `;
  return front.length >= max - 10 ? fitAtWord(keyword, max) : front + fitAtWord(title, max - front.length);
}

export function localDescription(source: SeoSource): string | null {
  const max = seoTextLimits.meta_description;
  const all = textBlocks(source.body, source.format)
    .filter((block) => block.kind === 'paragraph')
    .flatMap((block) => sentences(block.text, source.locale));
  if (all.length === 0) return null;
  let description = '';
  for (const sentence of all) {
    const next = description ? `${description} ${sentence}` : sentence;
    if (next.length > max) break;
    description = next;
  }
  return description || fitAtWord(all[0]!, max);
}

export function localAltText(source: SeoSource): string | null {
  const words = source.media?.caption?.trim() || source.media?.title?.trim();
  return words ? fitAtWord(words, seoTextLimits.alt_text) : null;
}

export function writeLocally(kind: SeoTextKind, source: SeoSource, keyword: string | undefined): string | null {
  if (kind === 'title') return localTitle(source, keyword);
  if (kind === 'meta_description') return localDescription(source);
  return localAltText(source);
}
