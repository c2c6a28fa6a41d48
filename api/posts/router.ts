// Posts: a site's articles. Anyone who reaches the site reads them
// (content:read); authors write posts and change their own, editors and
// administrators (content:write) any.
import { z } from 'zod';
import { instant } from '../../core/timestamp.ts';
import { createPost, deletePost, updatePost } from '../../core/posts/post-writes.ts';
import { bodyFormats, getPost, listPosts, postListQuery, postSchema } from '../../core/posts/posts.ts';
import { seoSchema } from '../../core/content/pages.ts';
import { pageSchema } from '../../core/pagination.ts';
import { etagHeader, locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { ifMatchHeader, ifMatchVersion, noContent, siteParams, somethingToChange, versionTag } from '../schemas.ts';

export const postParams = siteParams.extend({ post_id: z.uuid() });
const read = { site: 'read', scope: 'content:read' } as const;
const write = { site: 'write', scope: 'content:write' } as const;
const withTag = { ETag: etagHeader };
const labels = z.array(z.string().trim().min(1).max(100)).max(50);

/** What a post's body may set, on create and on change. */
const postFields = {
  slug: z
    .string()
    .max(200)
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lowercase letters and digits, words joined by -')
    .optional()
    .describe('Unique in the site and locale; made from the title when not given'),
  excerpt: z.string().max(2000).optional(),
  body: z.string().max(1_000_000).optional(),
  body_format: z.enum(bodyFormats).optional().describe('markdown (default; stored as written) or html (sanitised)'),
  scheduled_for: instant.nullable().optional().describe('With status scheduled: when it publishes itself'),
  author_id: z.uuid().nullable().optional().describe('A member of the tenant; the caller by default'),
  tags: labels.optional(),
  categories: labels.optional(),
  featured_media_id: z.uuid().nullable().optional().describe('An image of the site'),
  seo: seoSchema.optional(),
};
const title = z.string().trim().min(1).max(300);

/** A new post (also the MCP tool create_post's, which writes drafts only). */
export const newPostBody = z.strictObject({
  title,
  ...postFields,
  locale: z.string().min(2).max(35).optional(),
  master_id: z.uuid().optional(),
  status: z.enum(['draft', 'scheduled', 'published']).default('draft'),
});

/** A change to a post (also the MCP tool update_post's, so it is made a change here, not by defineRoute). */
export const postChangesBody = somethingToChange(
  z.strictObject({
    title: title.optional(),
    ...postFields,
    status: z.enum(['draft', 'scheduled', 'published', 'archived']).optional(),
  }),
);

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/posts/',
    description:
      'The site’s posts. Filters: `status`, `locale`, `tag`, `category`, `author_id`, `masters_only`, `q` (part of the title or ' +
      'excerpt). `sort`: created_at, updated_at, published_at or title, `-` first for descending.',
    access: read,
    request: { params: siteParams, query: postListQuery },
    responses: { 200: { description: 'A page of posts', schema: pageSchema(postSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listPosts(db, access, query) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/posts/',
    description:
      'Writes a post in `locale` (default: the site’s). With `master_id`, a translation of that post, in another locale. ' +
      '`status: scheduled` with `scheduled_for` publishes it then. An HTML body is sanitised (scripts, styles, event handlers and ' +
      'javascript: URLs go); Markdown is kept as written.',
    access: write,
    request: {
      params: siteParams,
      body: newPostBody,
    },
    responses: {
      201: { description: 'The post', schema: postSchema, headers: { Location: locationHeader, ...withTag } },
      409: problemResponse('The slug is taken in that locale, or the master has a translation in that locale'),
    },
    async handler({ params, body }, { db, access }) {
      const post = await createPost(db, access, body);
      return {
        status: 201,
        body: post,
        headers: { Location: `/${params.site_identifier}/posts/${post.id}`, ETag: versionTag(post.version) },
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/posts/{post_id}',
    access: read,
    request: { params: postParams },
    responses: { 200: { description: 'The post', schema: postSchema, headers: withTag } },
    async handler({ params }, { db, access }) {
      const post = await getPost(db, access, params.post_id);
      return { body: post, headers: { ETag: versionTag(post.version) } };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/posts/{post_id}',
    description:
      'Changes what is given; the rest stays. Status: draft, scheduled (with `scheduled_for`, or the time it has), published, ' +
      'archived. `If-Match` with the ETag: 412 when someone saved first.',
    access: write,
    request: {
      params: postParams,
      headers: ifMatchHeader,
      body: postChangesBody,
    },
    responses: {
      200: { description: 'The post', schema: postSchema, headers: withTag },
      409: problemResponse('The slug is taken in that locale'),
      412: problemResponse('The post changed since the version in If-Match'),
    },
    async handler({ params, body }, { db, access }, { req }) {
      const post = await updatePost(db, access, params.post_id, body, ifMatchVersion(req.get('if-match')));
      return { body: post, headers: { ETag: versionTag(post.version) } };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/posts/{post_id}',
    description: 'Deletes the post and its translations.',
    access: write,
    request: { params: postParams },
    responses: { ...noContent('Deleted') },
    async handler({ params }, { db, access }) {
      await deletePost(db, access, params.post_id);
      return {};
    },
  }),
];
