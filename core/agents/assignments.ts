// Which tenants an agent is assigned to: the assignment is what lets a
// tenant's members see the agent. Global administrators assign, remove and
// list; a tenant's administrators count their tenant's agents.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { requireGlobalAdmin, requireTenantAdmin } from '../identity/access.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { findTenant } from '../tenancy/tenants.ts';
import { agentColumns, agentForChange, agentSchema } from './agents.ts';

export const agentTenantSchema = z
  .object({
    tenant_id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    assigned_by: z.uuid().nullable(),
    assigned_at: timestamp,
  })
  .meta({ id: 'AgentTenant' });

export type AgentTenant = z.infer<typeof agentTenantSchema>;

const tenantColumns = sql.fragment`t.id as tenant_id, t.name, t.slug, at.assigned_by, at.created_at as assigned_at`;

export const agentWithTenantsSchema = agentSchema
  .extend({ tenants: z.array(agentTenantSchema).describe('The tenants it is assigned to, oldest assignment first') })
  .meta({ id: 'AgentWithTenants' });

export const tenantAgentCountSchema = z.object({ tenant_id: z.uuid(), count: z.number().int() });

export async function listAgentTenants(db: CommonQueryMethods, actor: Actor, agentId: string) {
  await agentForChange(db, actor, agentId, false);
  const items = await db.any(sql.type(agentTenantSchema)`
    select ${tenantColumns} from agent_tenants at join tenants t on t.id = at.tenant_id
    where at.agent_id = ${agentId} order by at.created_at, t.id`);
  return { items: [...items] };
}

/** Assigns the agent to the tenant; `created` is false when it already was (nothing changes then). */
export async function assignAgent(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  tenantId: string,
): Promise<{ assignment: AgentTenant; created: boolean }> {
  return db.transaction(async (tx) => {
    await agentForChange(tx, actor, agentId);
    if (!(await findTenant(tx, tenantId))) throw notFound('No such tenant.');
    const inserted = await tx.maybeOne(sql.type(z.object({ tenant_id: z.uuid() }))`
      insert into agent_tenants (agent_id, tenant_id, assigned_by) values (${agentId}, ${tenantId}, ${actorUserId(actor)})
      on conflict do nothing returning tenant_id`);
    const assignment = await tx.one(sql.type(agentTenantSchema)`
      select ${tenantColumns} from agent_tenants at join tenants t on t.id = at.tenant_id
      where at.agent_id = ${agentId} and at.tenant_id = ${tenantId}`);
    return { assignment, created: inserted !== null };
  });
}

/**
 * Removes the agent from the tenant. An avatar from one of that tenant's
 * sites goes too: the tenants that still see the agent could not read it.
 */
export async function unassignAgent(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  tenantId: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await agentForChange(tx, actor, agentId);
    const removed = await tx.maybeOne(sql.type(z.object({ tenant_id: z.uuid() }))`
      delete from agent_tenants where agent_id = ${agentId} and tenant_id = ${tenantId} returning tenant_id`);
    if (!removed) throw notFound('The agent is not assigned to that tenant.');
    await tx.query(sql.typeAlias('void')`
      update agents set avatar_media_id = null
      where id = ${agentId} and avatar_media_id in (select id from media_items where tenant_id = ${tenantId})`);
  });
}

export async function countTenantAgents(db: CommonQueryMethods, actor: Actor, tenantId: string) {
  await requireTenantAdmin(db, actor, tenantId);
  // Global admins pass for any id; a tenant that does not exist has no count.
  if (!(await findTenant(db, tenantId))) throw notFound('No such tenant.');
  const count = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from agent_tenants where tenant_id = ${tenantId}`);
  return { tenant_id: tenantId, count };
}

/** Every agent with the tenants it is assigned to, for global administrators: a page of agents, then their tenants. */
export async function listAllAgents(db: CommonQueryMethods, actor: Actor, query: PageQuery) {
  requireGlobalAdmin(actor);
  const rows = await db.any(sql.type(agentSchema)`
    select ${agentColumns} from agents a where ${after(query, 'a')}
    order by a.created_at, a.id limit ${query.limit + 1}`);
  const page = await toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from agents`));
  const assignments = await db.any(sql.type(agentTenantSchema.extend({ agent_id: z.uuid() }))`
    select at.agent_id, ${tenantColumns} from agent_tenants at join tenants t on t.id = at.tenant_id
    where at.agent_id = any(${sql.array(
      page.items.map((agent) => agent.id),
      'uuid',
    )})
    order by at.created_at, t.id`);
  const byAgent = Map.groupBy(assignments, (row) => row.agent_id);
  return {
    ...page,
    items: page.items.map((agent) => ({
      ...agent,
      tenants: (byAgent.get(agent.id) ?? []).map(({ agent_id: _agent, ...tenant }) => tenant),
    })),
  };
}
