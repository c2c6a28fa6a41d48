// Public posts: the published posts of public sites, without a token, in the
// locale asked. A post and its translations are one group, served by its best
// published translation in the site's fallback chain, else by its master (as
// pages are). Newest first, in cursor pages, by tag or category; one post by
// any of its group's ids or by slug. Markdown is rendered here and the result
// sanitised like stored HTML, so a body never carries a script either way.
import { marked } from 'marked';
import { z } from 'zod';
import { wantedLocale } from '../content/locales.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { sanitizeRichText } from '../content/data.ts';
import { seoSchema } from '../content/pages.ts';
import { chainCte, type Tagged } from '../content/public.ts';
import { pageQuery, type Page } from '../pagination.ts';
import { sortedPage } from '../sorting.ts';
import { notPublic } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';

export const publicPostSummarySchema = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    title: z.string(),
    excerpt: z.string(),
    served_locale: z.string().describe('The locale the post was served in, after the fallback chain'),
    author_name: z.string().nullable(),
    tags: z.array(z.string()),
    categories: z.array(z.string()),
    featured_media_id: z.uuid().nullable(),
    seo: seoSchema,
    published_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PublicPostSummary' });

export const publicPostSchema = publicPostSummarySchema
  .extend({ body_html: z.string().describe('The body as HTML: Markdown rendered, then sanitised') })
  .meta({ id: 'PublicPost' });

type PublicPost = z.infer<typeof publicPostSchema>;
type Summary = z.infer<typeof publicPostSummarySchema>;

const servedRow = publicPostSummarySchema.extend({
  group_id: z.uuid(),
  body: z.string(),
  body_format: z.enum(['markdown', 'html']),
  created_at: timestamp,
});
type ServedRow = z.infer<typeof servedRow>;

/** A post as served, from `posts p` joined to the chain `c` and the author `u` (servedFrom). */
const servedColumns = sql.fragment`p.id, p.slug, p.title, p.excerpt, p.locale as served_locale, u.full_name as author_name,
  p.tags, p.categories, p.featured_media_id, p.seo, p.published_at, p.updated_at, p.created_at, p.body, p.body_format,
  coalesce(p.master_id, p.id) as group_id`;
const servedFrom = sql.fragment`posts p left join chain c on c.locale = p.locale left join users u on u.id = p.author_id`;
/** Within a group: the chain's best-ranked locale first, then the master. */
const bestFirst = sql.fragment`coalesce(c.rank, 1000), (p.master_id is null) desc`;

/** The best published post of every group of the site in the chain's locale, as `served`. */
const served = (site: Site, chain: string[]) => sql.fragment`
  with ${chainCte(chain)},
  served as (
    select distinct on (coalesce(p.master_id, p.id)) ${servedColumns}
    from ${servedFrom}
    where p.site_id = ${site.id} and p.status = 'published'
    order by coalesce(p.master_id, p.id), ${bestFirst}
  )`;

const renderBody = (row: ServedRow) =>
  sanitizeRichText(row.body_format === 'markdown' ? marked.parse(row.body, { async: false }) : row.body);

const summaryOf = ({
  group_id: _group,
  body: _body,
  body_format: _format,
  created_at: _created,
  ...summary
}: ServedRow) => summary satisfies Summary;

const tagsOf = (site: Site, rows: readonly ServedRow[]) => [
  `site:${site.id}`,
  `posts:${site.id}`,
  ...rows.map((row) => `post:${row.group_id}`),
  ...rows.flatMap((row) => (row.featured_media_id ? [`media:${row.featured_media_id}`] : [])),
];

export const publicPostQuery = pageQuery.extend({
  locale: wantedLocale,
  tag: z.string().max(100).optional(),
  category: z.string().max(100).optional(),
});

const newestFirst = { published_at: { column: 'published_at', cast: 'timestamptz' } } as const;

export async function listPublicPosts(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  query: z.infer<typeof publicPostQuery>,
): Promise<Tagged<Page<Summary>>> {
  const conditions = [
    sql.fragment`true`,
    ...(query.tag ? [sql.fragment`s.tags @> array[${query.tag}]::text[]`] : []),
    ...(query.category ? [sql.fragment`s.categories @> array[${query.category}]::text[]`] : []),
  ];
  const matching = sql.fragment`${served(site, chain)}
    select * from served s where ${sql.join(conditions, sql.fragment` and `)}`;
  const page = await sortedPage(db, servedRow, matching, 's', newestFirst, { ...query, sort: '-published_at' });
  return { body: { ...page, items: page.items.map(summaryOf) }, tags: tagsOf(site, page.items) };
}

/** A published post by any id of its group, or by slug (the chain's best-ranked locale that has it), in the chain's locale. */
export async function readPublicPost(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  idOrSlug: string,
): Promise<Tagged<PublicPost>> {
  const byId = z.uuid().safeParse(idOrSlug).success;
  // The group by the post named (a slug in the best-ranked locale that has it), then its members by two index lookups.
  const row = await db.maybeOne(sql.type(servedRow)`
    with ${chainCte(chain)},
    grp (id) as (
      select coalesce(p.master_id, p.id) from posts p left join chain c on c.locale = p.locale
      where p.site_id = ${site.id} and p.status = 'published'
        and ${byId ? sql.fragment`p.id = ${idOrSlug}` : sql.fragment`p.slug = ${idOrSlug}`}
      order by coalesce(c.rank, 1000) limit 1)
    select ${servedColumns} from ${servedFrom}, grp
    where (p.id = grp.id or p.master_id = grp.id) and p.status = 'published'
    order by ${bestFirst} limit 1`);
  if (!row) throw notPublic();
  return { body: { ...summaryOf(row), body_html: renderBody(row) }, tags: tagsOf(site, [row]) };
}
