// Who reaches a site, and as what: resolved once per request by the request
// path, from the route's declaration, and handed to the domain as a
// SiteAccess. A site the caller cannot see is "not found"; one they see but
// whose role or scopes fall short of the route's need is "forbidden".
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import {
  activeMemberships,
  keyReachesSite,
  reachesSite,
  requireScopes,
  roles,
  type Role,
  type Scope,
} from '../identity/access.ts';
import { siteSchema, siteColumns, type Site } from './sites.ts';

export type SiteRole = Role | 'service';

/** A caller on a site: who, which site, in which role. Domain functions of a site take one. */
export type SiteAccess = { actor: Actor; site: Site; role: SiteRole };

/**
 * What a route needs of the caller on the `{site_identifier}` of its path:
 * `read` anyone who reaches the site; `write` a role that may create content
 * (authors and up: every role today); `manage` editors and administrators,
 * for what shapes the site's content as a whole (content types); `admin` the
 * tenant's administrators.
 * Service accounts reach every site of their tenant, with `sites:read` and the
 * scopes listed.
 */
export type SiteNeed = { site: 'read' | 'write' | 'manage' | 'admin'; scope?: Scope | Scope[] };

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `{site_identifier}`: the site's id, or its slug (compared in lower case). */
export const identifies = (identifier: string) =>
  uuidShape.test(identifier)
    ? sql.fragment`sites.id = ${identifier}`
    : sql.fragment`sites.slug = ${identifier.toLowerCase()}`;

const siteWithRole = siteSchema.extend({ role: z.enum([...roles, 'service']).nullable() });

/** The site by id or slug, whoever asks: for callers that checked access another way (a signed webhook, a job). */
export function resolveSite(db: CommonQueryMethods, identifier: string): Promise<Site | null> {
  return db.maybeOne(sql.type(siteSchema)`select ${siteColumns} from sites where ${identifies(identifier)}`);
}

/** The caller's role on the site as SQL over `sites`: null where they do not reach it (or their API key does not). */
function roleOf(actor: Actor) {
  if (!actor.apiKey) return holderRoleOf(actor);
  return sql.fragment`case when ${keyReachesSite(actor)} then ${holderRoleOf(actor)} end`;
}

function holderRoleOf(actor: Actor) {
  if (actor.kind === 'service') return sql.fragment`case when sites.tenant_id = ${actor.tenantId} then 'service' end`;
  if (actor.isGlobalAdmin) return sql.fragment`'admin'`;
  // Membership of a suspended or blocked tenant grants nothing.
  return sql.fragment`(select m.role from ${activeMemberships}
    where m.tenant_id = sites.tenant_id and m.user_id = ${actor.userId} and ${reachesSite(sql.identifier(['sites', 'id']))})`;
}

/** The site and the caller's role on it, in one statement; null when the site does not exist or they do not reach it. */
export async function findSiteAccess(
  db: CommonQueryMethods,
  actor: Actor,
  identifier: string,
): Promise<SiteAccess | null> {
  const row = await db.maybeOne(
    sql.type(siteWithRole)`select ${siteColumns}, ${roleOf(actor)} as role from sites where ${identifies(identifier)}`,
  );
  if (!row?.role) return null;
  const { role, ...found } = row;
  return { actor, site: found, role };
}

/**
 * The one answer of the token-free endpoints for anything they do not serve:
 * an unknown or private site, a suspended tenant, an item not ready, so they
 * say nothing about what is not public.
 */
export const notPublic = () => notFound('Not found, or not public.');

/** A public site of a tenant in good standing, for the token-free endpoints. */
export async function findPublicSite(db: CommonQueryMethods, identifier: string): Promise<Site | null> {
  return db.maybeOne(sql.type(siteSchema)`
    select ${siteColumns} from sites join tenants t on t.id = sites.tenant_id and t.status = 'active'
    where ${identifies(identifier)} and sites.visibility = 'public'`);
}

/** The route's need, checked: 404 when the site is not the caller's to see, 403 when their role or scopes fall short. */
export function requireSiteNeed(found: SiteAccess | null, need: SiteNeed): SiteAccess {
  if (!found) throw notFound('No such site.');
  if (need.site === 'admin' && found.role !== 'admin') {
    throw new Problem(403, 'Only the tenant’s administrators may do this.');
  }
  // No scope covers administration: a key, even one its admin holds, does not administer.
  if (need.site === 'admin' && found.actor.apiKey) {
    throw new Problem(403, 'An API key may not do this; it needs an administrator’s own token.');
  }
  if (need.site === 'manage' && found.role === 'author') {
    throw new Problem(403, 'Only editors and administrators may do this.');
  }
  requireScopes(found.actor, ['sites:read', ...[need.scope ?? []].flat()]);
  return found;
}
