// Every recorded step, for global admins (GET /admin/agent-steps): the model
// and tool calls of agent runs and the tool calls clients made over MCP, in
// one list, newest first, so an operator sees what the tools did across
// tenants, whoever drove them. A run's steps are also read with their job
// (GET /admin/jobs/{job_id}); this list is where an MCP call shows.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { before, countOf, pageQuery, toPage } from '../pagination.ts';
import { runStepSchema, stepSources, stepStatuses } from './run-steps.ts';

export const agentStepQuery = pageQuery.extend({
  source: z.enum(stepSources).optional().describe('run: an agent run’s steps; mcp: tool calls made over MCP'),
  job_id: z.uuid().optional().describe('The steps of one run'),
  mcp_session_id: z.uuid().optional().describe('The tool calls of one MCP session (also once the session is over)'),
  tenant_id: z.uuid().optional(),
  name: z.string().min(1).max(200).optional().describe('The tool called (or the model asked), e.g. create_post'),
  status: z.enum(stepStatuses).optional(),
});

export const agentStepSchema = runStepSchema
  .extend({
    id: z.uuid(),
    source: z.enum(stepSources),
    step: z.number().int().nullable().describe('A run’s step number, from 1; null for an MCP call'),
    job_id: z.uuid().nullable().describe('The run (a job of kind agent_run); null for an MCP call'),
    mcp_session_id: z
      .uuid()
      .nullable()
      .describe('The MCP session the call was made in (kept after the session is over); null for a run'),
    tool_call_id: z
      .string()
      .nullable()
      .describe('The tool call’s id in the model’s message (a run), or the JSON-RPC request’s id (MCP)'),
    tenant_id: z
      .uuid()
      .nullable()
      .describe('The tenant it acted for: the run’s, or the tenant of the site an MCP call named (null when none)'),
    user_id: z
      .uuid()
      .nullable()
      .describe('Who called: the user (for a run, who started it); null for a service account'),
    service_account_id: z.uuid().nullable().describe('Who called, when it was a service account'),
  })
  .meta({ id: 'AgentStepRecord' });

export type AgentStepQuery = z.infer<typeof agentStepQuery>;

const optional = (value: string | undefined, column: string) =>
  value === undefined ? sql.fragment`` : sql.fragment`and ${sql.identifier(['s', column])} = ${value}`;

export async function listAgentSteps(db: CommonQueryMethods, actor: Actor, query: AgentStepQuery) {
  requireGlobalAdmin(actor);
  // A run's caller is its job's: its user, or the service account it names (jobs.actor_id).
  const matching = sql.fragment`
    select s.id, s.source, s.step, s.job_id, s.mcp_session_id, s.tenant_id,
           coalesce(s.user_id, j.user_id) as user_id, coalesce(s.service_account_id, a.id) as service_account_id,
           s.kind, s.name, s.input, s.output, s.tool_call_id, s.status, s.input_tokens, s.output_tokens,
           s.duration_ms, s.cost::float8 as cost, s.created_at
    from agent_run_steps s
    left join jobs j on j.id = s.job_id
    left join service_accounts a on a.id = j.actor_id and j.user_id is null
    where true
      ${optional(query.source, 'source')} ${optional(query.job_id, 'job_id')}
      ${optional(query.mcp_session_id, 'mcp_session_id')} ${optional(query.tenant_id, 'tenant_id')}
      ${optional(query.name, 'name')} ${optional(query.status, 'status')}`;
  const rows = await db.any(
    sql.type(agentStepSchema)`${matching} and ${before(query, 's')}
      order by s.created_at desc, s.id desc limit ${query.limit + 1}`,
  );
  return toPage(rows, query, () => countOf(db, matching));
}
