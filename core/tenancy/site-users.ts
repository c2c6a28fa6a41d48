// Which users work on a site. Tenant admins reach every site of their tenant
// anyway; editors and authors reach the sites they are assigned to here.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { conflict, notFound } from '../errors.ts';
import { activeMemberships, reachesSite, requireUser, roles } from '../identity/access.ts';
import { userSchema, userColumns } from '../identity/users.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { siteSchema, siteColumns, type Site } from './sites.ts';

export const siteUserSchema = userSchema
  .extend({ role: z.enum(roles).describe('The user’s role in the site’s tenant'), assigned_at: timestamp })
  .meta({ id: 'SiteUser' });
export const siteAssignmentSchema = z
  .object({ site_id: z.uuid(), user_id: z.uuid(), created_at: timestamp })
  .meta({ id: 'SiteAssignment' });

// The route lets in only the site's tenant admins; these take the site it resolved.

export async function listSiteUsers(db: CommonQueryMethods, target: Site, query: PageQuery) {
  const rows = await db.any(sql.type(siteUserSchema)`
    select ${userColumns}, m.role, su.created_at as assigned_at
    from site_users su join users on users.id = su.user_id
    join memberships m on m.tenant_id = su.tenant_id and m.user_id = su.user_id
    where su.site_id = ${target.id} and ${after(query, 'users')}
    order by users.created_at, users.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () =>
    countOf(db, sql.fragment`select 1 from site_users where site_id = ${target.id}`),
  );
}

/** Members of the site's tenant not yet assigned to it. */
export async function availableUsersForSite(db: CommonQueryMethods, target: Site, query: PageQuery) {
  const candidates = sql.fragment`
    exists (select 1 from memberships m where m.tenant_id = ${target.tenant_id} and m.user_id = users.id)
    and not exists (select 1 from site_users su where su.site_id = ${target.id} and su.user_id = users.id)`;
  const rows = await db.any(sql.type(userSchema)`
    select ${userColumns} from users where ${candidates} and ${after(query, 'users')}
    order by users.created_at, users.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from users where ${candidates}`));
}

export async function assignUserToSite(db: CommonQueryMethods, target: Site, userId: string) {
  const member = await db.exists(sql.type(z.object({}))`
    select 1 from memberships where tenant_id = ${target.tenant_id} and user_id = ${userId}`);
  // A user outside the tenant is, from here, a user that does not exist.
  if (!member) throw notFound('No such user in this site’s tenant.');
  try {
    return await db.one(sql.type(siteAssignmentSchema)`
      insert into site_users (tenant_id, site_id, user_id) values (${target.tenant_id}, ${target.id}, ${userId})
      returning site_id, user_id, created_at`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError)
      throw conflict('The user is already assigned to this site.');
    throw error;
  }
}

export async function removeUserFromSite(db: CommonQueryMethods, target: Site, userId: string): Promise<void> {
  const removed = await db.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`
    delete from site_users where site_id = ${target.id} and user_id = ${userId} returning user_id`);
  if (!removed) throw notFound('The user is not assigned to this site.');
}

/**
 * The sites a user can reach. Yourself or, for a global admin, anyone; a
 * tenant admin sees a member's sites within the tenants they administer.
 */
export async function listUserSites(db: CommonQueryMethods, actor: Actor, userId: string, query: PageQuery) {
  const caller = requireUser(actor);
  const everything = caller.userId === userId || caller.isGlobalAdmin;
  const scope = everything
    ? sql.fragment`true`
    : sql.fragment`exists (select 1 from memberships a where a.tenant_id = sites.tenant_id and a.user_id = ${caller.userId} and a.role = 'admin')`;
  if (
    everything &&
    caller.userId !== userId &&
    !(await db.exists(sql.type(z.object({}))`select 1 from users where id = ${userId}`))
  ) {
    throw notFound('No such user.');
  }
  if (!everything) {
    const shared = await db.exists(sql.type(z.object({}))`
      select 1 from memberships a join memberships m on m.tenant_id = a.tenant_id
      where a.user_id = ${caller.userId} and a.role = 'admin' and m.user_id = ${userId}`);
    if (!shared) throw notFound('No such user.');
  }
  const reachable = sql.fragment`${scope} and exists (
    select 1 from ${activeMemberships}
    where m.tenant_id = sites.tenant_id and m.user_id = ${userId} and ${reachesSite(sql.identifier(['sites', 'id']))})`;
  const rows = await db.any(sql.type(siteSchema)`
    select ${siteColumns} from sites where ${reachable} and ${after(query, 'sites')}
    order by sites.created_at, sites.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from sites where ${reachable}`));
}
