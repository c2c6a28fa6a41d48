// Media folders: a tree per site. Everyone who reaches the site (service
// accounts with media:read) sees the folders; authors create folders and
// change the ones they made; editors and admins (and media:write service
// accounts) change any. A move that would put a folder inside itself is a 409,
// checked under a per-site lock so two crossing moves cannot make a cycle.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import type { Deps } from '../services.ts';
import { removeFiles } from '../storage/index.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { requireOwnChange, requireSiteFolder } from './access.ts';
import { deleteMediaRows } from './items.ts';
import { requireUnreferenced } from './references.ts';

export const folderSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    parent_id: z.uuid().nullable(),
    name: z.string(),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'MediaFolder' });

export type Folder = z.infer<typeof folderSchema>;

export type FolderNode = Folder & { item_count: number; total_item_count: number; children: FolderNode[] };

export const folderNodeSchema: z.ZodType<FolderNode> = folderSchema
  .extend({
    item_count: z.number().int().describe('Media items directly in this folder'),
    total_item_count: z.number().int().describe('Media items in this folder and every folder below it'),
    get children() {
      return z.array(folderNodeSchema);
    },
  })
  .meta({ id: 'MediaFolderNode' });

const columns = sql.fragment`f.id, f.site_id, f.parent_id, f.name, f.created_by, f.created_at, f.updated_at`;

export const folderName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((name) => !/[/\\]/.test(name), 'may not contain / or \\');

export const folderListQuery = pageQuery.extend({
  parent_id: z
    .union([z.uuid(), z.literal('root')])
    .optional()
    .describe('Only the children of this folder; `root` for top-level folders'),
});

const requireChange = (access: SiteAccess, target: Folder) =>
  requireOwnChange(access, target.created_by, 'the folders they made');

