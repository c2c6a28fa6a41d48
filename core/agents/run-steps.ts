// The steps of an agent run (db: agent_run_steps), written as each ends: a
// model call with its tokens and cost, a tool call with its answer, a
// retrieval. A run that resumes after its worker died reads them back and
// goes on from the last; a tool call's step is written in the transaction of
// the tool's own writes (worker/agents/tool-steps.ts), so a write and its
// record commit together or not at all.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { timestamp } from '../timestamp.ts';

export const stepKinds = ['model', 'tool', 'retrieval'] as const;

export const runStepSchema = z
  .object({
    step: z.number().int(),
    kind: z.enum(stepKinds),
    name: z.string().describe('The model asked (vendor/model), or the tool called'),
    input: z.unknown().describe('What it was given: a tool’s arguments; for a model, how many messages it read'),
    output: z.unknown().describe('What it answered: the model’s text and tool calls, or the tool’s answer or problem'),
    tool_call_id: z.string().nullable(),
    status: z.enum(['ok', 'refused', 'failed']).describe('refused: the tool said no (403, 404, 422); the run goes on'),
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

/** Records a step; a second record of the same step (a run that resumed) changes nothing, and says so. */
export async function recordStep(
  db: CommonQueryMethods,
  job: { id: string; tenant_id: string },
  step: NewStep,
): Promise<boolean> {
  const inserted = await db.maybeOne(sql.type(z.object({ step: z.number() }))`
    insert into agent_run_steps (job_id, step, tenant_id, kind, name, input, output, tool_call_id, status,
                                 input_tokens, output_tokens, duration_ms, cost)
    values (${job.id}, ${step.step}, ${job.tenant_id}, ${step.kind}, ${step.name}, ${sql.jsonb(step.input as never)},
            ${sql.jsonb(step.output as never)}, ${step.tool_call_id ?? null}, ${step.status}, ${step.input_tokens},
            ${step.output_tokens}, ${Math.round(step.duration_ms)}, ${step.cost})
    on conflict (job_id, step) do nothing
    returning step`);
  return inserted !== null;
}
