// An SEO review without a model: lengths of the title and meta description,
// the headings (one h1, no skipped level), the focus keyword where readers
// and search engines look first (title, slug, first paragraph, subheadings)
// and how dense it is, the length and readability of the text
// (./readability.ts), links, images without alt text, and the slug. Every
// finding says where it is; the score starts at 100 and loses 15 an error
// and 6 a warning. Lengths follow what search results show (about 60
// characters of a title, 160 of a description).
import { z } from 'zod';
import { readDocument } from './document.ts';
import { readability, wordsOf } from './readability.ts';

export const findingSchema = z
  .object({
    severity: z.enum(['error', 'warning', 'info']),
    code: z.string().describe('Stable, e.g. title_too_long'),
    message: z.string(),
    where: z.string().describe('title, description, slug, keyword, or body with the element: body.h2[1], body.img[3]'),
  })
  .meta({ id: 'SeoFinding' });

export const seoReportSchema = z
  .object({
    score: z.number().int().min(0).max(100),
    findings: z.array(findingSchema),
    metrics: z.object({
      title_length: z.number().int(),
      description_length: z.number().int(),
      words: z.number().int(),
      headings: z.array(z.object({ level: z.number().int(), text: z.string() })),
      keyword_occurrences: z.number().int().nullable(),
      keyword_density: z.number().nullable().describe('Percent of the words that are the keyword'),
      readability: z.object({
        method: z.enum(['flesch', 'amstad', 'lix']),
        score: z.number(),
        level: z.enum(['easy', 'fair', 'difficult']),
      }),
      links: z.object({ internal: z.number().int(), external: z.number().int() }),
      images: z.number().int(),
      images_without_alt: z.number().int(),
    }),
  })
  .meta({ id: 'SeoReport' });

export type SeoInput = {
  title: string;
  description: string;
  slug: string | null;
  body: string;
  bodyFormat: 'html' | 'markdown';
  keyword: string | null;
  locale: string;
};

type Finding = z.infer<typeof findingSchema>;

const contains = (text: string, phrase: string) => text.toLocaleLowerCase().includes(phrase.toLocaleLowerCase());

/** How often the phrase's words stand together in `words`. */
function occurrences(words: string[], phrase: string[]): number {
  let found = 0;
  for (let i = 0; i + phrase.length <= words.length; i++)
    if (phrase.every((word, j) => words[i + j]!.toLocaleLowerCase() === word.toLocaleLowerCase())) found++;
  return found;
}