async function findFolder(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<Folder> {
  // By primary key, the site checked here (see findMedia); a lock is taken only on the site's own folder.
  const row = lock
    ? await db.maybeOne(sql.type(folderSchema)`
        select ${columns} from media_folders f where f.id = ${id} and f.site_id = ${siteId} for update`)
    : await db.maybeOne(sql.type(folderSchema)`select ${columns} from media_folders f where f.id = ${id}`);
  if (!row || row.site_id !== siteId) throw notFound('No such folder.');
  return row;
}

/** The parent named in a body, checked to be a folder of the site (422 otherwise). */
async function findParent(
  db: CommonQueryMethods,
  siteId: string,
  parentId: string | null | undefined,
): Promise<string | null> {
  if (!parentId) return null;
  await requireSiteFolder(db, siteId, parentId, 'parent_id');
  return parentId;
}

/** One folder change at a time per site: a move's cycle check must see every other move, and a create its parent. */
const lockTree = (db: CommonQueryMethods, siteId: string) =>
  db.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext('media-folders:' || ${siteId}))`);

const siblingTaken = (error: unknown) => {
  if (error instanceof UniqueIntegrityConstraintViolationError)
    throw conflict('A folder of that name is already there.');
  throw error;
};

export async function listFolders(
  db: CommonQueryMethods,
  { site }: SiteAccess,
  query: z.infer<typeof folderListQuery>,
) {
  const parent =
    query.parent_id === 'root'
      ? sql.fragment`and f.parent_id is null`
      : query.parent_id
        ? sql.fragment`and f.parent_id = ${query.parent_id}`
        : sql.fragment``;
  const matching = sql.fragment`select ${columns} from media_folders f where f.site_id = ${site.id} ${parent}`;
  const rows = await db.any(
    sql.type(folderSchema)`${matching} and ${after(query, 'f')} order by f.created_at, f.id limit ${query.limit + 1}`,
  );
  return toPage([...rows], query, () => countOf(db, matching));
}

export const getFolder = (db: CommonQueryMethods, { site }: SiteAccess, id: string): Promise<Folder> =>
  findFolder(db, site.id, id);

export async function createFolder(
  db: CommonQueryMethods,
  access: SiteAccess,
  input: { name: string; parent_id?: string | null | undefined },
) {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    // Under the tree lock, so a parent being deleted recursively is either still there or already gone (422).
    await lockTree(tx, site.id);
    const parent = await findParent(tx, site.id, input.parent_id);
    return tx
      .one(
        sql.type(folderSchema)`
        insert into media_folders as f (tenant_id, site_id, parent_id, name, created_by)
        values (${site.tenant_id}, ${site.id}, ${parent}, ${input.name}, ${actor.kind === 'user' ? actor.userId : null})
        returning ${columns}`,
      )
      .catch(siblingTaken);
  });
}

/** Renames and/or moves; `parent_id` null moves to the top, absent leaves it where it is. */
export async function updateFolder(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: { name?: string | undefined; parent_id?: string | null | undefined },
) {
  return db.transaction(async (tx) => {
    await lockTree(tx, access.site.id);
    const current = await findFolder(tx, access.site.id, id, true);
    requireChange(access, current);
    let parent = current.parent_id;
    if (changes.parent_id !== undefined) {
      parent = await findParent(tx, access.site.id, changes.parent_id);
      if (parent && (await isWithin(tx, parent, id)))
        throw conflict('A folder cannot be moved into itself or into a folder below it.');
    }
    return tx
      .one(
        sql.type(folderSchema)`
        update media_folders as f set name = ${changes.name ?? current.name}, parent_id = ${parent}
        where f.id = ${id} returning ${columns}`,
      )
      .catch(siblingTaken);
  });
}

/** Whether `candidate` is `ancestor` or lies below it. */
async function isWithin(db: CommonQueryMethods, candidate: string, ancestor: string): Promise<boolean> {
  return db.exists(sql.type(z.object({}))`
    with recursive up as (
      select id, parent_id from media_folders where id = ${candidate}
      union all
      select f.id, f.parent_id from media_folders f join up on f.id = up.parent_id
    )
    select 1 from up where id = ${ancestor}`);
}

const subtree = (rootId: string) => sql.fragment`
  with recursive down as (
    select id from media_folders where id = ${rootId}
    union all
    select f.id from media_folders f join down on f.parent_id = down.id
  )`;

/**
 * Deletes an empty folder; with `recursive`, the folders below it and the
 * media items in all of them too (their files are removed from storage once
 * the rows are gone). Otherwise a folder with anything in it is a 409, as is
 * one holding an item in use, unless `force`.
 */
export async function deleteFolder(
  { db, storage, logger }: Deps,
  request: { access: SiteAccess; id: string; recursive: boolean; force: boolean },
) {
  const { access, id, recursive, force } = request;
  const keys = await db.transaction(async (tx) => {
    await lockTree(tx, access.site.id);
    const current = await findFolder(tx, access.site.id, id, true);
    requireChange(access, current);
    const mine = access.actor.kind === 'user' ? access.actor.userId : null;
    const contents = await tx.one(sql.type(z.object({ folders: z.number(), items: z.number(), others: z.number() }))`
      ${subtree(id)}
      select (select count(*)::int - 1 from down) as folders,
             (select count(*)::int from media_items where folder_id in (select id from down)) as items,
             (select count(*)::int from media_folders where id in (select id from down) and created_by is distinct from ${mine})
               + (select count(*)::int from media_items where folder_id in (select id from down) and created_by is distinct from ${mine}) as others`);
    if (!recursive && (contents.folders > 0 || contents.items > 0)) {
      throw new Problem(
        409,
        `The folder holds ${contents.folders} folder(s) and ${contents.items} item(s); empty it first or pass recursive=true.`,
      );
    }
    // Authors delete only what they made, also below their own folder.
    if (access.role === 'author' && contents.others > 0) {
      throw new Problem(403, 'Authors may delete only what they made; this folder holds folders or media of others.');
    }
    const below = sql.fragment`folder_id in (${subtree(id)} select id from down)`;
    await requireUnreferenced(tx, access.site.id, sql.fragment`select id from media_items where ${below}`, force);
    const removed = await deleteMediaRows(tx, below);
    await tx.query(sql.typeAlias('void')`${subtree(id)} delete from media_folders where id in (select id from down)`);
    return removed;
  });
  await removeFiles(storage, logger, keys);
}

export async function folderTree(
  db: CommonQueryMethods,
  { site }: SiteAccess,
): Promise<{ items: FolderNode[]; unfiled_item_count: number }> {
  const rows = await db.any(sql.type(folderSchema.extend({ item_count: z.number() }))`
    select ${columns}, (select count(*)::int from media_items m where m.folder_id = f.id) as item_count
    from media_folders f where f.site_id = ${site.id} order by f.name, f.id`);
  const nodes = new Map<string, FolderNode>(
    rows.map((row) => [row.id, { ...row, total_item_count: row.item_count, children: [] }]),
  );
  const roots: FolderNode[] = [];
  for (const node of nodes.values()) (node.parent_id ? nodes.get(node.parent_id)?.children : roots)?.push(node);
  const total = (node: FolderNode): number =>
    (node.total_item_count = node.item_count + node.children.reduce((sum, child) => sum + total(child), 0));
  roots.forEach(total);
  const unfiled = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from media_items where site_id = ${site.id} and folder_id is null`);
  return { items: roots, unfiled_item_count: unfiled };
}
