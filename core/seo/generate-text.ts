// POST /{site}/seo/generatetext, as submitted: an SEO title, a meta
// description or an alt text for a post, a page, a media item or a text
// sent, made by a text job (worker/jobs/text.ts, task seo_text). Reading is
// open to whoever may analyze (the route); `apply` writes the result into the
// item, so it needs the right to change that item, as its PATCH decides
// (authors their own; service accounts the kind's write scope). What the
// job reads is read again when it runs (./generate-text.ts seoSourceOf), so
// an edit made meanwhile is what it writes about.
import { z } from 'zod';
import { planField, textPlan } from '../providers/plan.ts';
import type { ProvidersConfig } from '../providers/settings.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { requireSiteLocale } from '../content/locales.ts';
import { exactlyOneOf } from '../field-rules.ts';
import { findPage } from '../content/pages.ts';
import { Problem } from '../errors.ts';
import { requireScope } from '../identity/access.ts';
import type { Submission } from '../jobs/submit.ts';
import { requireOwnChange } from '../media/access.ts';
import { findMedia } from '../media/library.ts';
import { estimateTokens } from '../posts/post-jobs.ts';
import { requireOwnPost } from '../posts/post-writes.ts';
import { findPost } from '../posts/posts.ts';
import { generationPromptTypes, jobSystemPromptSchema, promptForJob } from '../system-prompts/for-jobs.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';

export const seoTextKinds = ['title', 'meta_description', 'alt_text'] as const;
export type SeoTextKind = (typeof seoTextKinds)[number];

/** The longest each is made: what search results show of a title and a description, and what screen readers read comfortably. */
export const seoTextLimits: Record<SeoTextKind, number> = { title: 60, meta_description: 155, alt_text: 125 };

/** The text cut to `max` characters at a word boundary, with an ellipsis when cut: how a text is held to its limit, written locally or by a model. */
export function fitAtWord(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  const room = clean.slice(0, max - 1);
  const space = room.lastIndexOf(' ');
  // A single word longer than a third of the room is cut inside rather than leaving almost nothing.
  const cut = space > max / 3 ? room.slice(0, space) : room;
  return `${cut.replace(/[\s,;:.–—-]+$/u, '')}…`;
}

const sources = ['post_id', 'page_id', 'media_id', 'text'] as const;

export const generateTextBody = z
  .strictObject({
    kind: z.enum(seoTextKinds).describe('title (≤ 60 characters), meta_description (≤ 155) or alt_text (≤ 125)'),
    post_id: z.uuid().optional().describe('A post of the site to write it for'),
    page_id: z.uuid().optional().describe('A page of the site (its title and the text of its elements)'),
    media_id: z.uuid().optional().describe('A media item of the site: for alt_text'),
    text: z.string().trim().min(1).max(100_000).optional().describe('Or the text itself (Markdown or plain)'),
    keyword: z.string().trim().min(1).max(100).optional().describe('The focus keyword, kept in front of a title'),
    locale: z.string().min(2).max(35).optional().describe('The language to write in; default the item’s or the site’s'),
    apply: z
      .boolean()
      .default(false)
      .describe(
        'Write the result into the item: a post’s or page’s seo.title / seo.description, a media item’s alt (needs the right to change it)',
      ),
  })
  .superRefine((body, context) => {
    const given = sources.filter((name) => body[name] !== undefined);
    if (given.length !== 1)
      context.addIssue({
        code: 'custom',
        path: ['post_id'],
        message: 'send exactly one of post_id, page_id, media_id, text',
      });
    if (body.kind === 'alt_text' && body.media_id === undefined)
      context.addIssue({ code: 'custom', path: ['media_id'], message: 'alt_text is written for a media item' });
    if (body.kind !== 'alt_text' && body.media_id !== undefined)
      context.addIssue({ code: 'custom', path: ['kind'], message: 'a media item takes alt_text' });
    if (body.apply && body.text !== undefined)
      context.addIssue({ code: 'custom', path: ['apply'], message: 'a text sent has nowhere to be applied' });
  })
  .meta({
    ...exactlyOneOf(...sources),
    // alt_text is written for a media item, and a media item takes only alt_text; a text sent is not applied.
    allOf: [
      { if: { required: ['media_id'] }, then: { required: ['kind'], properties: { kind: { const: 'alt_text' } } } },
      { if: { required: ['kind'], properties: { kind: { const: 'alt_text' } } }, then: { required: ['media_id'] } },
      { if: { required: ['text'] }, then: { properties: { apply: { const: false } } } },
    ],
  });

export type GenerateTextBody = z.output<typeof generateTextBody>;

/** What the job is given. */
export const seoTextJobInput = z.object({
  task: z.literal('seo_text'),
  kind: z.enum(seoTextKinds),
  post_id: z.uuid().optional(),
  page_id: z.uuid().optional(),
  media_id: z.uuid().optional(),
  text: z.string().optional(),
  keyword: z.string().optional(),
  locale: z.string().optional(),
  apply: z.boolean(),
  system_prompt: jobSystemPromptSchema.optional(),
  providers: planField,
});
export type SeoTextJobInput = z.output<typeof seoTextJobInput>;

