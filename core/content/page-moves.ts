// Moving pages: under a new parent at a position, many at once (all or
// nothing), and a parent's children put in a new order. Each runs under the
// site's tree lock (core/content/pages.ts), so the check that a page is not
// moved under itself sees every other move, and the subtree's paths are
// rewritten in the same transaction.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import {
  childCount,
  findPage,
  lockTree,
  pageColumns,
  pageSchema,
  pathTaken,
  rewritePaths,
  shiftSiblings,
  type Page,
} from './pages.ts';
import { requireVersion, type IfMatch } from './types.ts';

export type Move = { page_id: string; parent_id: string | null; position?: number | undefined };

const cycle = () =>
  new Problem(409, 'A page cannot move under itself or a page below it.', {
    type: '/problems/page-cycle',
    title: 'Move into itself',
  });

/** Whether `candidate` is `pageId` or below it. */
const isWithin = (db: CommonQueryMethods, candidate: string, pageId: string) =>
  db.exists(sql.type(z.object({}))`
    with recursive ancestors (id, parent_id) as (
      select id, parent_id from pages where id = ${candidate}
      union all
      select p.id, p.parent_id from pages p join ancestors a on p.id = a.parent_id
    )
    select 1 from ancestors where id = ${pageId}`);

/** One move, in the caller's transaction and under its tree lock. */
async function moveOne(db: CommonQueryMethods, access: SiteAccess, move: Move, field: string): Promise<Page> {
  const { site } = access;
  const page = await findPage(db, site.id, move.page_id, true).catch(() => {
    throw new Problem(422, 'No such page in the site.', {
      errors: [{ path: `${field}.page_id`, message: 'is not a page of the site' }],
    });
  });
  requireOwnChange(access, page.created_by, 'the pages they made');
  const parent = move.parent_id
    ? await findPage(db, site.id, move.parent_id).catch(() => {
        throw new Problem(422, 'No such parent page in the site.', {
          errors: [{ path: `${field}.parent_id`, message: 'is not a page of the site' }],
        });
      })
    : null;
  if (parent && (await isWithin(db, parent.id, page.id))) throw cycle();
  // Out of its old place first: the gap closes, so positions stay 0..n-1.
  await shiftSiblings(db, site.id, page.parent_id, page.position + 1, -1);
  const parentId = parent?.id ?? null;
  const others = (await childCount(db, site.id, parentId)) - (page.parent_id === parentId ? 1 : 0);
  const position = Math.min(move.position ?? others, others);
  await shiftSiblings(db, site.id, parentId, position, 1);
  await rewritePaths(db, page.id, page.path, `${parent?.path ?? ''}/${page.slug}`).catch(pathTaken);
  return db.one(sql.type(pageSchema)`
    update pages p set parent_id = ${parentId}, position = ${position}, version = p.version + 1,
      updated_by = ${actorUserId(access.actor)}
    where p.id = ${page.id}
    returning ${pageColumns}`);
}

export async function movePage(
  db: CommonQueryMethods,
  access: SiteAccess,
  move: Move,
  ifMatch?: IfMatch,
): Promise<Page> {
  return db.transaction(async (tx) => {
    await lockTree(tx, access.site.id);
    const current = await findPage(tx, access.site.id, move.page_id);
    requireVersion(current.version, ifMatch, 'page');
    return moveOne(tx, access, move, 'body');
  });
}

/** Every move in order, all or nothing. */
export async function batchMove(db: CommonQueryMethods, access: SiteAccess, moves: Move[]): Promise<Page[]> {
  return db.transaction(async (tx) => {
    await lockTree(tx, access.site.id);
    const moved: Page[] = [];
    for (const [index, move] of moves.entries()) moved.push(await moveOne(tx, access, move, `body.moves.${index}`));
    // A page moved twice answers as it ended.
    const last = new Map(moved.map((page) => [page.id, page]));
    return [...last.values()];
  });
}

/** The full new order of one parent's children: exactly those children, each once. */
export async function reorderPages(
  db: CommonQueryMethods,
  access: SiteAccess,
  parentId: string | null,
  pageIds: string[],
): Promise<readonly Page[]> {
  const { site } = access;
  return db.transaction(async (tx) => {
    await lockTree(tx, site.id);
    if (parentId) await findPage(tx, site.id, parentId);
    const children = await tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from pages where site_id = ${site.id} and parent_id is not distinct from ${parentId}`);
    const given = new Set(pageIds);
    if (given.size !== pageIds.length || given.size !== children.length || children.some((id) => !given.has(id)))
      throw new Problem(422, 'page_ids must list every child of the parent exactly once.', {
        errors: [{ path: 'body.page_ids', message: `must be exactly the ${children.length} children, each once` }],
      });
    await tx.query(sql.typeAlias('void')`
      update pages p set position = ordered.position - 1, version = p.version + 1, updated_by = ${actorUserId(access.actor)}
      from unnest(${sql.array(pageIds, 'uuid')}::uuid[]) with ordinality as ordered (id, position)
      where p.id = ordered.id and p.position <> ordered.position - 1`);
    return tx.any(sql.type(pageSchema)`
      select ${pageColumns} from pages p where p.site_id = ${site.id} and p.parent_id is not distinct from ${parentId}
      order by p.position`);
  });
}
