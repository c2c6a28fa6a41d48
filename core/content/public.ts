// Public content: published elements and pages of public sites, served in
// the locale asked through the site's fallback chain, inside the query: per
// item (the best translation the chain has, else the master) and per
// localized field (a translation's empty field falls back to the next locale
// that has it). Each answer says which locale it served and carries the tags
// of what it shows, for the cache and for CDNs (Surrogate-Key).
import { z } from 'zod';
import { wantedLocale } from './locales.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { mediaColumns, mediaItemSchema } from '../media/items.ts';
import { toPublic } from '../media/public.ts';
import { after, pageQuery, toPage } from '../pagination.ts';
import { notPublic } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';
import { fieldFilters } from './elements.ts';
import type { Field } from './fields.ts';
import { collectIds, replaceIds } from './walk.ts';

export const maxDepth = 3;

export const publicElementSchema = z
  .object({
    id: z.uuid(),
    type: z.string().describe('The content type’s api_id'),
    name: z.string(),
    served_locale: z.string().describe('The locale the item was served in, after the fallback chain'),
    data: z.record(z.string(), z.unknown()).describe('With references and media resolved to the depth asked'),
    published_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PublicContentElement' });

export type PublicElement = z.infer<typeof publicElementSchema>;

/** What an answer shows, as cache tags and Surrogate-Key entries. */
export type Tagged<T> = { body: T; tags: string[] };
/** An answer the database wrote as JSON text already: sent as it is, never parsed and written again. */
export type Serialized = { json: string; tags: string[] };

const resolvedRow = z.object({
  id: z.uuid(),
  type_id: z.uuid(),
  type: z.string(),
  fields: z.array(z.any()),
  name: z.string(),
  served_locale: z.string(),
  data: z.record(z.string(), z.unknown()),
  published_at: timestamp,
  created_at: timestamp,
  updated_at: timestamp,
});
type ResolvedRow = z.infer<typeof resolvedRow>;

/** The chain as a relation (locale, rank), first the most wanted. */
const chainCte = (chain: string[]) =>
  sql.fragment`chain (locale, rank) as (select locale, rank from unnest(${sql.array(chain, 'text')}::text[]) with ordinality as c (locale, rank))`;

/**
 * The published master `m` in the chain's locale, as columns: its type, and
 * `r.served_locale`, `r.data` worked out from the master and its published
 * translations, each field from the best-ranked one that has it
 * (chain_data, db/migrations/0020, over the locales public_elements keeps, 0021).
 */
const resolvedColumns = sql.fragment`m.id, m.type_id, t.api_id as type, t.fields, m.name, r.served_locale, r.data,
  m.published_at, m.created_at, m.updated_at`;
const resolvedFrom = (chain: string[], source = sql.fragment`content_elements m`) => {
  const locales = sql.array(chain, 'text');
  return sql.fragment`
    ${source}
    join content_types t on t.id = m.type_id
    left join public_elements l on l.master_id = m.id
    cross join lateral (
      select chain_locale(l.localized, ${locales}, m.locale) as served_locale, chain_data(m.data, l.localized, ${locales}) as data
    ) r`;
};

/** Published masters by id (a translation's id names its master), resolved, in the order of the ids. */
async function resolvedByIds(db: CommonQueryMethods, site: Site, chain: string[], ids: string[]) {
  if (ids.length === 0) return [];
  return db.any(sql.type(resolvedRow)`
    select ${resolvedColumns} from ${resolvedFrom(chain)}
    where m.id in (select coalesce(x.master_id, x.id) from content_elements x where x.id = any(${sql.array(ids, 'uuid')}))
      and m.site_id = ${site.id} and m.status = 'published'`);
}

const publicMedia = (db: CommonQueryMethods, site: Site, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.any(sql.type(mediaItemSchema)`
        select ${mediaColumns} from media_items
        where id = any(${sql.array(ids, 'uuid')}) and site_id = ${site.id} and status = 'ready'`);

/**
 * The rows as public elements, their reference and media fields replaced by
 * what they point at (published elements, ready media), `depth` levels deep:
 * one query per level and kind, however many elements.
 */
export async function toPublicElements(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  rows: readonly ResolvedRow[],
  depth: number,
  tags: Set<string>,
): Promise<PublicElement[]> {
  for (const row of rows) tags.add(`element:${row.id}`).add(`type:${row.type_id}`);
  const plain = (row: ResolvedRow): PublicElement => ({
    id: row.id,
    type: row.type,
    name: row.name,
    served_locale: row.served_locale,
    data: row.data,
    published_at: row.published_at,
    updated_at: row.updated_at,
  });
  if (depth === 0) return rows.map(plain);
  const found = { elements: new Set<string>(), media: new Set<string>() };
  for (const row of rows) collectIds(row.fields as Field[], row.data, found);
  // Every id is tagged, published or not: its publication must drop this answer too.
  for (const id of found.elements) tags.add(`element:${id}`);
  for (const id of found.media) tags.add(`media:${id}`);
  const [referenced, media] = await Promise.all([
    resolvedByIds(db, site, chain, [...found.elements]),
    publicMedia(db, site, [...found.media]),
  ]);
  const nested = await toPublicElements(db, site, chain, referenced, depth - 1, tags);
  const byId = new Map<string, unknown>(nested.map((element) => [element.id, element]));
  const mediaById = new Map<string, unknown>(media.map((item) => [item.id, toPublic(item)]));
  return rows.map((row) => ({
    ...plain(row),
    data: replaceIds(row.fields as Field[], row.data, { elements: byId, media: mediaById }),
  }));
}

export const publicElementQuery = pageQuery
  .extend({
    locale: wantedLocale,
    type: z.string().max(100).optional().describe('A content type’s api_id'),
    depth: z.coerce.number().int().min(0).max(maxDepth).default(1).describe('How deep references are resolved'),
  })
  .catchall(z.union([z.string().max(1000), z.array(z.string().max(1000)).max(20)]))
  .describe('Field filters as on the admin list (`filter[field]=value`, `filter[field][op]`), on the values served');

const typeFields = z.object({ id: z.uuid(), fields: z.array(z.any()) });

/** `filter[field]=value` (and `in`) as a containment test any row of the group must pass: an index lookup. */
function containmentFilters(query: Record<string, unknown>, fields: readonly Field[]) {
  const tests: ReturnType<typeof sql.fragment>[] = [];
  for (const [key, raw] of Object.entries(query)) {
    const match = /^filter\[([a-z][a-z0-9_]*)\](?:\[(eq|in)\])?$/.exec(key);
    const field = match && fields.find((candidate) => candidate.id === match[1]);
    if (!field || Array.isArray(raw)) continue;
    const numeric = field.type === 'integer' || field.type === 'number';
    const values = (match[2] === 'in' ? String(raw).split(',') : [String(raw)]).map((value) =>
      numeric ? Number(value) : field.type === 'boolean' ? value === 'true' : value,
    );
    tests.push(
      sql.fragment`(${sql.join(
        values.map((value) => sql.fragment`x.data @> ${JSON.stringify({ [field.id]: value })}::jsonb`),
        sql.fragment` or `,
      )})`,
    );
  }
  return tests;
}

/** Published elements of the site in the chain's locale; with a type, filtered by served field values. */
export async function listPublicElements(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  query: z.infer<typeof publicElementQuery>,
): Promise<Tagged<{ items: PublicElement[]; next_cursor: string | null }>> {
  const type = query.type
    ? await db.maybeOne(sql.type(typeFields)`
        select id, fields from content_types where site_id = ${site.id} and api_id = ${query.type}`)
    : null;
  if (query.type && !type)
    throw new Problem(422, 'No such content type in the site.', {
      errors: [{ path: 'query.type', message: 'is not a content type of the site' }],
    });
  const fields = type?.fields as Field[] | undefined;
  const filters = fieldFilters(query, fields, 'r');
  // With an equality filter, the rows that can match come from the GIN index (masters, and masters of the
  // translations that match), in order, and are resolved one by one until the page is full: the cost
  // follows the matches, not the type's size. The filters are checked again on the values served.
  // One pass over the index's matches, a translation taking its master's place (and order): two passes
  // joined as a union made PostgreSQL AND the matches with every translation of the table (measured on
  // the bench's 100,000 products, a colour held by 2 %: 7.0 -> 3.6 ms a query).
  const [driver] = type && fields ? containmentFilters(query, fields) : [];
  const key = driver ? 'h' : 'm';
  const source = driver
    ? sql.fragment`(
        select distinct c.id, c.created_at from (
          select coalesce(x.master_id, x.id) as id,
            case when x.master_id is null then x.created_at
              else (select p.created_at from content_elements p where p.id = x.master_id and p.status = 'published')
            end as created_at
          from content_elements x
          where x.type_id = ${type!.id} and (x.master_id is not null or x.status = 'published') and ${driver}
          offset 0
        ) c
        where c.created_at is not null
        -- Sorted apart (OFFSET 0 keeps it so): rows are then fetched and resolved only until the page is full.
        order by 2, 1 offset 0
      ) h join content_elements m on m.id = h.id`
    : sql.fragment`content_elements m`;
  const conditions = [
    sql.fragment`m.site_id = ${site.id}`,
    sql.fragment`m.master_id is null`,
    sql.fragment`m.status = 'published'`,
    ...(type ? [sql.fragment`m.type_id = ${type.id}`] : []),
    ...filters,
    after(query, key),
  ];
  const rows = await db.any(sql.type(resolvedRow)`
    select ${resolvedColumns} from ${resolvedFrom(chain, source)}
    where ${sql.join(conditions, sql.fragment` and `)}
    order by ${sql.identifier([key, 'created_at'])}, ${sql.identifier([key, 'id'])} limit ${query.limit + 1}`);
  const tags = new Set([`site:${site.id}`, type ? `type:${type.id}` : `elements:${site.id}`]);
  const page = await toPage(rows, query);
  const items = await toPublicElements(db, site, chain, page.items, query.depth, tags);
  return { body: { items, next_cursor: page.next_cursor }, tags: [...tags] };
}

export async function readPublicElement(
  db: CommonQueryMethods,
  site: Site,
  chain: string[],
  id: string,
  depth: number,
): Promise<Tagged<PublicElement>> {
  const [row] = await resolvedByIds(db, site, chain, [id]);
  if (!row) throw notPublic();
  const tags = new Set([`site:${site.id}`, `element:${id}`]);
  const [element] = await toPublicElements(db, site, chain, [row], depth, tags);
  return { body: element!, tags: [...tags] };
}

export const publicReferencesSchema = z
  .object({
    pages: z.array(z.object({ id: z.uuid(), title: z.string(), path: z.string(), locale: z.string() })),
    elements: z.array(z.object({ id: z.uuid(), type: z.string(), name: z.string() })),
  })
  .meta({ id: 'PublicElementReferences' });

/** Published pages that place the element and published elements that refer to it. */
export async function publicReferences(
  db: CommonQueryMethods,
  site: Site,
  id: string,
): Promise<Tagged<z.infer<typeof publicReferencesSchema>>> {
  const master = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    select coalesce(master_id, id) as id from content_elements
    where id = ${id} and site_id = ${site.id} and status = 'published'`);
  if (!master) throw notPublic();
  const group = sql.fragment`select id from content_elements where id = ${master} or master_id = ${master}`;
  const [pages, elements] = await Promise.all([
    db.any(sql.type(publicReferencesSchema.shape.pages.element)`
      select distinct p.id, p.title, p.path, p.locale from page_elements pe join pages p on p.id = pe.page_id
      where pe.element_id in (${group}) and p.status = 'published' order by p.path, p.id`),
    db.any(sql.type(publicReferencesSchema.shape.elements.element)`
      select distinct e.id, t.api_id as type, e.name
      from content_element_links l
      join content_elements src on src.id = l.element_id
      join content_elements e on e.id = coalesce(src.master_id, src.id)
      join content_types t on t.id = e.type_id
      where l.target_id in (${group}) and e.status = 'published' and e.id <> ${master}
      order by e.name, e.id`),
  ]);
  const tags = [`site:${site.id}`, `element:${master}`, `pages:${site.id}`, `elements:${site.id}`];
  return { body: { pages: [...pages], elements: [...elements] }, tags };
}

export const publicTypeSchema = z
  .object({
    api_id: z.string(),
    name: z.string(),
    description: z.string(),
    fields: z.array(z.record(z.string(), z.unknown())).describe('As ContentField'),
    version: z.number().int(),
    updated_at: timestamp,
  })
  .meta({ id: 'PublicContentType' });

export async function listPublicTypes(db: CommonQueryMethods, site: Site) {
  const items = await db.any(sql.type(publicTypeSchema)`
    select api_id, name, description, fields, version, updated_at from content_types
    where site_id = ${site.id} order by api_id`);
  return { body: { items: [...items] }, tags: [`site:${site.id}`, `types:${site.id}`] };
}

export { chainCte };