export function analyzeSeo(input: SeoInput): z.infer<typeof seoReportSchema> {
  const findings: Finding[] = [];
  const add = (severity: Finding['severity'], code: string, where: string, message: string) =>
    findings.push({ severity, code, message, where });
  const document = readDocument(input.body, input.bodyFormat);
  const words = wordsOf(document.text);
  const title = input.title.trim();
  const description = input.description.trim();

  if (!title) add('error', 'title_missing', 'title', 'There is no title.');
  else if (title.length < 30)
    add(
      'warning',
      'title_too_short',
      'title',
      `The title has ${title.length} characters; 30–60 use the space results give.`,
    );
  else if (title.length > 60)
    add(
      'warning',
      'title_too_long',
      'title',
      `The title has ${title.length} characters; results cut it after about 60.`,
    );
  if (!description)
    add(
      'warning',
      'description_missing',
      'description',
      'There is no meta description; results will show a snippet of the text.',
    );
  else if (description.length < 70)
    add(
      'warning',
      'description_too_short',
      'description',
      `The meta description has ${description.length} characters; 70–160 is usual.`,
    );
  else if (description.length > 160)
    add(
      'warning',
      'description_too_long',
      'description',
      `The meta description has ${description.length} characters; results cut it after about 160.`,
    );

  const h1 = document.headings.filter((heading) => heading.level === 1);
  if (h1.length > 1)
    add('warning', 'several_h1', 'body.h1[2]', `The text has ${h1.length} h1 headings; one names the page.`);
  if (h1.length === 0) add('info', 'no_h1', 'body', 'The text has no h1: the template should show the title as one.');
  document.headings.forEach((heading, index) => {
    const previous = document.headings[index - 1]?.level ?? 1;
    // Where: the how-manieth heading of its level.
    const nth = document.headings.slice(0, index + 1).filter((other) => other.level === heading.level).length;
    if (heading.level > previous + 1)
      add(
        'warning',
        'heading_skipped',
        `body.h${heading.level}[${nth}]`,
        `h${heading.level} “${heading.text}” follows h${previous}: a level is skipped.`,
      );
  });

  let keywordOccurrences: number | null = null;
  let density: number | null = null;
  const keyword = input.keyword?.trim();
  if (keyword) {
    const phrase = wordsOf(keyword);
    keywordOccurrences = occurrences(words, phrase);
    density = words.length ? Math.round(((keywordOccurrences * phrase.length) / words.length) * 1000) / 10 : 0;
    if (!contains(title, keyword))
      add('warning', 'keyword_not_in_title', 'title', `The title does not contain “${keyword}”.`);
    if (input.slug !== null && !contains(input.slug, phrase.join('-')))
      add(
        'warning',
        'keyword_not_in_slug',
        'slug',
        `The slug does not contain “${phrase.join('-').toLocaleLowerCase()}”.`,
      );
    if (!contains(document.firstParagraph, keyword))
      add(
        'warning',
        'keyword_not_in_first_paragraph',
        'body.p[1]',
        `The first paragraph does not mention “${keyword}”.`,
      );
    if (!document.headings.some((heading) => heading.level > 1 && contains(heading.text, keyword)))
      add('info', 'keyword_not_in_subheadings', 'body', `No subheading mentions “${keyword}”.`);
    if (keywordOccurrences === 0) add('error', 'keyword_missing', 'keyword', `The text never uses “${keyword}”.`);
    else if (density < 0.5)
      add(
        'warning',
        'keyword_density_low',
        'keyword',
        `“${keyword}” is ${density}% of the words; 0.5–3% reads natural.`,
      );
    else if (density > 3)
      add(
        'warning',
        'keyword_stuffing',
        'keyword',
        `“${keyword}” is ${density}% of the words; over 3% reads as stuffing.`,
      );
  }

  if (words.length < 300)
    add('warning', 'thin_content', 'body', `The text has ${words.length} words; under 300 rarely ranks.`);
  const read = readability(document.text, input.locale);
  if (words.length > 0 && read.level === 'difficult')
    add(
      'warning',
      'hard_to_read',
      'body',
      `The text is hard to read (${read.method} ${read.score}): shorter sentences and words help.`,
    );

  const external = document.links.filter((href) => /^[a-z][a-z0-9+.-]*:\/\//i.test(href) || href.startsWith('//'));
  if (document.links.length === 0)
    add('info', 'no_links', 'body', 'The text links nowhere; links to related pages help readers and crawlers.');
  const withoutAlt = document.images.map((image, index) => ({ ...image, index })).filter((image) => !image.alt?.trim());
  for (const image of withoutAlt)
    add(
      'warning',
      'image_without_alt',
      `body.img[${image.index + 1}]`,
      `The image ${image.src || '(no src)'} has no alt text.`,
    );

  if (input.slug !== null) {
    if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(input.slug))
      add('warning', 'slug_not_clean', 'slug', 'The slug should be lowercase words and digits joined by hyphens.');
    else if (input.slug.length > 75)
      add('warning', 'slug_too_long', 'slug', `The slug has ${input.slug.length} characters; short ones read better.`);
    else if (/^\d+(?:-\d+)*$/.test(input.slug))
      add('warning', 'slug_not_descriptive', 'slug', 'The slug is only numbers.');
  }

  const errors = findings.filter((finding) => finding.severity === 'error').length;
  const warnings = findings.filter((finding) => finding.severity === 'warning').length;
  return {
    score: Math.max(0, 100 - 15 * errors - 6 * warnings),
    findings,
    metrics: {
      title_length: title.length,
      description_length: description.length,
      words: words.length,
      headings: document.headings,
      keyword_occurrences: keywordOccurrences,
      keyword_density: density,
      readability: { method: read.method, score: read.score, level: read.level },
      links: { internal: document.links.length - external.length, external: external.length },
      images: document.images.length,
      images_without_alt: withoutAlt.length,
    },
  };
}
