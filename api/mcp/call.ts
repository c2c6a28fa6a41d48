// One call of an agent tool, as the MCP server and an agent run make it: the
// agent must list the tool, the arguments are checked as the mirrored
// endpoint checks its request, the caller is admitted as that endpoint admits
// it (a role or scope it lacks is a 403, another tenant's site a 404), the
// agent works only on the sites of the tenants it is assigned to, and the
// tool acts for its site's tenant in the database. Failures are thrown as
// problems, for the caller to answer in its own way.
import type { Agent } from '../../core/agents/agents.ts';
import { notFound } from '../../core/errors.ts';
import type { Job } from '../../core/jobs/model.ts';
import { withJobFileUrls } from '../../core/media/urls.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { actingFor } from '../../db/tenant-scope.ts';
import { admit, tenantOf } from '../handle.ts';
import { fileLinks } from '../media/urls.ts';
import { parseArguments, type CallContext, type ToolCall, type ToolDefinition } from './tool.ts';
import { notTheAgentsTool } from './tools.ts';

export type AgentToolCall = {
  context: CallContext;
  /** The session's or the run's agent, with the tenants it is assigned to; null in a session without one. */
  agent: (Agent & { tenant_ids: string[] }) | null;
  /** The wait for a job, as the caller waits; the tool's waitFor adds the job's file URLs to what it answers. */
  waitFor: ToolCall['waitFor'];
  /** Told the site the caller was admitted to (undefined for a tool that names none), before the tool runs. */
  admitted?: (site: Site | undefined) => void;
};

export async function callAgentTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  { context, agent, waitFor, admitted }: AgentToolCall,
): Promise<unknown> {
  if (agent && !agent.tools.includes(tool.name)) throw notTheAgentsTool(agent.name, tool.name);
  const input = parseArguments(tool, args);
  const { site, access } = await admit(
    context.services.accessCache,
    context.db,
    tool.route.access,
    context.actor,
    input.params,
  );
  admitted?.(site);
  // An agent works on the sites of the tenants it is assigned to, whoever drives it.
  if (agent && site && !agent.tenant_ids.includes(site.tenant_id))
    throw notFound(`No such site for the agent ${agent.name}.`);
  const answered = jobAnswer(context, site);
  const waited: ToolCall['waitFor'] = async (job, seconds) => answered(await waitFor(job, seconds));
  const call = () => tool.run(input, { context, actor: context.actor, agent, site, access, waitFor: waited });
  // The tool acts for its site's tenant in the database, as its REST route does.
  const tenant = tenantOf(site, context.actor);
  return tenant ? actingFor(tenant, call) : call();
}

/**
 * A job as the site's job endpoints answer it: with the URLs of the media it
 * made (../jobs/answer.ts). A tool that answers a job names its site.
 */
export const jobAnswer =
  (context: Pick<CallContext, 'baseUrl' | 'services'>, site: Site | undefined) =>
  (job: Job): Job => {
    if (!site) throw new Error('A tool that answers a job names its site');
    return withJobFileUrls(fileLinks(context), site, job);
  };
