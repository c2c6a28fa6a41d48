// Public pages: published pages of public sites in the locale asked. A page
// and its translations are one group; the group is served by its best
// translation in the fallback chain, else by its master. A page reads with
// its elements (resolved in the same locale) in one query, their references
// to the depth asked; the navigation is the published tree, each node in the
// locale served, a node whose parent is not public left out with its subtree.
import { z } from 'zod';
import { wantedLocale } from './locales.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { after, pageQuery, toPage } from '../pagination.ts';
import { notPublic } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { seoSchema } from './pages.ts';
import { chainCte, maxDepth, publicElementSchema, toPublicElements, type Serialized, type Tagged } from './public.ts';

export const publicPageSchema = z
  .object({
    id: z.uuid(),
    parent_id: z.uuid().nullable(),
    position: z.number().int(),
    slug: z.string(),
    path: z.string(),
    title: z.string(),
    served_locale: z.string(),
    seo: seoSchema,
    template: z.string().nullable(),
    published_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PublicPage' });

export const publicPageWithElementsSchema = publicPageSchema
  .extend({
    elements: z
      .array(
        z.object({
          area: z.string(),
          position: z.number().int(),
          settings: z.record(z.string(), z.unknown()),
          element: publicElementSchema,
        }),
      )
      .describe('Published elements placed on the page, by area then position'),
  })
  .meta({ id: 'PublicPageWithElements' });

type PublicPage = z.infer<typeof publicPageSchema>;

const pageRow = publicPageSchema.extend({
  group_id: z.uuid(),
  parent_group: z.uuid().nullable(),
  created_at: timestamp,
});

/** The best published page of every group in the chain's locale, as `best`. */
const bestPages = (site: Site) => sql.fragment`
  best as (
    select distinct on (coalesce(p.master_id, p.id))
      p.id, p.parent_id, p.position, p.slug, p.path, p.title, p.locale as served_locale, p.seo, p.template,
      p.published_at, p.updated_at, p.created_at, coalesce(p.master_id, p.id) as group_id,
      (select coalesce(pp.master_id, pp.id) from pages pp where pp.id = p.parent_id) as parent_group
    from pages p left join chain c on c.locale = p.locale
    where p.site_id = ${site.id} and p.status = 'published'
    order by coalesce(p.master_id, p.id), coalesce(c.rank, 1000), (p.master_id is null) desc
  )`;

const toPublicPage = (row: z.infer<typeof pageRow>): PublicPage => publicPageSchema.parse(row);

export const publicPageQuery = pageQuery.extend({
  locale: wantedLocale,
  path: z.string().max(4000).optional().describe('The page at this path, in the locale served'),
  parent_id: z.uuid().optional().describe('Only the children of this page'),
});

export async function listPublicPages(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  query: z.infer<typeof publicPageQuery>,
): Promise<Tagged<{ items: PublicPage[]; next_cursor: string | null }>> {
  const conditions = [
    after(query, 'b'),
    ...(query.path ? [sql.fragment`b.path = ${query.path}`] : []),
    ...(query.parent_id
      ? [
          sql.fragment`b.parent_group = (select coalesce(master_id, id) from pages where id = ${query.parent_id} and site_id = ${site.id})`,
        ]
      : []),
  ];
  const rows = await db.any(sql.type(pageRow)`
    with ${chainCte(chain)}, ${bestPages(site)}
    select * from best b where ${sql.join(conditions, sql.fragment` and `)}
    order by b.created_at, b.id limit ${query.limit + 1}`);
  const page = await toPage(rows, query);
  return {
    body: { items: page.items.map(toPublicPage), next_cursor: page.next_cursor },
    tags: [`site:${site.id}`, `pages:${site.id}`],
  };
}

/**
 * public_page's row (db/migrations/0020): the page with its elements as the
 * answer's JSON text, the tags of what it shows, and the fields of the
 * elements that refer to others. Prepared once per connection: planned each
 * time, the statement costs more to plan than to run.
 */
const publicPageRow = z.object({
  group_id: z.uuid(),
  body: z.string(),
  tags: z.string().nullable(),
  linking: z.record(z.uuid(), z.object({ type_id: z.uuid(), fields: z.array(z.any()) })).nullable(),
});
const publicPageStatement = (site: Site, page: string, chain: string[]) =>
  sql.prepared(
    'public_page',
    publicPageRow,
  )`select * from public_page(${site.id}, ${page}, ${sql.array(chain, 'text')})`;

type PageWithElements = z.infer<typeof publicPageWithElementsSchema>;

/**
 * The page with its published elements, resolved in the chain's locale: one
 * query for the page and its elements, answered as the database wrote it;
 * then, when elements hold references or media and `depth` asks for them,
 * one query per level, and the answer is rewritten with what they point at.
 */
export async function readPublicPage(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  id: string,
  depth: number,
): Promise<Tagged<PageWithElements> | Serialized> {
  const row = await db.maybeOne(publicPageStatement(site, id, chain));
  if (!row) throw notPublic();
  const tags = new Set([`site:${site.id}`, `page:${row.group_id}`, `pages:${site.id}`]);
  for (const tag of row.tags?.split(' ') ?? []) tags.add(tag);
  const linking = row.linking ?? {};
  if (depth === 0 || Object.keys(linking).length === 0) return { json: row.body, tags: [...tags] };
  const body = JSON.parse(row.body) as PageWithElements;
  const slots = body.elements.filter((slot) => slot.element.id in linking);
  const resolved = await toPublicElements(
    db,
    site,
    chain,
    slots.map(({ element }) => ({
      ...element,
      ...linking[element.id]!,
      created_at: element.published_at,
    })),
    Math.min(depth, maxDepth),
    tags,
  );
  const byId = new Map(resolved.map((element) => [element.id, element]));
  for (const slot of slots) slot.element = byId.get(slot.element.id) ?? slot.element;
  return { body, tags: [...tags] };
}

export type NavigationNode = {
  id: string;
  title: string;
  path: string;
  slug: string;
  served_locale: string;
  children: NavigationNode[];
};

export const navigationNodeSchema: z.ZodType<NavigationNode> = z
  .object({
    id: z.uuid(),
    title: z.string(),
    path: z.string(),
    slug: z.string(),
    served_locale: z.string(),
    get children() {
      return z.array(navigationNodeSchema);
    },
  })
  .meta({ id: 'NavigationNode' });

/** The published tree in the chain's locale: one query, nested here, siblings by position. */
export async function publicNavigation(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
): Promise<Tagged<{ items: NavigationNode[] }>> {
  const rows = await db.any(sql.type(pageRow)`
    with ${chainCte(chain)}, ${bestPages(site)}
    select * from best order by position, id`);
  const nodes = new Map<string, NavigationNode & { parent: string | null }>();
  for (const row of rows)
    nodes.set(row.group_id, {
      id: row.id,
      title: row.title,
      path: row.path,
      slug: row.slug,
      served_locale: row.served_locale,
      children: [],
      parent: row.parent_group,
    });
  const top: NavigationNode[] = [];
  for (const node of nodes.values()) {
    if (node.parent === null) top.push(node);
    else nodes.get(node.parent)?.children.push(node);
  }
  // Only what hangs from the top is reachable; a node under an unpublished parent stays out.
  const strip = (node: NavigationNode & { parent?: unknown }): NavigationNode => ({
    id: node.id,
    title: node.title,
    path: node.path,
    slug: node.slug,
    served_locale: node.served_locale,
    children: node.children.map(strip),
  });
  return { body: { items: top.map(strip) }, tags: [`site:${site.id}`, `pages:${site.id}`] };
}
