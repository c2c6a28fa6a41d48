// The steps of an agent run (db: agent_run_steps), written as each ends: a
// model call with its tokens and cost, a tool call with its answer, a
// retrieval. A run that resumes after its worker died reads them back and
// goes on from the last; a tool call's step is written in the transaction of
// the tool's own writes (worker/agents/tool-steps.ts), so a write and its
// record commit together or not at all. A tool call made over MCP is
// recorded in the same table and shape (recordMcpStep), named by its session
// rather than a job (migration 0050), so admins read one record of what the
// tools did, whoever drove them (./agent-steps.ts).
import { z } from 'zod';
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { unhurried } from '../../db/unhurried.ts';
import type { Actor } from '../actor.ts';
import { timestamp } from '../timestamp.ts';

export const stepKinds = ['model', 'tool', 'retrieval'] as const;
export const stepStatuses = ['ok', 'refused', 'failed'] as const;
/** What made a step: an agent run (a job), or a client's tools/call over MCP (a session). */
export const stepSources = ['run', 'mcp'] as const;

export const runStepSchema = z
  .object({
    step: z.number().int(),
    kind: z.enum(stepKinds),
    name: z.string().describe('The model asked (vendor/model), or the tool called'),
    input: z.unknown().describe('What it was given: a tool’s arguments; for a model, how many messages it read'),
    output: z.unknown().describe('What it answered: the model’s text and tool calls, or the tool’s answer or problem'),
    tool_call_id: z.string().nullable(),
    status: z.enum(stepStatuses).describe('refused: the tool said no (403, 404, 422); the run goes on'),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    duration_ms: z.number().int(),
    cost: z.number().describe('Credits: the model’s price for the step’s tokens'),
    created_at: timestamp,
  })
  .meta({ id: 'AgentRunStep' });

export type RunStep = z.infer<typeof runStepSchema>;

export type NewStep = Omit<RunStep, 'created_at' | 'tool_call_id'> & { tool_call_id?: string | null };

const columns = sql.fragment`step, kind, name, input, output, tool_call_id, status, input_tokens, output_tokens,
  duration_ms, cost::float8 as cost, created_at`;

/** A run's steps, in order. */
export const runSteps = (db: CommonQueryMethods, jobId: string) =>
  db.any(sql.type(runStepSchema)`select ${columns} from agent_run_steps where job_id = ${jobId} order by step`);

/** What a run's recorded steps cost, in credits (not rounded). */
export const stepsCost = (db: CommonQueryMethods, jobId: string) =>
  db.oneFirst(sql.type(z.object({ cost: z.number() }))`
    select coalesce(sum(cost), 0)::float8 as cost from agent_run_steps where job_id = ${jobId}`);

/**
 * Records steps, in one statement; a second record of a step (a run that
 * resumed) changes nothing. A model call's step may be `unhurried`
 * (db/unhurried.ts): a crash of the database itself can lose it only with
 * nothing after it, and the resumed run then asks the model again (the vendor
 * bills that call twice; the run is charged once). A tool call's step, which
 * commits with the tool's writes, never is.
 */
export async function recordSteps(
  db: CommonQueryMethods,
  job: { id: string; tenant_id: string },
  steps: NewStep[],
  options: { unhurried?: boolean } = {},
): Promise<void> {
  const rows = steps.map((step) => ({
    ...step,
    tool_call_id: step.tool_call_id ?? null,
    duration_ms: Math.round(step.duration_ms),
  }));
  await db.query(
    prepared(sql.typeAlias('void')`
      ${options.unhurried ? unhurried : sql.fragment``}
      insert into agent_run_steps (job_id, step, tenant_id, kind, name, input, output, tool_call_id, status,
                                   input_tokens, output_tokens, duration_ms, cost)
      select ${job.id}::uuid, s.step, ${job.tenant_id}::uuid, s.kind, s.name, s.input, s.output, s.tool_call_id,
             s.status, s.input_tokens, s.output_tokens, s.duration_ms, s.cost
      from jsonb_to_recordset(${sql.jsonb(rows as never)}) as s(step int, kind text, name text, input jsonb,
           output jsonb, tool_call_id text, status text, input_tokens int, output_tokens int, duration_ms int,
           cost numeric)
      ${options.unhurried ? sql.fragment`where exists (select from unhurried)` : sql.fragment``}
      order by s.step
      on conflict (job_id, step) do nothing`),
  );
}

/** Records a step (see recordSteps). */
export const recordStep = (
  db: CommonQueryMethods,
  job: { id: string; tenant_id: string },
  step: NewStep,
  options: { unhurried?: boolean } = {},
) => recordSteps(db, job, [step], options);

/** A tools/call over MCP, as it ended: the client was answered `output` (the tool's answer, or `{problem}`). */
export type McpStep = {
  sessionId: string;
  /** The tenant of the site the tool acted on, or the service account's; null when neither is known. */
  tenantId: string | null;
  actor: Actor;
  name: string;
  input: Record<string, unknown>;
  output: unknown;
  /** The id of the client's JSON-RPC request. */
  callId: string | null;
  status: RunStep['status'];
  durationMs: number;
};

/**
 * Records an MCP tool call as a step, with no tokens and no cost (the
 * client's model is not ours). Given the transaction of the tool's writes, it
 * commits with them or not at all, as a run's tool step does.
 */
export async function recordMcpStep(db: CommonQueryMethods, step: McpStep): Promise<void> {
  const { actor } = step;
  const [userId, serviceAccountId] = actor.kind === 'user' ? [actor.userId, null] : [null, actor.serviceAccountId];
  await db.query(sql.typeAlias('void')`
    insert into agent_run_steps (source, mcp_session_id, tenant_id, user_id, service_account_id, kind, name, input,
                                 output, tool_call_id, status, duration_ms)
    values ('mcp', ${step.sessionId}, ${step.tenantId}, ${userId}, ${serviceAccountId}, 'tool', ${step.name},
            ${sql.jsonb(step.input as never)}, ${sql.jsonb(step.output as never)}, ${step.callId}, ${step.status},
            ${Math.round(step.durationMs)})`);
}
