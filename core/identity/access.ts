// The access rules, in one place. Resources of a tenant the caller cannot see
// are "not found" (404), never "forbidden": their existence is not revealed.
// 403 means: you can see it, but your role may not do this.
import { z } from 'zod';
import type { ValueExpression } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor, UserActor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';

export type Role = 'admin' | 'editor' | 'author';
export const roles = ['admin', 'editor', 'author'] as const;

export const scopes = [
  'sites:read',
  'content:read',
  'content:write',
  'media:read',
  'media:write',
  'jobs:read',
  'jobs:write',
  // Lets a service account submit jobs ahead of the tenant's others (core/jobs/request-priority.ts).
  'jobs:priority',
  'search:read',
] as const;

export type Scope = (typeof scopes)[number];

/**
 * The one statement of who reaches a site, as SQL over a membership `m`:
 * memberships count only in an active tenant (`activeMemberships`), and one
 * reaches a site when it is the tenant's admin or is assigned to the site.
 */
export const activeMemberships = sql.fragment`memberships m join tenants t on t.id = m.tenant_id and t.status = 'active'`;

export const reachesSite = (siteId: ValueExpression) =>
  sql.fragment`(m.role = 'admin' or exists (select 1 from site_users su where su.site_id = ${siteId} and su.user_id = m.user_id))`;

const forbiddenProblem = (detail: string) => new Problem(403, detail);

export function requireUser(actor: Actor): UserActor {
  if (actor.kind !== 'user') throw forbiddenProblem('Service accounts may not do this; it needs a signed-in user.');
  return actor;
}

export function requireGlobalAdmin(actor: Actor): UserActor {
  const user = requireUser(actor);
  if (!user.isGlobalAdmin) throw forbiddenProblem('Only global administrators may do this.');
  return user;
}

export function requireScope(actor: Actor, scope: Scope): void {
  requireScopes(actor, [scope]);
}

/**
 * Every scope of `needed` the caller must hold, checked at once: the 403
 * names all those missing (`missing_permissions`), so a service account or a
 * key is fixed in one go rather than one refusal at a time.
 */
export function requireScopes(actor: Actor, needed: readonly Scope[]): void {
  // A member's key acts with their role, narrowed to the key's scopes; a service account has its own.
  const held = actor.kind === 'service' ? actor.scopes : actor.apiKey?.scopes;
  if (!held) return;
  const missing = [...new Set(needed)].filter((scope) => !held.includes(scope));
  if (missing.length === 0) return;
  const who =
    actor.kind === 'user' ? 'The API key' : actor.apiKey ? 'The API key or its service account' : 'The service account';
  const named = missing.join(', ').replace(/, ([^,]*)$/, ' and $1');
  throw new Problem(403, `${who} lacks the ${named} scope${missing.length > 1 ? 's' : ''}.`, {
    extensions: { missing_permissions: missing },
  });
}

/** Whether an API key (if the caller used one) lets them reach this tenant, and this site of it. */
export const keyReaches = (actor: Actor, tenantId: string, siteId?: string): boolean =>
  !actor.apiKey ||
  (actor.apiKey.tenantId === tenantId &&
    (siteId === undefined || actor.apiKey.siteIds === null || actor.apiKey.siteIds.includes(siteId)));

/** keyReaches as SQL over `sites`: true for a caller without a key. */
export function keyReachesSite(actor: Actor) {
  const key = actor.apiKey;
  if (!key) return sql.fragment`true`;
  const sites =
    key.siteIds === null ? sql.fragment`true` : sql.fragment`sites.id = any(${sql.array(key.siteIds, 'uuid')})`;
  return sql.fragment`(sites.tenant_id = ${key.tenantId} and ${sites})`;
}

/** No scope covers administration: a key, even one its admin holds, does not administer. */
const refuseKey = (actor: Actor) => {
  if (actor.apiKey) throw forbiddenProblem('An API key may not do this; it needs an administrator’s own token.');
};

/** The caller's role in a tenant: global admins act as its admin; null when it is not theirs to see. */
export async function tenantRole(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
): Promise<Role | 'service' | null> {
  if (!keyReaches(actor, tenantId)) return null;
  if (actor.kind === 'service') return actor.tenantId === tenantId ? 'service' : null;
  if (actor.isGlobalAdmin) return 'admin';
  // Membership of a suspended or blocked tenant grants nothing.
  return db.maybeOneFirst(sql.type(z.object({ role: z.enum(roles) }))`
    select m.role from ${activeMemberships}
    where m.tenant_id = ${tenantId} and m.user_id = ${actor.userId}`);
}

/** Tenant administration: 404 when the tenant is not the caller's, 403 below admin. */
export async function requireTenantAdmin(db: CommonQueryMethods, actor: Actor, tenantId: string): Promise<void> {
  const role = await tenantRole(db, actor, tenantId);
  if (!role) throw notFound('No such tenant.');
  if (role !== 'admin') throw forbiddenProblem('Only the tenant’s administrators may do this.');
  refuseKey(actor);
}

/**
 * The caller's role on a site. Tenant admins (and global admins) reach every
 * site of the tenant; editors and authors the sites they are assigned to;
 * service accounts every site of their tenant, within their scopes.
 */
export async function siteRole(
  db: CommonQueryMethods,
  actor: Actor,
  site: { id: string; tenant_id: string },
): Promise<Role | 'service' | null> {
  if (!keyReaches(actor, site.tenant_id, site.id)) return null;
  if (actor.kind === 'service') return actor.tenantId === site.tenant_id ? 'service' : null;
  if (actor.isGlobalAdmin) return 'admin';
  return db.maybeOneFirst(sql.type(z.object({ role: z.enum(roles) }))`
    select m.role from ${activeMemberships}
    where m.tenant_id = ${site.tenant_id} and m.user_id = ${actor.userId} and ${reachesSite(site.id)}`);
}
