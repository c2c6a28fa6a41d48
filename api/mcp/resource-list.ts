// resources/list: every post, page and media item the caller may read, site
// by site (the sites they reach, oldest first, as GET /api/sites lists them)
// and kind by kind, in pages of at most 100. A kind the caller may not read
// on a site (a service account without media:read, say) is passed over, as
// are the sites of tenants a session's agent is not assigned to.
//
// The cursor is where the walk stopped: the site list's cursor before the
// site, the kind, and that kind's own list cursor. Each page also looks
// through at most ten sites, so a caller reaching many empty sites is
// answered in bounded time, with a cursor to go on from, a page possibly
// short or even empty, as MCP allows.
import { z } from 'zod';
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import type { Agent } from '../../core/agents/agents.ts';
import { Problem } from '../../core/errors.ts';
import { pageQuery } from '../../core/pagination.ts';
import type { SiteAccess } from '../../core/tenancy/site-access.ts';
import { listSites, type Site } from '../../core/tenancy/sites.ts';
import { actingFor } from '../../db/tenant-scope.ts';
import { admit, tenantOf } from '../handle.ts';
import { listing, resourceKinds, type ResourceKind } from './resource-kinds.ts';
import type { CallContext } from './tool.ts';

/** A session's agent, read again for this request, with the tenants it is assigned to; null without one. */
export type SessionAgent = (Agent & { tenant_ids: string[] }) | null;

export const resourcesPerPage = 100;
const sitesPerPage = 10;

const positionSchema = z.strictObject({
  sites: z.string().max(500).optional(),
  kind: z
    .number()
    .int()
    .min(0)
    .max(resourceKinds.length - 1),
  cursor: z.string().max(500).optional(),
});
type Position = z.infer<typeof positionSchema>;

const encode = (position: Position) => Buffer.from(JSON.stringify(position)).toString('base64url');

function decode(cursor: string | undefined): Position {
  if (cursor === undefined) return { kind: 0 };
  try {
    return positionSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Problem(400, 'The cursor is not valid; use nextCursor from the previous page.');
  }
}

/** The caller's access to the kind on the site, as its REST endpoint admits them; null where it would refuse. */
async function admitted(context: CallContext, kind: ResourceKind, site: Site): Promise<SiteAccess | null> {
  const { accessCache } = context.services;
  try {
    const { access } = await admit(accessCache, context.db, kind.route.access, context.actor, {
      site_identifier: site.id,
    });
    return access ?? null;
  } catch (error) {
    // A role or scope short of the endpoint's (403), or a site gone since it was listed (404).
    if (error instanceof Problem && (error.status === 403 || error.status === 404)) return null;
    throw error;
  }
}

export async function listResources(
  context: CallContext,
  agent: SessionAgent,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  let at = decode(cursor);
  const resources: Resource[] = [];
  const sitesQuery = (after: string | undefined) => pageQuery.parse({ limit: 1, cursor: after });
  for (let looked = 0; looked < sitesPerPage; looked++) {
    const sites = await listSites(context.db, context.actor, sitesQuery(at.sites));
    const site = sites.items[0];
    if (!site) return { resources };
    if (!agent || agent.tenant_ids.includes(site.tenant_id)) {
      const tenant = tenantOf(site, context.actor);
      for (; at.kind < resourceKinds.length; at = { sites: at.sites, kind: at.kind + 1 }) {
        if (resources.length === resourcesPerPage) return { resources, nextCursor: encode(at) };
        const kind = resourceKinds[at.kind]!;
        const access = await admitted(context, kind, site);
        if (!access) continue;
        const limit = resourcesPerPage - resources.length;
        const list = () => kind.list(context.db, access, limit, at.cursor);
        const page = await (tenant ? actingFor(tenant, list) : list());
        resources.push(...page.items.map((item) => listing(kind, site, item)));
        if (page.next_cursor) return { resources, nextCursor: encode({ ...at, cursor: page.next_cursor }) };
      }
    }
    if (!sites.next_cursor) return { resources };
    at = { sites: sites.next_cursor, kind: 0 };
  }
  return { resources, nextCursor: encode(at) };
}
