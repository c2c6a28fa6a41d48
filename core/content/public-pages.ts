// Public pages: published pages of public sites in the locale asked. A page
// and its translations are one group; the group is served by its best
// translation in the fallback chain, else by its master. A page reads with
// its elements (resolved in the same locale) in one query, their references
// to the depth asked; the navigation is the published tree, each node in the
// locale served, a node whose parent is not public left out with its subtree.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { after, pageQuery, toPage } from '../pagination.ts';
import { notPublic } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { seoSchema } from './pages.ts';
import {
  chainCte,
  maxDepth,
  publicElementSchema,
  toPublicElements,
  type PublicElement,
  type Tagged,
} from './public.ts';

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
  locale: z.string().max(35).optional().describe('The locale wanted; the site’s fallback chain applies'),
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

/** public_page's one row (db/migrations/0012): the page, its slots as JSON, the fields of the types that link. */
const publicPageRow = publicPageSchema.extend({
  group_id: z.uuid(),
  elements: z.array(z.any()),
  linking_types: z.record(z.string(), z.array(z.any())),
});

type Slot = {
  area: string;
  position: number;
  settings: Record<string, unknown>;
  type_id: string;
  element: PublicElement;
};

/**
 * The page (by its own id or any of its group's) with its published elements,
 * resolved in the chain's locale: one query for the page and its elements,
 * then, for elements whose types hold references or media, one per level.
 */
export async function readPublicPage(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  id: string,
  depth: number,
): Promise<Tagged<z.infer<typeof publicPageWithElementsSchema>>> {
  const row = await db.maybeOne(sql.type(publicPageRow)`
    select * from public_page(${site.id}, ${id}, ${sql.array(chain, 'text')})`);
  if (!row) throw notPublic();
  const tags = new Set([`site:${site.id}`, `page:${row.group_id}`, `pages:${site.id}`]);
  const slots = row.elements as Slot[];
  for (const slot of slots) tags.add(`element:${slot.element.id}`).add(`type:${slot.type_id}`);
  const linking = slots.filter((slot) => slot.type_id in row.linking_types);
  if (depth > 0 && linking.length) {
    const resolved = await toPublicElements(
      db,
      site,
      chain,
      linking.map((slot) => ({
        ...slot.element,
        type_id: slot.type_id,
        fields: row.linking_types[slot.type_id]!,
        created_at: slot.element.published_at,
      })),
      Math.min(depth, maxDepth),
      tags,
    );
    const byId = new Map(resolved.map((element) => [element.id, element]));
    for (const slot of linking) slot.element = byId.get(slot.element.id) ?? slot.element;
  }
  return {
    body: {
      ...publicPageSchema.parse(row),
      elements: slots.map(({ area, position, settings, element }) => ({ area, position, settings, element })),
    },
    tags: [...tags],
  };
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
