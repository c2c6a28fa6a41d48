// Access matrix requests for the agents routes and the MCP server: agents of
// tenant A made directly, and an MCP initialize any signed-in caller may send.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { mediaRow } from '../helpers/content.ts';
import { newTenant } from '../helpers/factories.ts';
import type { MatrixRequest } from './requests.ts';
import type { World } from './world.ts';

/** A fresh agent assigned to tenant A (and to `others`). */
async function agentOfA(world: World, others: string[] = []): Promise<string> {
  const db = world.t.services.db;
  const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into agents (name, tools) values (${`Matrix agent ${world.unique()}`}, '{get_page}') returning id`);
  await db.query(sql.typeAlias('void')`
    insert into agent_tenants (agent_id, tenant_id)
    select ${id}, tenant from unnest(${sql.array([world.tenantA.id, ...others], 'uuid')}) as tenant`);
  return id;
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'matrix', version: '1' } },
};
const streams = { Accept: 'application/json, text/event-stream' };

export const agentRequests: Record<string, (world: World) => Promise<MatrixRequest>> = {
  'GET /api/agents': async () => ({ path: '/api/agents' }),
  'POST /api/agents': async (world) => ({ path: '/api/agents/', body: { name: `Made ${world.unique()}` } }),
  'GET /api/agents/admin/all': async () => ({ path: '/api/agents/admin/all' }),
  'GET /api/agents/tenant/{tenant_id}/count': async (world) => ({
    path: `/api/agents/tenant/${world.tenantA.id}/count`,
  }),
  'GET /api/agents/tenant/{tenant_id}/budgets': async (world) => ({
    path: `/api/agents/tenant/${world.tenantA.id}/budgets`,
  }),
  'PUT /api/agents/tenant/{tenant_id}/budget': async (world) => ({
    path: `/api/agents/tenant/${world.tenantA.id}/budget`,
    body: { monthly_budget: 1000 },
  }),
  'PUT /api/agents/{agent_id}/tenants/{tenant_id}/budget': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/tenants/${world.tenantA.id}/budget`,
    body: { monthly_budget: 500 },
  }),
  'GET /api/agents/{agent_id}': async (world) => ({ path: `/api/agents/${await agentOfA(world)}` }),
  'PATCH /api/agents/{agent_id}': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}`,
    body: { description: 'changed' },
  }),
  'DELETE /api/agents/{agent_id}': async (world) => ({ path: `/api/agents/${await agentOfA(world)}` }),
  'POST /api/agents/{agent_id}/avatar/{media_id}': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/avatar/${await mediaRow(world.t, world.siteA)}`,
  }),
  'GET /api/agents/{agent_id}/tenants': async (world) => ({ path: `/api/agents/${await agentOfA(world)}/tenants` }),
  'POST /api/agents/{agent_id}/tenants/{tenant_id}': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/tenants/${(await newTenant(world.t)).id}`,
  }),
  'DELETE /api/agents/{agent_id}/tenants/{tenant_id}': async (world) => {
    const other = (await newTenant(world.t)).id;
    return { path: `/api/agents/${await agentOfA(world, [other])}/tenants/${other}` };
  },

  // Any caller with a token opens a session; GET and DELETE without one are told to send it.
  'POST /mcp': async () => ({ path: '/mcp', body: initialize, headers: streams }),
  'GET /mcp': async () => ({ path: '/mcp', headers: { Accept: 'text/event-stream' } }),
  'DELETE /mcp': async () => ({ path: '/mcp' }),
};
