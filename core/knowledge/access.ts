// Who reaches an agent's knowledge base, and what they may do with it.
//
// - The agent: global admins see every agent; members of a tenant it is
//   assigned to (and that tenant's service accounts) see it; anyone else is
//   told it does not exist (404).
// - Its documents: each belongs to a site; a caller sees the documents of the
//   sites they reach (a tenant's admins reach all its sites, editors and
//   authors the sites they are assigned to, service accounts every site of
//   their tenant with content:read). So tenants sharing an agent never see
//   each other's documents.
// - Writing (adding, removing, indexing a document): global admins, and the
//   administrators of the document's tenant. Editors, authors and service
//   accounts read and search; they get 403.
import { z } from 'zod';
import { visibleTo } from '../agents/agents.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { activeMemberships, reachesSite, requireScope } from '../identity/access.ts';
import { findSiteAccess, type SiteAccess } from '../tenancy/site-access.ts';

const exists = z.object({ found: z.boolean() });

/** 404 unless the caller sees the agent; service accounts need content:read. */
export async function requireVisibleAgent(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  missing = 'No such agent.',
): Promise<void> {
  // Who sees an agent is the agents' own rule (core/agents/agents.ts).
  const seen = sql.fragment`exists (select 1 from agents a where a.id = ${agentId} and ${visibleTo(actor)})`;
  if (!(await db.oneFirst(sql.type(exists)`select ${seen} as found`))) throw notFound(missing);
  requireScope(actor, 'content:read');
}

/** The documents (`d`) the caller sees, as a condition. */
export function visibleDocuments(actor: Actor) {
  if (actor.kind === 'service') return sql.fragment`d.tenant_id = ${actor.tenantId}`;
  if (actor.isGlobalAdmin) return sql.fragment`true`;
  return sql.fragment`exists (select 1 from ${activeMemberships}
    where m.tenant_id = d.tenant_id and m.user_id = ${actor.userId} and ${reachesSite(sql.identifier(['d', 'site_id']))})`;
}

/**
 * The sites of the agent's tenants whose documents the caller sees, for a
 * search to filter its chunks by (found from the caller's memberships, not
 * from the documents, however many there are); null when that is every site
 * of every tenant the agent serves (global admins; the admins of its only
 * tenant), so the search need not filter at all.
 */
export async function visibleSites(db: CommonQueryMethods, actor: Actor, agentId: string): Promise<string[] | null> {
  if (actor.kind === 'user' && actor.isGlobalAdmin) return null;
  const reached =
    actor.kind === 'service'
      ? sql.fragment`s.tenant_id = ${actor.tenantId}`
      : sql.fragment`exists (select 1 from ${activeMemberships}
          where m.tenant_id = s.tenant_id and m.user_id = ${actor.userId} and ${reachesSite(sql.identifier(['s', 'id']))})`;
  const sites = await db.any(sql.type(z.object({ id: z.uuid(), reached: z.boolean() }))`
    select s.id, ${reached} as reached from agent_tenants at join sites s on s.tenant_id = at.tenant_id
    where at.agent_id = ${agentId}`);
  return sites.every((site) => site.reached) ? null : sites.filter((site) => site.reached).map((site) => site.id);
}

/**
 * The caller on the site a document belongs to (or is to be added for), as
 * one who may write the knowledge base there: 404 when they do not reach the
 * site, 403 below its tenant's administrators.
 */
export async function requireWriter(
  db: CommonQueryMethods,
  actor: Actor,
  siteId: string,
  missing = 'No such site.',
): Promise<SiteAccess> {
  const access = await findSiteAccess(db, actor, siteId);
  if (!access) throw notFound(missing);
  if (access.role !== 'admin')
    throw new Problem(
      403,
      'Only global administrators and the administrators of the document’s tenant may change an agent’s knowledge base.',
    );
  return access;
}

/** 409 unless the agent is assigned to the site's tenant. */
export async function requireAssigned(db: CommonQueryMethods, agentId: string, tenantId: string): Promise<void> {
  const assigned = await db.oneFirst(sql.type(exists)`
    select exists (select 1 from agent_tenants where agent_id = ${agentId} and tenant_id = ${tenantId}) as found`);
  if (!assigned)
    throw new Problem(
      409,
      'The agent is not assigned to this tenant: its knowledge base takes documents of the tenants it serves only.',
    );
}
