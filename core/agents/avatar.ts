// An agent's avatar: a media item, so that it is stored, processed and served
// like any other. It must be a ready image the caller can read, of a site of
// a tenant the agent is assigned to (so those who see the agent can see it);
// while it is an avatar, the item cannot be deleted without force
// (core/media/references.ts), and a forced delete leaves the agent without one.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { findSiteAccess, requireSiteNeed } from '../tenancy/site-access.ts';
import { agentColumns, agentForChange, agentSchema, type Agent } from './agents.ts';

const candidate = z.object({ site_id: z.uuid(), tenant_id: z.uuid(), kind: z.string(), status: z.string() });

export async function setAvatar(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  mediaId: string,
): Promise<Agent> {
  return db.transaction(async (tx) => {
    await agentForChange(tx, actor, agentId);
    // Shared: the item cannot be deleted (or its site) while the avatar is being set.
    const item = await tx.maybeOne(sql.type(candidate)`
      select site_id, tenant_id, kind, status from media_items where id = ${mediaId} for share`);
    const reader = item && (await findSiteAccess(tx, actor, item.site_id));
    if (!item || !reader) throw notFound('No such media item.');
    requireSiteNeed(reader, { site: 'read', scope: 'media:read' });
    if (item.kind !== 'image') throw new Problem(409, `An avatar must be an image; this item is ${item.kind}.`);
    if (item.status !== 'ready') throw new Problem(409, `The image is not ready (it is ${item.status}).`);
    const assigned = await tx.exists(sql.type(z.object({}))`
      select 1 from agent_tenants where agent_id = ${agentId} and tenant_id = ${item.tenant_id}`);
    if (!assigned) {
      throw new Problem(409, 'The image belongs to a site of a tenant the agent is not assigned to; assign it first.');
    }
    return tx.one(sql.type(agentSchema)`
      update agents as a set avatar_media_id = ${mediaId} where a.id = ${agentId} returning ${agentColumns}`);
  });
}