/** What the text is written from: a title, a body to read headings and sentences from, and a media item's words. */
export type SeoSource = {
  item: { kind: 'post' | 'page' | 'media'; id: string } | null;
  title: string | null;
  body: string;
  format: 'html' | 'markdown';
  locale: string;
  media?: { kind: string; alt: string | null; title: string | null; caption: string | null; tags: string[] };
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`);

/**
 * A page's text is in its elements: their string values in slot order, as
 * one HTML body (a value that is already HTML, rich text, as it is; one
 * whose field reads like a heading, as a heading), so pages are read as
 * posts are.
 */
async function pageBody(db: CommonQueryMethods, pageId: string): Promise<string> {
  const rows = await db.anyFirst(sql.type(z.object({ data: z.record(z.string(), z.unknown()) }))`
    select e.data from page_elements pe join content_elements e on e.id = pe.element_id
    where pe.page_id = ${pageId} order by pe.area, pe.position`);
  const parts: string[] = [];
  for (const data of rows)
    for (const [name, value] of Object.entries(data)) {
      if (typeof value !== 'string' || !value.trim()) continue;
      if (/^\s*</.test(value)) parts.push(value);
      else if (/head|title|name/.test(name)) parts.push(`<h2>${escapeHtml(value)}</h2>`);
      else parts.push(`<p>${escapeHtml(value)}</p>`);
    }
  return parts.join('\n');
}

/** The source as it is now; 404 for an item not in the site. */
export async function seoSourceOf(
  db: CommonQueryMethods,
  site: { id: string; default_locale: string },
  input: Pick<SeoTextJobInput, 'post_id' | 'page_id' | 'media_id' | 'text' | 'locale'>,
): Promise<SeoSource> {
  if (input.post_id) {
    const post = await findPost(db, site.id, input.post_id);
    return {
      item: { kind: 'post', id: post.id },
      title: post.title,
      body: post.body,
      format: post.body_format,
      locale: input.locale ?? post.locale,
    };
  }
  if (input.page_id) {
    const page = await findPage(db, site.id, input.page_id);
    return {
      item: { kind: 'page', id: page.id },
      title: page.title,
      body: await pageBody(db, page.id),
      format: 'html',
      locale: input.locale ?? page.locale,
    };
  }
  if (input.media_id) {
    const media = await findMedia(db, site.id, input.media_id);
    return {
      item: { kind: 'media', id: media.id },
      title: null,
      body: '',
      format: 'markdown',
      locale: input.locale ?? site.default_locale,
      media: { kind: media.kind, alt: media.alt, title: media.title, caption: media.caption, tags: media.tags },
    };
  }
  return {
    item: null,
    title: null,
    body: input.text ?? '',
    format: 'markdown',
    locale: input.locale ?? site.default_locale,
  };
}

/** 403 unless the caller may change the item, as its PATCH decides. */
async function requireChange(db: CommonQueryMethods, access: SiteAccess, body: GenerateTextBody): Promise<void> {
  if (body.post_id) {
    requireScope(access.actor, 'content:write');
    requireOwnPost(access, await findPost(db, access.site.id, body.post_id));
  } else if (body.page_id) {
    requireScope(access.actor, 'content:write');
    requireOwnChange(access, (await findPage(db, access.site.id, body.page_id)).created_by, 'the pages they made');
  } else if (body.media_id) {
    requireScope(access.actor, 'media:write');
    requireOwnChange(access, (await findMedia(db, access.site.id, body.media_id)).created_by, 'the media they added');
  }
}

export async function seoTextSubmission(
  db: CommonQueryMethods,
  access: SiteAccess,
  body: GenerateTextBody,
  providers: ProvidersConfig,
): Promise<Submission> {
  if (body.locale) requireSiteLocale(access.site, body.locale);
  // Reading the media item is media:read (the route asks content:read).
  if (body.media_id) requireScope(access.actor, 'media:read');
  const source = await seoSourceOf(db, access.site, body);
  if (body.apply) await requireChange(db, access, body);
  if (source.media && source.media.kind !== 'image')
    throw new Problem(422, 'Alt text is for images.', {
      errors: [{ path: 'body.media_id', message: 'is not an image' }],
    });
  const prompt = await promptForJob(db, generationPromptTypes.seo);
  // What goes in (the system prompt too), and the short answer coming out.
  const given = (source.title ?? '') + source.body + JSON.stringify(source.media ?? {});
  const tokens = estimateTokens(given + (prompt.system_prompt?.content ?? '')) + 200;
  const { apply, kind, keyword, locale, post_id, page_id, media_id, text } = body;
  const plan = textPlan(providers, tokens);
  return {
    kind: 'text',
    input: {
      ...Object.fromEntries(
        Object.entries({ task: 'seo_text', kind, post_id, page_id, media_id, text, keyword, locale, apply }).filter(
          ([, value]) => value !== undefined,
        ),
      ),
      ...prompt,
      providers: plan?.calls,
    },
    estimatedUnits: Math.max(1, Math.ceil(tokens / 1000)),
    plan,
  };
}
