// SEO: an algorithmic review of a text or a post (core/seo/analyze.ts),
// and SEO text written by a job (core/seo/generate-text.ts). Anyone who
// reaches the site may ask (content:read; jobs:write for the job); applying
// the text to an item needs the right to change it, checked by the domain.
import { z } from 'zod';
import { atLeastOneOf } from '../../core/field-rules.ts';
import { analyzeSeo, seoReportSchema } from '../../core/seo/analyze.ts';
import { seoInputOf } from '../../core/seo/input.ts';
import { generateTextBody, seoTextSubmission } from '../../core/seo/generate-text.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/seo/analyze',
    description:
      'Reviews a text for search: title and meta description lengths, one h1 and heading order, the focus `keyword` in the title, ' +
      'slug, first paragraph and subheadings and its density, length and readability (Flesch for English, Amstad for German, LIX ' +
      'otherwise), links, images without alt text, the slug. Send `post_id` to review a post (its seo title and description when ' +
      'set), or the text itself. Answers a score (100 less 15 an error and 6 a warning) and every finding with where it is.',
    access: { site: 'read', scope: 'content:read' },
    request: {
      params: siteParams,
      body: z
        .strictObject({
          post_id: z.uuid().optional().describe('A post of the site to review; the other fields then override its own'),
          title: z.string().max(1000).optional(),
          description: z.string().max(5000).optional().describe('The meta description'),
          slug: z.string().max(500).optional(),
          body: z.string().max(1_000_000).optional(),
          body_format: z.enum(['html', 'markdown']).optional().describe('Default html'),
          keyword: z.string().trim().min(1).max(100).optional().describe('The focus keyword or phrase'),
          locale: z
            .string()
            .min(2)
            .max(35)
            .optional()
            .describe('The text’s language; default the post’s or the site’s'),
        })
        .refine((body) => body.post_id !== undefined || body.title !== undefined, {
          message: 'Send post_id, or the title and body to review.',
          path: ['title'],
        })
        .meta(atLeastOneOf('post_id', 'title')),
    },
    responses: { 200: { description: 'The review', schema: seoReportSchema } },
    async handler({ body }, { db, access }) {
      return { body: analyzeSeo(await seoInputOf(db, access, body)) };
    },
  }),
  defineRoute({
    key: 'POST /{site_identifier}/seo/generatetext',
    description:
      'Writes an SEO `title` (≤ 60 characters), `meta_description` (≤ 155) or `alt_text` (≤ 125) for a post, a page (its title and ' +
      'the text of its elements), a media item or a `text` sent, as a text job paid per 1,000 tokens. With a language model named in TEXT_PROVIDERS a ' +
      'model writes it. Without one, an algorithm does what it honestly can: the title from the item’s title, else its first ' +
      'heading or sentence, with the `keyword` put in front when it lacks it, cut at a word boundary; the meta description from the ' +
      'first sentences; alt text from the media item’s own caption or title — an image with neither fails with ' +
      'text_provider_not_configured and charges nothing. The job’s output has the `text`, and `source`: `model` or `local`. With ' +
      '`apply`, the text is saved into the post’s or page’s `seo.title` / `seo.description` or the media item’s `alt` when the job ' +
      'settles; that needs the right to change the item (authors their own; service accounts content:write or media:write).',
    access: { site: 'read', scope: ['jobs:write', 'content:read'] },
    idempotent: true,
    request: { params: siteParams, body: generateTextBody, headers: preferHeader },
    responses: jobResponses,
    async handler({ body }, context, { req }) {
      const submission = await seoTextSubmission(context.db, context.access, body, context.services.config.providers);
      return submitAndAnswer(context, req.get('prefer'), submission);
    },
  }),
];
