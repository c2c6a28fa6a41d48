// Agents (/api/agents): global records global administrators write, assign to
// tenants and give an avatar; members of an assigned tenant (and its service
// accounts) read them, anyone else gets 404. The knowledge-base routes under
// /api/agents/... are another module's (./knowledge-base*.ts).
import { z } from 'zod';
import {
  agentChangesSchema,
  agentListQuery,
  agentSchema,
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  newAgentSchema,
  updateAgent,
} from '../../core/agents/agents.ts';
import {
  agentTenantSchema,
  agentWithTenantsSchema,
  assignAgent,
  countTenantAgents,
  listAgentTenants,
  listAllAgents,
  tenantAgentCountSchema,
  unassignAgent,
} from '../../core/agents/assignments.ts';
import { setAvatar } from '../../core/agents/avatar.ts';
import { agentTools } from '../../core/agents/tools.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const agentParams = uuidParams('agent_id');
const assignmentParams = uuidParams('agent_id', 'tenant_id');
const seeOrChange =
  'Global administrators only; a caller who sees the agent (a member of an assigned tenant) gets 403, anyone else 404.';

export const routes = [
  defineRoute({
    // One route for `/api/agents` and `/api/agents/` (the specification lists both).
    key: 'GET /api/agents',
    access: 'signed-in',
    description:
      'The agents the caller sees, oldest first: those assigned to a tenant the caller belongs to (a service account: its ' +
      'tenant); every agent for global administrators. Filters: `tenant_id` (a tenant of the caller’s), `status`, `q` ' +
      '(part of the name).',
    request: { query: agentListQuery },
    responses: {
      200: { description: 'A page of agents', schema: pageSchema(agentSchema) },
      404: problemResponse('`tenant_id` is not a tenant of the caller’s'),
    },
    async handler({ query }, { db, actor }) {
      return { body: await listAgents(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /api/agents',
    access: 'global-admin',
    description:
      'Creates an agent (global administrators). `tools` names the MCP tools a session configured with the agent may use: ' +
      `${agentTools.join(', ')}. Nobody but global administrators sees it until it is assigned to a tenant.`,
    request: { body: newAgentSchema },
    responses: {
      201: { description: 'The agent', schema: agentSchema, headers: { Location: locationHeader } },
    },
    async handler({ body }, { db, actor }) {
      const agent = await createAgent(db, actor, body);
      return { status: 201, body: agent, headers: { Location: `/api/agents/${agent.id}` } };
    },
  }),

  defineRoute({
    key: 'GET /api/agents/admin/all',
    access: 'global-admin',
    description: 'Every agent, oldest first, with the tenants it is assigned to (global administrators).',
    request: { query: pageQuery },
    responses: { 200: { description: 'A page of agents', schema: pageSchema(agentWithTenantsSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listAllAgents(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'GET /api/agents/tenant/{tenant_id}/count',
    access: 'signed-in',
    description:
      'How many agents are assigned to the tenant: for global administrators and the tenant’s administrators (403 for its ' +
      'other members, 404 for anyone else).',
    request: { params: uuidParams('tenant_id') },
    responses: { 200: { description: 'The count', schema: tenantAgentCountSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await countTenantAgents(db, actor, params.tenant_id) };
    },
  }),

  defineRoute({
    key: 'GET /api/agents/{agent_id}',
    access: 'signed-in',
    description:
      'The agent, for those who see it (members of an assigned tenant, global administrators); 404 otherwise.',
    request: { params: agentParams },
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await getAgent(db, actor, params.agent_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /api/agents/{agent_id}',
    access: 'signed-in',
    description: `Changes what is given; the rest stays. \`avatar_media_id: null\` removes the avatar. ${seeOrChange}`,
    request: { params: agentParams, body: agentChangesSchema },
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await updateAgent(db, actor, params.agent_id, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /api/agents/{agent_id}',
    access: 'signed-in',
    description: `Deletes the agent with its tenant assignments and knowledge base. ${seeOrChange}`,
    request: { params: agentParams },
    responses: { ...noContent('Deleted') },
    async handler({ params }, { db, actor }) {
      await deleteAgent(db, actor, params.agent_id);
      return {};
    },
  }),

  defineRoute({
    key: 'POST /api/agents/{agent_id}/avatar/{media_id}',
    access: 'signed-in',
    description:
      'Makes the media item the agent’s avatar. It must be a ready image the caller can read (404 otherwise), of a site of a ' +
      'tenant the agent is assigned to (409 otherwise). While it is an avatar, deleting the item needs `force=true`, which ' +
      `leaves the agent without one. ${seeOrChange}`,
    request: { params: uuidParams('agent_id', 'media_id') },
    responses: {
      200: { description: 'The agent, with its avatar', schema: agentSchema },
      409: problemResponse('The item is not an image, not ready, or of a tenant the agent is not assigned to'),
    },
    async handler({ params }, { db, actor }) {
      return { body: await setAvatar(db, actor, params.agent_id, params.media_id) };
    },
  }),

  defineRoute({
    key: 'GET /api/agents/{agent_id}/tenants',
    access: 'signed-in',
    description: `The tenants the agent is assigned to, oldest assignment first. ${seeOrChange}`,
    request: { params: agentParams },
    responses: {
      200: { description: 'The assignments', schema: z.object({ items: z.array(agentTenantSchema) }) },
    },
    async handler({ params }, { db, actor }) {
      return { body: await listAgentTenants(db, actor, params.agent_id) };
    },
  }),

  defineRoute({
    key: 'POST /api/agents/{agent_id}/tenants/{tenant_id}',
    access: 'signed-in',
    description:
      'Assigns the agent to the tenant: its members see it from now on. 201 when assigned now, 200 when it already was ' +
      `(nothing changes). ${seeOrChange}`,
    request: { params: assignmentParams },
    responses: {
      200: { description: 'Already assigned', schema: agentTenantSchema },
      201: { description: 'Assigned', schema: agentTenantSchema },
    },
    async handler({ params }, { db, actor }) {
      const { assignment, created } = await assignAgent(db, actor, params.agent_id, params.tenant_id);
      return { status: created ? 201 : 200, body: assignment };
    },
  }),

  defineRoute({
    key: 'DELETE /api/agents/{agent_id}/tenants/{tenant_id}',
    access: 'signed-in',
    description:
      'Removes the agent from the tenant: its members no longer see it. An avatar from one of that tenant’s sites is removed ' +
      'too, and so are the knowledge-base documents (and their chunks) of that tenant’s sites. 404 when it was not ' +
      `assigned. ${seeOrChange}`,
    request: { params: assignmentParams },
    responses: { ...noContent('Removed') },
    async handler({ params }, { db, actor }) {
      await unassignAgent(db, actor, params.agent_id, params.tenant_id);
      return {};
    },
  }),
];
