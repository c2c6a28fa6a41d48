// Pages: one tree per site. Everyone who reaches the site reads them
// (content:read); authors create pages and change the ones they made, editors
// and administrators (content:write) any. A page's `path` is its slugs from
// the top, stored and kept current: a new slug or a move rewrites the paths of
// the whole subtree in the same transaction. Every change to the tree runs
// under one lock per site, so two moves cannot cross into a cycle and
// positions among siblings stay 0..n-1 (unique at commit).
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { requireOwnChange } from '../media/access.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';
import type { PublicCache } from './public-cache.ts';
import { requireSiteLocale } from './locales.ts';
import { contentStatuses } from './status.ts';
import { recordVersion } from './content-versions.ts';

export const seoSchema = z
  .strictObject({
    title: z.string().max(300).optional(),
    description: z.string().max(1000).optional(),
    image_id: z.uuid().optional().describe('A media item of the site'),
    noindex: z.boolean().optional(),
  })
  .meta({ id: 'PageSeo' });

export const pageDraftSchema = z
  .object({
    title: z.string(),
    seo: seoSchema,
    template: z.string().nullable(),
    updated_at: timestamp,
    updated_by: z.uuid().nullable(),
  })
  .meta({ id: 'PageDraft' });

export const pageSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    parent_id: z.uuid().nullable(),
    position: z.number().int().describe('Among its siblings, from 0'),
    slug: z.string(),
    path: z.string().describe('Its slugs from the top, e.g. /about/team'),
    title: z.string(),
    locale: z.string(),
    master_id: z.uuid().nullable().describe('The page this one translates; null for a master'),
    status: z.enum(contentStatuses),
    published_at: timestamp.nullable(),
    seo: seoSchema,
    template: z.string().nullable(),
    version: z.number().int().describe('Raised by every change, the layout included; the ETag, for If-Match'),
    created_by: z.uuid().nullable(),
    updated_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    has_draft: z.boolean().describe('Whether a published page has changes not yet published (in `draft`)'),
    draft: pageDraftSchema
      .nullable()
      .describe(
        'A published page’s saved, unpublished title, seo and template; public delivery shows the live ones until they are ' +
          'published. Slug, parent, position and the elements placed are not drafted: they change the live page',
      ),
    publish_at: timestamp.nullable().describe('When the draft (or a draft-status page) is to be published'),
  })
  .meta({ id: 'Page' });

export type Page = z.infer<typeof pageSchema>;

export const pageColumns = sql.fragment`p.id, p.site_id, p.parent_id, p.position, p.slug, p.path, p.title, p.locale,
  p.master_id, p.status, p.published_at, p.seo, p.template, p.version, p.created_by, p.updated_by, p.created_at, p.updated_at,
  p.draft is not null as has_draft,
  case when p.draft is null then null
    else p.draft || jsonb_build_object('updated_at', api_time(p.draft_updated_at), 'updated_by', p.draft_updated_by) end as draft,
  p.publish_at`;

export const pageSlug = z
  .string()
  .max(200)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters, digits and single hyphens');

