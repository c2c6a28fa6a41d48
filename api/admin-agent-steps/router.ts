// The recorded steps of agent runs and the tool calls made over MCP, for
// global admins (beyond the specification; see api/extensions.tsv): what the
// tools did across tenants, and who drove them.
import { agentStepQuery, agentStepSchema, listAgentSteps } from '../../core/agents/agent-steps.ts';
import { pageSchema } from '../../core/pagination.ts';
import { defineRoute } from '../route.ts';

export const routes = [
  defineRoute({
    key: 'GET /admin/agent-steps',
    access: 'global-admin',
    description:
      'Every recorded step, newest first: each model call, tool call and retrieval of an agent run, and each tools/call ' +
      'a client made over MCP (with its arguments and answer, or the problem it was refused with). Filter by source, ' +
      'run (job_id), MCP session, tenant, tool name and status.',
    request: { query: agentStepQuery },
    responses: { 200: { description: 'A page of steps', schema: pageSchema(agentStepSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listAgentSteps(db, actor, query) };
    },
  }),
];
