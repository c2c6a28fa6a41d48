// A tool call of an agent run, carried out as one step: the tool (the MCP
// server's own, api/mcp/tools.ts) runs with the access of the member who
// started the run, in a transaction that also records the step — so a worker
// killed mid-call leaves neither the write nor its record, and the resumed
// run makes the call again, once. A refusal (403, 404, 422...) is not the
// run's end: it is recorded and told to the model, which may try otherwise.
import type { Actor } from '../../core/actor.ts';
import type { Agent } from '../../core/agents/agents.ts';
import { recordSteps, type NewStep } from '../../core/agents/run-steps.ts';
import { Problem } from '../../core/errors.ts';
import type { ToolCall } from '../../core/providers/capabilities.ts';
import type { Services } from '../../core/services.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { callAgentTool } from '../../api/mcp/call.ts';
import { tools } from '../../api/mcp/tools.ts';
import { isAgentTool } from '../../core/agents/tools.ts';
import { toProblem } from '../../api/middleware/problems.ts';
import type { JobContext } from '../job.ts';
import { toolContext } from './tool-context.ts';
import type { RunPublisher } from './run-events.ts';

export type RunScope = {
  context: JobContext;
  services: Services;
  actor: Actor;
  agent: Agent & { tenant_ids: string[] };
  site: Site;
  /** Where the run's events go out (./run-events.ts): one publisher a run, so they keep their order. */
  events: RunPublisher;
};

/** The arguments the run decides itself, whatever the model wrote: its site, and its agent's knowledge base. */
export const fixedArguments = (scope: Pick<RunScope, 'agent' | 'site'>) => ({
  site_identifier: scope.site.id,
  agent_id: scope.agent.id,
});

/** The arguments as the model wrote them, with the run's own; a problem when they are not a JSON object. */
function argumentsOf(call: ToolCall, scope: RunScope): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments || '{}');
  } catch {
    throw new Problem(422, `The arguments of ${call.name} are not JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Problem(422, `The arguments of ${call.name} are not a JSON object.`);
  const tool = isAgentTool(call.name) ? tools[call.name] : undefined;
  const taken = new Set([
    ...Object.keys(tool?.params?.shape ?? {}),
    ...Object.keys(tool?.query?.shape ?? {}),
    ...Object.keys((tool?.body as { shape?: object } | undefined)?.shape ?? {}),
  ]);
  const fixed = Object.entries(fixedArguments(scope)).filter(([name]) => taken.has(name));
  return { ...(parsed as Record<string, unknown>), ...Object.fromEntries(fixed) };
}

/**
 * Carries out the tool call as step `step`; its record says what the model is
 * told. `asked`, the model call's step that asked for it when that is not
 * recorded yet, is recorded with it, in the same statement: a model call
 * that asks for tools is recorded with the first of them, so that neither
 * waits for a round trip of its own, and a run resumed after a worker died
 * between the two asks the model again rather than finding a tool call
 * without its model call.
 */
export async function toolStep(scope: RunScope, call: ToolCall, step: number, asked?: NewStep): Promise<NewStep> {
  const { context, services, actor, agent } = scope;
  const started = Date.now();
  const base = {
    step,
    kind: 'tool' as const,
    name: call.name,
    tool_call_id: call.id,
    input_tokens: 0,
    output_tokens: 0,
    cost: 0,
  };
  let args: Record<string, unknown> = {};
  try {
    args = argumentsOf(call, scope);
    const tool = isAgentTool(call.name) ? tools[call.name] : undefined;
    if (!tool) throw new Problem(404, `There is no tool ${call.name}.`);
    return await context.db.transaction(async (tx) => {
      const answer = await callAgentTool(tool, args, {
        context: toolContext(context, services, actor, tx, step),
        agent,
        // No client waits: a job a tool makes is answered as it is, and get_job reads it again.
        waitFor: (job) => Promise.resolve(job),
      });
      const done: NewStep = {
        ...base,
        input: args,
        output: JSON.parse(JSON.stringify(answer ?? null)) as unknown,
        status: 'ok',
        duration_ms: Date.now() - started,
      };
      await recordSteps(tx, context.job, [...(asked ? [asked] : []), done]);
      return done;
    });
  } catch (error) {
    const problem = toProblem(error);
    // The database or the worker failing is the run's, not the model's: the job is retried and resumes here.
    if (!problem || problem.status >= 500) throw error;
    const refused: NewStep = {
      ...base,
      input: args,
      output: { problem: problem.toBody(`/tools/${call.name}`) },
      status: 'refused',
      duration_ms: Date.now() - started,
    };
    await recordSteps(context.db, context.job, [...(asked ? [asked] : []), refused]);
    return refused;
  }
}
