// Public posts: a blog's reads, without a token, in the locale asked, cached
// and revalidated like the rest of public delivery (./answers.ts). Beyond the
// spec (api/extensions.tsv): a headless CMS whose posts cannot be read
// publicly is not usable for a blog.
import { z } from 'zod';
import { fallbackChain, wantedLocale } from '../../core/content/locales.ts';
import { pageSchema } from '../../core/pagination.ts';
import {
  listPublicPosts,
  publicPostQuery,
  publicPostSchema,
  publicPostSummarySchema,
  readPublicPost,
} from '../../core/posts/public-posts.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { cached, previewHeaders, publicAnswer } from './answers.ts';

export const routes = [
  defineRoute({
    key: 'GET /public/{site_identifier}/posts',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description:
      'Published posts, newest first, one per post and its translations, each in the best locale of the fallback chain ' +
      '(`served_locale` says which); `tag` and `category` filter. Without bodies: read a post for its `body_html`.',
    request: { params: siteParams, query: publicPostQuery, headers: previewHeaders },
    responses: cached('A page of posts', pageSchema(publicPostSummarySchema)),
    async handler({ query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        listPublicPosts(read, site, fallbackChain(site, query.locale), query),
      );
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/posts/{post}',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description:
      'A published post by its id (or a translation’s) or its slug, in the locale asked, its body as sanitised HTML ' +
      '(Markdown rendered).',
    request: {
      params: siteParams.extend({ post: z.string().min(1).max(200).describe('The post’s id or slug') }),
      query: z.object({ locale: wantedLocale }),
      headers: previewHeaders,
    },
    responses: cached('The post', publicPostSchema),
    async handler({ params, query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        readPublicPost(read, site, fallbackChain(site, query.locale), params.post),
      );
    },
  }),
];
