// Who belongs to a tenant, and with which role (admin, editor, author).
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { conflict, notFound } from '../errors.ts';
import { requireGlobalAdmin, roles, type Role } from '../identity/access.ts';
import { userSchema, userColumns } from '../identity/users.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { findTenant } from './tenants.ts';

export const membershipSchema = z
  .object({ tenant_id: z.uuid(), user_id: z.uuid(), role: z.enum(roles), created_at: timestamp })
  .meta({ id: 'Membership' });

export const tenantUserSchema = userSchema
  .extend({ role: z.enum(roles), joined_at: timestamp })
  .meta({ id: 'TenantUser' });

async function existingTenant(db: CommonQueryMethods, tenantId: string) {
  if (!(await findTenant(db, tenantId))) throw notFound('No such tenant.');
}

export async function listTenantUsers(db: CommonQueryMethods, actor: Actor, tenantId: string, query: PageQuery) {
  requireGlobalAdmin(actor);
  await existingTenant(db, tenantId);
  const rows = await db.any(sql.type(tenantUserSchema)`
    select ${userColumns}, m.role, m.created_at as joined_at
    from memberships m join users on users.id = m.user_id
    where m.tenant_id = ${tenantId} and ${after(query, 'users')}
    order by users.created_at, users.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () =>
    countOf(db, sql.fragment`select 1 from memberships where tenant_id = ${tenantId}`),
  );
}

/** Users who are not members of the tenant yet: the candidates to add. */
export async function availableUsersForTenant(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  query: PageQuery,
) {
  requireGlobalAdmin(actor);
  await existingTenant(db, tenantId);
  const outside = sql.fragment`not exists (select 1 from memberships m where m.tenant_id = ${tenantId} and m.user_id = users.id)`;
  const rows = await db.any(sql.type(userSchema)`
    select ${userColumns} from users where ${outside} and ${after(query, 'users')}
    order by users.created_at, users.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from users where ${outside}`));
}

export async function addMember(db: CommonQueryMethods, tenantId: string, userId: string, role: Role) {
  try {
    return await db.one(sql.type(membershipSchema)`
      insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${userId}, ${role})
      returning tenant_id, user_id, role, created_at`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError)
      throw conflict('The user is already a member; PATCH changes the role.');
    throw error;
  }
}

export async function assignUserToTenant(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  userId: string,
  role: Role,
) {
  requireGlobalAdmin(actor);
  await existingTenant(db, tenantId);
  if (!(await db.exists(sql.type(z.object({}))`select 1 from users where id = ${userId}`)))
    throw notFound('No such user.');
  return addMember(db, tenantId, userId, role);
}

export async function updateTenantRole(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  userId: string,
  role: Role,
) {
  requireGlobalAdmin(actor);
  const updated = await db.maybeOne(sql.type(membershipSchema)`
    update memberships set role = ${role} where tenant_id = ${tenantId} and user_id = ${userId}
    returning tenant_id, user_id, role, created_at`);
  if (!updated) throw notFound('The user is not a member of this tenant.');
  return updated;
}

/** Removes the membership and, with it, the user's access to the tenant's sites. */
export async function removeUserFromTenant(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  userId: string,
): Promise<void> {
  requireGlobalAdmin(actor);
  await db.transaction(async (tx) => {
    const removed = await tx.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`
      delete from memberships where tenant_id = ${tenantId} and user_id = ${userId} returning user_id`);
    if (!removed) throw notFound('The user is not a member of this tenant.');
    await tx.query(sql.typeAlias('void')`delete from site_users where tenant_id = ${tenantId} and user_id = ${userId}`);
  });
}