export async function findPage(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<Page> {
  const row = await db.maybeOne(sql.type(pageSchema)`
    select ${pageColumns} from pages p where p.id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
  if (!row || row.site_id !== siteId) throw notFound('No such page.');
  return row;
}

/** One change to a site's tree at a time: a move's cycle check must see every other move. */
export const lockTree = (db: CommonQueryMethods, siteId: string) =>
  db.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext('pages:' || ${siteId}))`);

export const pathTaken = (error: unknown): never => {
  if (error instanceof UniqueIntegrityConstraintViolationError) {
    if (error.constraint === 'pages_master_id_locale_key')
      throw conflict('The page already has a translation in that locale.');
    throw conflict('A sibling in that locale has the slug already (its path is taken).');
  }
  throw error;
};

export const pageListQuery = pageQuery.extend({
  parent_id: z
    .union([z.uuid(), z.literal('root')])
    .optional()
    .describe('Only the children of this page; `root` for top-level pages'),
  status: z.enum(contentStatuses).optional(),
  locale: z.string().max(35).optional(),
  path: z.string().max(4000).optional().describe('The page at this path'),
  q: z.string().max(200).optional().describe('Part of the title'),
  has_draft: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .describe('Only published pages with unpublished changes (true), or only those without (false)'),
});

export async function listPages(db: CommonQueryMethods, { site }: SiteAccess, query: z.infer<typeof pageListQuery>) {
  const conditions = [
    sql.fragment`p.site_id = ${site.id}`,
    ...(query.parent_id === 'root'
      ? [sql.fragment`p.parent_id is null`]
      : query.parent_id
        ? [sql.fragment`p.parent_id = ${query.parent_id}`]
        : []),
    ...(query.status ? [sql.fragment`p.status = ${query.status}`] : []),
    ...(query.locale ? [sql.fragment`p.locale = ${query.locale}`] : []),
    ...(query.path ? [sql.fragment`p.path = ${query.path}`] : []),
    ...(query.q ? [sql.fragment`p.title ilike ${containing(query.q)}`] : []),
    ...(query.has_draft === undefined ? [] : [sql.fragment`(p.draft is not null) = ${query.has_draft}`]),
  ];
  const matching = sql.fragment`select ${pageColumns} from pages p where ${sql.join(conditions, sql.fragment` and `)}`;
  const rows = await db.any(
    sql.type(pageSchema)`${matching} and ${after(query, 'p')} order by p.created_at, p.id limit ${query.limit + 1}`,
  );
  return toPage(rows, query, () => countOf(db, matching));
}

/** A page in the tree: what a tree view shows, not every column (GET the page for the rest). */
export type PageNode = Pick<
  Page,
  'id' | 'parent_id' | 'position' | 'slug' | 'path' | 'title' | 'locale' | 'master_id' | 'status'
> & { element_count: number; children: PageNode[] };

export const pageNodeSchema: z.ZodType<PageNode> = pageSchema
  .pick({
    id: true,
    parent_id: true,
    position: true,
    slug: true,
    path: true,
    title: true,
    locale: true,
    master_id: true,
    status: true,
  })
  .extend({
    element_count: z.number().int().describe('Elements placed on the page'),
    get children() {
      return z.array(pageNodeSchema);
    },
  })
  .meta({ id: 'PageNode' });

/**
 * The whole tree in one query, siblings by position, each page with its
 * element count, as the JSON text of `{"items": [...]}`. Read in the order
 * of the sibling index (no sort), without validating each of thousands of
 * rows again (the columns are the table's), nested here: building the JSON
 * in the database costs it more than the whole read.
 */
export async function pageTreeJson(db: CommonQueryMethods, { site }: SiteAccess): Promise<string> {
  const rows = (await db.any(sql.unsafe`
    select p.id, p.parent_id, p.position, p.slug, p.path, p.title, p.locale, p.master_id, p.status,
      coalesce(counts.n, 0)::int as element_count
    from pages p
    left join (select page_id, count(*) as n from page_elements where site_id = ${site.id} group by page_id) counts
      on counts.page_id = p.id
    where p.site_id = ${site.id}
    order by p.site_id, p.parent_id, p.position`)) as readonly Omit<PageNode, 'children'>[];
  const children = new Map<string | null, PageNode[]>();
  for (const row of rows) {
    const node: PageNode = { ...row, children: [] };
    const siblings = children.get(row.parent_id);
    if (siblings) siblings.push(node);
    else children.set(row.parent_id, [node]);
  }
  for (const siblings of children.values()) for (const node of siblings) node.children = children.get(node.id) ?? [];
  return JSON.stringify({ items: children.get(null) ?? [] });
}

export type PageInput = {
  parent_id?: string | null | undefined;
  position?: number | undefined;
  slug: string;
  title: string;
  locale?: string | undefined;
  master_id?: string | undefined;
  status: 'draft' | 'published';
  seo?: z.infer<typeof seoSchema> | undefined;
  template?: string | null | undefined;
};

/** A page of the site named in a body: 422 at that field otherwise. */
async function bodyPage(db: CommonQueryMethods, siteId: string, id: string, field: string): Promise<Page> {
  return findPage(db, siteId, id).catch(() => {
    throw new Problem(422, `${field} does not name a page of the site.`, {
      errors: [{ path: `body.${field}`, message: 'is not a page of the site' }],
    });
  });
}

/** An seo image that is a media item of the site: 422 otherwise. */
export async function requireSeoImage(
  db: CommonQueryMethods,
  siteId: string,
  seo: { image_id?: string | undefined } | undefined,
): Promise<void> {
  if (!seo?.image_id) return;
  const found = await db.exists(sql.type(z.object({}))`
    select 1 from media_items where id = ${seo.image_id} and site_id = ${siteId}`);
  if (!found)
    throw new Problem(422, 'seo.image_id is not a media item of the site.', {
      errors: [{ path: 'body.seo.image_id', message: 'is not a media item of the site' }],
    });
}

const siblingsOf = (siteId: string, parentId: string | null) =>
  parentId === null
    ? sql.fragment`site_id = ${siteId} and parent_id is null`
    : sql.fragment`site_id = ${siteId} and parent_id = ${parentId}`;

/** How many children a parent has (the position after the last). */
export const childCount = (db: CommonQueryMethods, siteId: string, parentId: string | null) =>
  db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from pages where ${siblingsOf(siteId, parentId)}`);

/** Makes room at `position` among a parent's children (or closes the gap it leaves, with `by` -1). */
export const shiftSiblings = (
  db: CommonQueryMethods,
  siteId: string,
  parentId: string | null,
  from: number,
  by: 1 | -1,
) =>
  db.query(sql.typeAlias('void')`
    update pages set position = position + ${by} where ${siblingsOf(siteId, parentId)} and position >= ${from}`);

export async function createPage(db: CommonQueryMethods, access: SiteAccess, input: PageInput): Promise<Page> {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    await lockTree(tx, site.id);
    const parent = input.parent_id ? await bodyPage(tx, site.id, input.parent_id, 'parent_id') : null;
    const master = input.master_id ? await bodyPage(tx, site.id, input.master_id, 'master_id') : null;
    if (master?.master_id) throw masterProblem();
    const locale = input.locale ?? site.default_locale;
    requireSiteLocale(site, locale);
    if (master && master.locale === locale)
      throw new Problem(422, 'A translation is in another locale than its master.', {
        errors: [{ path: 'body.locale', message: 'is the master’s locale' }],
      });
    await requireSeoImage(tx, site.id, input.seo);
    const parentId = parent?.id ?? null;
    const count = await childCount(tx, site.id, parentId);
    const position = Math.min(input.position ?? count, count);
    await shiftSiblings(tx, site.id, parentId, position, 1);
    const userId = actorUserId(actor);
    const created = await tx
      .one(
        sql.type(pageSchema)`
        insert into pages as p (tenant_id, site_id, parent_id, position, slug, path, title, locale, master_id, status,
                                published_at, seo, template, created_by, updated_by)
        values (${site.tenant_id}, ${site.id}, ${parentId}, ${position}, ${input.slug}, ${`${parent?.path ?? ''}/${input.slug}`},
                ${input.title}, ${locale}, ${master?.id ?? null}, ${input.status},
                ${input.status === 'published' ? sql.fragment`now()` : null}, ${sql.jsonb((input.seo ?? {}) as never)},
                ${input.template ?? null}, ${userId}, ${userId})
        returning ${pageColumns}`,
      )
      .catch(pathTaken);
    const content = { title: created.title, seo: created.seo, template: created.template };
    const place = { kind: 'page' as const, id: created.id, tenantId: site.tenant_id, siteId: site.id };
    await recordVersion(tx, place, input.status === 'published' ? 'publish' : 'save', content, userId);
    return created;
  });
}

const masterProblem = () =>
  new Problem(422, 'master_id names a translation; name its master.', {
    errors: [{ path: 'body.master_id', message: 'is not a master page' }],
  });

export type PageChanges = {
  title?: string | undefined;
  slug?: string | undefined;
  status?: (typeof contentStatuses)[number] | undefined;
  seo?: z.infer<typeof seoSchema> | undefined;
  template?: string | null | undefined;
  /** A time to publish at (the draft, or a draft-status page); null cancels it. */
  publish_at?: string | null | undefined;
};

/** Rewrites the paths of a page and everything below it, from its own new path. */
export async function rewritePaths(db: CommonQueryMethods, pageId: string, oldPath: string, newPath: string) {
  if (oldPath === newPath) return;
  await db.query(sql.typeAlias('void')`
    with recursive subtree (id) as (
      select ${pageId}::uuid
      union all
      select p.id from pages p join subtree s on p.parent_id = s.id
    )
    update pages p set path = ${newPath} || substr(p.path, ${oldPath.length + 1})
    from subtree s where p.id = s.id`);
}

export async function deletePage(db: CommonQueryMethods, access: SiteAccess, id: string, recursive: boolean) {
  const { site } = access;
  await db.transaction(async (tx) => {
    await lockTree(tx, site.id);
    const page = await findPage(tx, site.id, id, true);
    requireOwnChange(access, page.created_by, 'the pages they made');
    const children = await childCount(tx, site.id, id);
    if (children > 0 && !recursive)
      throw new Problem(409, `The page has ${children} child page(s); pass recursive=true to delete them with it.`, {
        type: '/problems/page-has-children',
        title: 'Page has children',
        extensions: { child_count: children },
      });
    await tx.query(sql.typeAlias('void')`
      with recursive subtree (id) as (
        select ${id}::uuid
        union all
        select p.id from pages p join subtree s on p.parent_id = s.id
      )
      delete from pages where id in (select id from subtree)`);
    await shiftSiblings(tx, site.id, page.parent_id, page.position + 1, -1);
  });
}

/**
 * The tree, from the content cache when it has it: editors' screens ask for
 * it again and again, and it changes only when a page or a layout of the site
 * does (tags `pages:` and `tree:`, announced by every such write), which drops
 * it in every process.
 */
export async function cachedPageTree(db: CommonQueryMethods, access: SiteAccess, cache: PublicCache): Promise<Buffer> {
  const { site } = access;
  const key = `tree ${site.id}`;
  const hit = await cache.get(key);
  if (hit) return hit.body;
  const generation = cache.generation;
  const body = Buffer.from(await pageTreeJson(db, access));
  const tags = [`site:${site.id}`, `pages:${site.id}`, `tree:${site.id}`];
  await cache.set(key, { body, etag: '', tags, surrogateKey: '' }, generation);
  return body;
}
