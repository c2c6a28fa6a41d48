// Posts: a site's articles, read by everyone who reaches the site
// (content:read). Lists filter by status, locale, tag, category, author and
// text (title or excerpt), sorted, in cursor pages.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { pageQuery } from '../pagination.ts';
import { sortOptions, sortedPage, type SortKey } from '../sorting.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';
import { seoSchema } from '../content/pages.ts';

export const postStatuses = ['draft', 'scheduled', 'published', 'archived'] as const;
export type PostStatus = (typeof postStatuses)[number];
export const bodyFormats = ['markdown', 'html'] as const;

export const postSourceSchema = z
  .object({
    url: z.string(),
    kind: z.enum(['url', 'pdf']),
    fetched_at: timestamp.nullable(),
    etag: z.string().nullable(),
    last_modified: z
      .string()
      .nullable()
      .optional()
      .describe('The Last-Modified the page was served with, sent back as If-Modified-Since on a recrawl'),
    byline: z.string().nullable().optional().describe('Who the imported article names as its author'),
    published_at: timestamp
      .nullable()
      .optional()
      .describe('When the imported article says it was published (not when the post is)'),
  })
  .meta({ id: 'PostSource' });

export const postSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    title: z.string(),
    slug: z.string().describe('Unique in the site and locale'),
    excerpt: z.string(),
    body: z.string().describe('Markdown as written, or HTML as sanitised on the way in'),
    body_format: z.enum(bodyFormats),
    locale: z.string(),
    master_id: z.uuid().nullable().describe('The post this one translates; null for a master'),
    status: z.enum(postStatuses),
    published_at: timestamp.nullable(),
    scheduled_for: timestamp.nullable().describe('When a scheduled post publishes itself'),
    author_id: z.uuid().nullable(),
    tags: z.array(z.string()),
    categories: z.array(z.string()),
    featured_media_id: z.uuid().nullable(),
    seo: seoSchema,
    source: postSourceSchema.nullable().describe('Where the body was imported from; null for a post written here'),
    version: z.number().int().describe('Raised by every change; the ETag, for If-Match'),
    created_by: z.uuid().nullable(),
    updated_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Post' });

export type Post = z.infer<typeof postSchema>;
export type PostSource = z.infer<typeof postSourceSchema>;

export const postColumns = sql.fragment`p.id, p.site_id, p.title, p.slug, p.excerpt, p.body, p.body_format, p.locale,
  p.master_id, p.status, p.published_at, p.scheduled_for, p.author_id, p.tags, p.categories, p.featured_media_id,
  p.seo, p.source, p.version, p.created_by, p.updated_by, p.created_at, p.updated_at`;

export async function findPost(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<Post> {
  // By primary key; the site checked here, so another site's id is a 404 like an unknown one.
  const row = await db.maybeOne(sql.type(postSchema)`
    select ${postColumns} from posts p where p.id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
  if (!row || row.site_id !== siteId) throw notFound('No such post.');
  return row;
}

export const getPost = (db: CommonQueryMethods, { site }: SiteAccess, id: string) => findPost(db, site.id, id);

const sorts = {
  created_at: { column: 'created_at', cast: 'timestamptz' },
  updated_at: { column: 'updated_at', cast: 'timestamptz' },
  published_at: { column: 'published_at', cast: 'timestamptz' },
  title: { column: 'title', cast: 'text' },
} as const satisfies Record<string, SortKey>;

const sortNames = sortOptions(sorts);

export const postListQuery = pageQuery.extend({
  status: z.enum(postStatuses).optional(),
  locale: z.string().max(35).optional(),
  tag: z.string().max(100).optional().describe('Posts with this tag'),
  category: z.string().max(100).optional().describe('Posts in this category'),
  author_id: z.uuid().optional(),
  masters_only: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .describe('Only masters, not translations'),
  q: z.string().max(200).optional().describe('Part of the title or excerpt'),
  sort: z.enum(sortNames).default('created_at').describe('A field, `-` first for descending'),
});

export type PostListQuery = z.output<typeof postListQuery>;

export async function listPosts(db: CommonQueryMethods, { site }: SiteAccess, query: PostListQuery) {
  const conditions = [
    sql.fragment`p.site_id = ${site.id}`,
    ...(query.status ? [sql.fragment`p.status = ${query.status}`] : []),
    ...(query.locale ? [sql.fragment`p.locale = ${query.locale}`] : []),
    ...(query.tag ? [sql.fragment`p.tags @> array[${query.tag}]::text[]`] : []),
    ...(query.category ? [sql.fragment`p.categories @> array[${query.category}]::text[]`] : []),
    ...(query.author_id ? [sql.fragment`p.author_id = ${query.author_id}`] : []),
    ...(query.masters_only ? [sql.fragment`p.master_id is null`] : []),
    ...(query.q
      ? [sql.fragment`(p.title ilike ${containing(query.q)} or p.excerpt ilike ${containing(query.q)})`]
      : []),
  ];
  const matching = sql.fragment`select ${postColumns} from posts p where ${sql.join(conditions, sql.fragment` and `)}`;
  return sortedPage(db, postSchema, matching, 'p', sorts, query);
}
