// SEO: an algorithmic review of a text or a post (core/seo/analyze.ts).
// Anyone who reaches the site may ask (content:read); nothing is stored.
import { z } from 'zod';
import { analyzeSeo, seoReportSchema } from '../../core/seo/analyze.ts';
import { seoInputOf } from '../../core/seo/input.ts';
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
        }),
    },
    responses: { 200: { description: 'The review', schema: seoReportSchema } },
    async handler({ body }, { db, access }) {
      return { body: analyzeSeo(await seoInputOf(db, access, body)) };
    },
  }),
];
