// What a post transform can do honestly without a language model:
// - summarize: an extractive summary. Sentences are scored by how frequent
//   their words are in the whole text (common function words left out, the
//   score divided by the sentence's length so long sentences do not win by
//   size), and the best are kept in their original order.
// - title_excerpt: the title from the first heading, else the first
//   sentence; the excerpt from the first sentences of the body.
// Rewriting, shortening and expanding need a model: the job says which
// setting to configure (worker/jobs/post_transform.ts).
import type { Block } from './blocks.ts';

export const summaryLengths = { short: 2, medium: 4, long: 7 } as const;
export type SummaryLength = keyof typeof summaryLengths;

// Words too common to say what a text is about (English, German, French, Spanish): left out of the scores.
const stopWords = new Set(
  (
    'a an and are as at be been but by for from has have he her his i if in into is it its of on or our she so than that the ' +
    'their them then there these they this to was we were what when which who will with would you your not no can do does ' +
    'der die das und ist ein eine zu den von mit sich des auf für im dem nicht le la les un une et est des du en que qui ' +
    'el los las y es por con para'
  ).split(' '),
);

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The sentences of a text, by the locale's rules (Intl.Segmenter). */
export function sentences(text: string, locale = 'en'): string[] {
  const segmenter = new Intl.Segmenter(locale, { granularity: 'sentence' });
  return [...segmenter.segment(text)].map((part) => part.segment.trim()).filter(Boolean);
}

export function extractiveSummary(blocks: Block[], count: number, locale?: string): string[] {
  const all = blocks.filter((block) => block.kind === 'paragraph').flatMap((block) => sentences(block.text, locale));
  if (all.length <= count) return all;
  const frequency = new Map<string, number>();
  for (const word of all.flatMap(words)) if (!stopWords.has(word)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const scored = all.map((sentence, index) => {
    const own = words(sentence);
    const sum = own.reduce((total, word) => total + (frequency.get(word) ?? 0), 0);
    return { index, score: own.length === 0 ? 0 : sum / Math.sqrt(own.length) };
  });
  const kept = new Set(
    [...scored]
      .sort((x, y) => y.score - x.score || x.index - y.index)
      .slice(0, count)
      .map((item) => item.index),
  );
  return all.filter((_, index) => kept.has(index));
}

const excerptSentences = 3;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);

export function titleAndExcerpt(blocks: Block[], locale?: string): { title: string; excerpt: string } | null {
  const heading = blocks.find((block) => block.kind === 'heading')?.text;
  const paragraphs = blocks
    .filter((block) => block.kind === 'paragraph')
    .flatMap((block) => sentences(block.text, locale));
  const title = heading ?? paragraphs[0];
  if (!title) return null;
  // The excerpt does not repeat the sentence the title was taken from.
  const rest = heading ? paragraphs : paragraphs.slice(1);
  let excerpt = '';
  for (const [index, sentence] of rest.entries()) {
    if (index === excerptSentences || (excerpt && excerpt.length + sentence.length > 300)) break;
    excerpt = excerpt ? `${excerpt} ${sentence}` : sentence;
  }
  return { title: clip(title, 120), excerpt: clip(excerpt, 500) };
}
