// The jobs that write posts, as submitted: from a URL, from a PDF, a recrawl
// of an imported post, and a transform by the text provider. Access first:
// authors may import (the post will be theirs); a recrawl or a transform
// changes the post, so it needs the right to change it, as PATCH does
// (authors their own, editors and admins all). What each job reserves:
// url_import one item (the page fetched); pdf_import the pages it may read;
// text the tokens of the post, in and out, at four characters a token.
import { z } from 'zod';
import { textPlan } from '../providers/plan.ts';
import type { ProvidersConfig } from '../providers/settings.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { requireSiteLocale } from '../content/locales.ts';
import { Problem, conflict } from '../errors.ts';
import type { Submission } from '../jobs/submit.ts';
import { generationPromptTypes, promptForJob } from '../system-prompts/for-jobs.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { locale } from '../tenancy/sites.ts';
import { requireOwnPost } from './post-writes.ts';
import { findPost } from './posts.ts';

export const fromUrlBody = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL' })
    .max(2000)
    .describe('The page; fetched by the job, never from a private, local or reserved address'),
  locale: locale.optional().describe('Default: the page’s language when the site has it, else the site’s default'),
  import_lead_image: z
    .boolean()
    .default(false)
    .describe('Import the page’s lead image (og:image) into the media library as the featured image'),
  status: z.literal('draft').default('draft').describe('Imported posts start as drafts'),
});

export const transformOperations = ['summarize', 'rewrite', 'shorten', 'expand', 'title_excerpt'] as const;
export const transformLengths = ['short', 'medium', 'long'] as const;

export const transformBody = z.strictObject({
  operation: z
    .enum(transformOperations)
    .describe('title_excerpt writes the title and excerpt; the others write the body'),
  tone: z.string().trim().min(1).max(100).optional().describe('For rewrite: e.g. friendly, formal'),
  length: z.enum(transformLengths).optional().describe('How long the result should be'),
  apply: z
    .boolean()
    .default(true)
    .describe(
      'Save the result into the post (the previous content kept as a version); false: only on the job’s output',
    ),
});

/** Form fields of a PDF upload, beside the file. */
export const fromPdfFields = z.strictObject({
  locale: locale.optional(),
  title: z.string().trim().min(1).max(300).optional().describe('Default: the PDF’s title, else its first heading'),
  max_pages: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe('Most pages to read (and credits to reserve); default and ceiling PDF_MAX_PAGES'),
});

/** Four characters a token: the estimate the text job is reserved and, without a provider's count, charged by. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

export function fromUrlSubmission({ site }: SiteAccess, body: z.output<typeof fromUrlBody>): Submission {
  if (body.locale) requireSiteLocale(site, body.locale);
  return {
    kind: 'url_import',
    input: {
      mode: 'create',
      url: body.url,
      import_lead_image: body.import_lead_image,
      ...(body.locale ? { locale: body.locale } : {}),
    },
    estimatedUnits: 1,
  };
}

export function fromPdfSubmission(
  config: Config,
  { site }: SiteAccess,
  file: { key: string; fileName: string },
  fields: z.output<typeof fromPdfFields>,
): Submission {
  if (fields.locale) requireSiteLocale(site, fields.locale);
  const maxPages = fields.max_pages ?? config.pdf.maxPages;
  if (maxPages > config.pdf.maxPages)
    throw new Problem(422, `At most ${config.pdf.maxPages} pages are read.`, {
      errors: [{ path: 'body.max_pages', message: `must be at most ${config.pdf.maxPages}` }],
    });
  return {
    kind: 'pdf_import',
    input: {
      file_key: file.key,
      file_name: file.fileName.replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 255) || 'upload.pdf',
      max_pages: maxPages,
      ...(fields.locale ? { locale: fields.locale } : {}),
      ...(fields.title ? { title: fields.title } : {}),
    },
    estimatedUnits: maxPages,
  };
}

/** A post the caller may change (404 / 403 otherwise), as PATCH decides. */
async function changeablePost(db: CommonQueryMethods, access: SiteAccess, id: string) {
  const post = await findPost(db, access.site.id, id);
  requireOwnPost(access, post);
  return post;
}

export async function recrawlSubmission(db: CommonQueryMethods, access: SiteAccess, id: string): Promise<Submission> {
  const post = await changeablePost(db, access, id);
  if (post.source?.kind !== 'url')
    throw conflict(
      'The post was not imported from a URL (its source has no url of kind url): there is nothing to recrawl.',
    );
  return { kind: 'url_import', input: { mode: 'recrawl', post_id: post.id }, estimatedUnits: 1 };
}

export async function transformSubmission(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  body: z.output<typeof transformBody>,
  providers: ProvidersConfig,
): Promise<Submission> {
  const post = await changeablePost(db, access, id);
  const prompt = await promptForJob(db, generationPromptTypes.transform);
  // What goes in, and about as much again coming out (twice for expand); and the system prompt, once.
  const tokens =
    estimateTokens(post.title + post.excerpt + post.body) * (body.operation === 'expand' ? 3 : 2) +
    estimateTokens(prompt.system_prompt?.content ?? '');
  const plan = textPlan(providers, tokens);
  return {
    kind: 'text',
    input: { task: 'post_transform', post_id: post.id, ...body, ...prompt, providers: plan?.calls },
    estimatedUnits: Math.max(1, Math.ceil(tokens / 1000)),
    plan,
  };
}
