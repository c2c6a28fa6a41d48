// The media library of a site: find, read, describe, file into folders and
// delete media items. Everyone who reaches the site (service accounts with
// media:read) reads; authors change the items they made; editors, admins and
// media:write service accounts change any.
import { z } from 'zod';
import { instant } from '../timestamp.ts';
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import type { Deps } from '../services.ts';
import { removeFiles } from '../storage/index.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { requireUnreferenced } from './references.ts';
import { fileOf, type MediaFile, type ViewQuery } from './files.ts';
import { requireOwnChange, requireSiteFolder } from './access.ts';
import { deleteMediaRows, mediaColumns, mediaItemSchema, mediaKinds, type MediaItem } from './items.ts';

export const mediaFilters = z.object({
  folder_id: z
    .union([z.uuid(), z.literal('none')])
    .optional()
    .describe('Items in this folder; `none` for items in no folder'),
  kind: z.enum(mediaKinds).optional(),
  status: z.enum(['processing', 'ready', 'failed']).optional(),
  tag: z.string().trim().min(1).max(50).optional().describe('Items carrying this tag'),
  q: z.string().trim().min(1).max(200).optional().describe('Text in the title, alt text, caption or file name'),
  created_after: instant.optional(),
  created_before: instant.optional(),
});

export const mediaListQuery = pageQuery.extend(mediaFilters.shape);

const tags = z
  .array(z.string().trim().toLowerCase().min(1).max(50))
  .max(50)
  .transform((list) => [...new Set(list)]);

export const mediaChanges = z
  .strictObject({
    alt: z.string().trim().max(1000).optional(),
    title: z.string().trim().max(300).optional(),
    caption: z.string().trim().max(2000).optional(),
    tags: tags.optional(),
    focal_point: z
      .object({ x: z.number().min(0).max(1), y: z.number().min(0).max(1) })
      .nullable()
      .optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'Send at least one field to change.');

function filters(siteId: string, query: z.infer<typeof mediaFilters>) {
  const parts = [sql.fragment`media_items.site_id = ${siteId}`];
  if (query.folder_id === 'none') parts.push(sql.fragment`media_items.folder_id is null`);
  else if (query.folder_id) parts.push(sql.fragment`media_items.folder_id = ${query.folder_id}`);
  if (query.kind) parts.push(sql.fragment`media_items.kind = ${query.kind}`);
  if (query.status) parts.push(sql.fragment`media_items.status = ${query.status}`);
  if (query.tag) parts.push(sql.fragment`media_items.tags @> ${sql.array([query.tag.toLowerCase()], 'text')}`);
  if (query.q) {
    const pattern = containing(query.q);
    parts.push(sql.fragment`(media_items.title ilike ${pattern} or media_items.alt ilike ${pattern}
      or media_items.caption ilike ${pattern} or media_items.file_name ilike ${pattern})`);
  }
  if (query.created_after) parts.push(sql.fragment`media_items.created_at >= ${query.created_after}::timestamptz`);
  if (query.created_before) parts.push(sql.fragment`media_items.created_at < ${query.created_before}::timestamptz`);
  return sql.join(parts, sql.fragment` and `);
}

export async function listMedia(db: CommonQueryMethods, { site }: SiteAccess, query: z.infer<typeof mediaListQuery>) {
  const matching = sql.fragment`select ${mediaColumns} from media_items where ${filters(site.id, query)}`;
  const rows = await db.any(
    sql.type(
      mediaItemSchema,
    )`${matching} and ${after(query, 'media_items')} order by media_items.created_at, media_items.id limit ${query.limit + 1}`,
  );
  return toPage([...rows], query, () => countOf(db, matching));
}

export async function countMedia(db: CommonQueryMethods, { site }: SiteAccess, query: z.infer<typeof mediaFilters>) {
  return { count: await countOf(db, sql.fragment`select 1 from media_items where ${filters(site.id, query)}`) };
}

/**
 * An item by primary key alone, whatever its site (the caller checks it): with the site in the WHERE,
 * PostgreSQL may walk the site's (site_id, created_at, id) index instead, reading every item of the
 * site to find one. Prepared: the read every media request makes.
 */
export const mediaById = (db: CommonQueryMethods, id: string): Promise<MediaItem | null> =>
  db.maybeOne(prepared(sql.type(mediaItemSchema)`select ${mediaColumns} from media_items where id = ${id}`));

export async function findMedia(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<MediaItem> {
  const row = lock
    ? await db.maybeOne(sql.type(mediaItemSchema)`
        select ${mediaColumns} from media_items where id = ${id} and site_id = ${siteId} for update`)
    : await mediaById(db, id);
  if (!row || row.site_id !== siteId) throw notFound('No such media item.');
  return row;
}

export const getMedia = (db: CommonQueryMethods, { site }: SiteAccess, id: string): Promise<MediaItem> =>
  findMedia(db, site.id, id);

/** Locks the item for a change by the caller: 404 when it is not in the site, 403 for an author's change to another's item. */
export async function forChange(db: CommonQueryMethods, access: SiteAccess, id: string): Promise<MediaItem> {
  const item = await findMedia(db, access.site.id, id, true);
  requireOwnChange(access, item.created_by, 'the media they added');
  return item;
}

export async function updateMedia(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: z.infer<typeof mediaChanges>,
) {
  return db.transaction(async (tx) => {
    const item = await forChange(tx, access, id);
    return tx.one(sql.type(mediaItemSchema)`
      update media_items set alt = ${changes.alt ?? item.alt}, title = ${changes.title ?? item.title}, caption = ${changes.caption ?? item.caption},
             tags = ${sql.array(changes.tags ?? item.tags, 'text')},
             focal_point = ${changes.focal_point === undefined ? (item.focal_point ? sql.jsonb(item.focal_point) : null) : changes.focal_point ? sql.jsonb(changes.focal_point) : null}
      where id = ${id} returning ${mediaColumns}`);
  });
}

/** Files the item into a folder of the same site, or into none. */
export async function moveMedia(db: CommonQueryMethods, access: SiteAccess, id: string, folderId: string | null) {
  return db.transaction(async (tx) => {
    await forChange(tx, access, id);
    if (folderId) await requireSiteFolder(tx, access.site.id, folderId, 'folder_id');
    return tx.one(
      sql.type(
        mediaItemSchema,
      )`update media_items set folder_id = ${folderId} where id = ${id} returning ${mediaColumns}`,
    );
  });
}

/** Deletes the item, then its file and variants; 409 while something uses it, unless `force`. */
export async function deleteMedia(
  { db, storage, logger }: Deps,
  request: { access: SiteAccess; id: string; force: boolean },
) {
  const { access, id, force } = request;
  const keys = await db.transaction(async (tx) => {
    await forChange(tx, access, id);
    await requireUnreferenced(tx, access.site.id, sql.fragment`select ${id}::uuid`, force);
    return deleteMediaRows(tx, sql.fragment`id = ${id}`);
  });
  await removeFiles(storage, logger, keys);
}

/** The item and where the file asked for is, for streaming it to a caller who may read it. */
export async function mediaFile(
  db: CommonQueryMethods,
  { site }: SiteAccess,
  id: string,
  query: ViewQuery,
): Promise<MediaFile> {
  return fileOf(db, await findMedia(db, site.id, id), query);
}
