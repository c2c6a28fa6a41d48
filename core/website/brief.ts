// POST /{site}/generate-website/, as submitted: a brief (the business, its
// audience and tone, the pages wanted, the locales, a few draft posts) that
// a website job (worker/jobs/website.ts) turns into content types, a page
// tree with elements, translations and draft posts. The copy it is written
// with — from templates or from the model — has one shape, checked by one
// schema (websiteCopySchema), whichever wrote it.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { siteLocales } from '../content/locales.ts';
import { Problem } from '../errors.ts';
import type { Submission } from '../jobs/submit.ts';
import { generationPromptTypes, jobSystemPromptSchema, promptForJob } from '../system-prompts/for-jobs.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';

const pageKey = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,39}$/, 'a page slug: lower-case letters, digits and hyphens, e.g. about');

export const defaultPages = ['home', 'about', 'services', 'contact'];

export const briefSchema = z
  .strictObject({
    business: z.string().trim().min(1).max(300).describe('What the business is and does, in its own words'),
    audience: z.string().trim().min(1).max(300).optional().describe('Who the site is for'),
    tone: z.string().trim().min(1).max(100).optional().describe('e.g. friendly, formal (the model follows it)'),
    pages: z
      .array(pageKey)
      .min(1)
      .max(10)
      .refine((keys) => new Set(keys).size === keys.length, 'each page once')
      .optional()
      .describe(
        'The pages wanted, as slugs (home, about, services, contact, blog have templates; others get a plain one). ' +
          `Default ${defaultPages.join(', ')}. home is always made, at the root; the others become its children, in this order.`,
      ),
    locales: z
      .array(z.string().min(2).max(35))
      .max(8)
      .optional()
      .describe(
        'Locales of the site to make the pages in; those other than the site’s default get copies to translate',
      ),
    posts: z.number().int().min(0).max(5).default(0).describe('Draft blog posts to write (0–5)'),
  })
  .meta({ id: 'WebsiteBrief' });

export type Brief = z.output<typeof briefSchema>;

/** What the job is given: the brief with its pages in order (home first) and the extra locales settled at submit. */
export const websiteJobInput = z.object({
  business: z.string(),
  audience: z.string().optional(),
  tone: z.string().optional(),
  pages: z.array(z.string()).min(1),
  extra_locales: z.array(z.string()),
  posts: z.number().int().min(0).max(5),
  system_prompt: jobSystemPromptSchema.optional(),
});
export type WebsiteJob = z.output<typeof websiteJobInput>;

const text = (max: number) => z.string().trim().min(1).max(max);

export const websiteCopySchema = z.object({
  pages: z
    .array(
      z.object({
        key: z.string(),
        title: text(200),
        hero: z.object({ headline: text(200), subheadline: text(1000), call_to_action: text(100) }).optional(),
        sections: z
          .array(z.object({ heading: text(200), body: text(5000) }))
          .min(1)
          .max(6),
        services: z
          .array(z.object({ name: text(200), description: text(2000) }))
          .max(8)
          .optional(),
      }),
    )
    .min(1),
  posts: z.array(z.object({ title: text(200), excerpt: text(300), body: text(20_000) })).max(5),
});
export type WebsiteCopy = z.output<typeof websiteCopySchema>;

export async function websiteSubmission(
  db: CommonQueryMethods,
  { site }: SiteAccess,
  brief: Brief,
): Promise<Submission> {
  const known = siteLocales(site);
  const unknown = (brief.locales ?? []).flatMap((locale, index) =>
    known.includes(locale)
      ? []
      : [{ path: `body.locales.${index}`, message: `must be one of the site’s locales: ${known.join(', ')}` }],
  );
  if (unknown.length) throw new Problem(422, 'The site does not have every locale asked for.', { errors: unknown });
  const pages = brief.pages ?? defaultPages;
  const input: WebsiteJob = {
    business: brief.business,
    ...(brief.audience ? { audience: brief.audience } : {}),
    ...(brief.tone ? { tone: brief.tone } : {}),
    pages: ['home', ...pages.filter((key) => key !== 'home')],
    extra_locales: [...new Set(brief.locales ?? [])].filter((locale) => locale !== site.default_locale),
    posts: brief.posts,
    ...(await promptForJob(db, generationPromptTypes.website)),
  };
  return { kind: 'website', input, estimatedUnits: 1 };
}
