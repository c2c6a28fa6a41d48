// The events of an agent run, as GET .../runs/{run_id}/events streams them:
// the run started, the model's text as it writes it, each tool call started
// and finished, the answer's citations, the run finished. The worker
// publishes them as they happen (./run-event-channel.ts); those that a
// record keeps — the job, the run's steps — are also made here from that
// record, so that a subscriber who comes late, or comes back, hears them
// too. Live and remade, an event is the same, with the same id.
//
// Ids place each event in the run, as dot-separated numbers compared in
// order (a missing part comes first), so that a stream sends nothing at or
// before the Last-Event-ID it was given:
//   0              run.started
//   t.0            tool_call.started, the call made as step t
//   s.1.a.n        text.delta, piece n of model step s's text, written by attempt a of the job
//   t.2            tool_call.finished
//   l+1.3          citations, after the last step l
//   l+1.4          run.finished
import { z } from 'zod';
import { isFinished, jobErrorSchema, type Job } from '../jobs/model.ts';
import type { ToolCall } from '../providers/capabilities.ts';
import { timestamp } from '../timestamp.ts';
import { citationSchema } from './conversations.ts';
import { stepStatuses, type NewStep, type RunStep } from './run-steps.ts';

const runStarted = z
  .object({
    type: z.literal('run.started'),
    run_id: z.uuid(),
    agent_id: z.uuid(),
    conversation_id: z.uuid(),
    started_at: timestamp,
  })
  .meta({ id: 'AgentRunStarted', description: 'A worker took the run on; the first event' });

const textDelta = z
  .object({
    type: z.literal('text.delta'),
    step: z.number().int().describe('The model step whose text this is'),
    offset: z
      .number()
      .int()
      .describe(
        'Where in the step’s text the piece begins: the text is `text.slice(0, offset) + piece`. It starts at 0 ' +
          'again when the model is asked again for the same step (another provider, a run resumed after its worker died).',
      ),
    text: z.string(),
  })
  .meta({
    id: 'AgentRunTextDelta',
    description:
      'The model’s text as it writes it, a few pieces a second; live only. The answer is the last model step’s text.',
  });

const toolCallFields = {
  step: z.number().int().describe('The step the call is made as (its record in the run’s `steps`)'),
  tool_call_id: z.string(),
  name: z.string().describe('The tool'),
  arguments: z.string().describe('The arguments, JSON text as the model wrote them'),
};

const toolCallStarted = z
  .object({ type: z.literal('tool_call.started'), ...toolCallFields })
  .meta({ id: 'AgentRunToolCallStarted', description: 'A tool the model asked for is being called' });

const toolCallFinished = z
  .object({
    type: z.literal('tool_call.finished'),
    ...toolCallFields,
    status: z.enum(stepStatuses).describe('ok, or refused: the tool said no (403, 404, 422), and the model is told'),
    duration_ms: z.number().int(),
  })
  .meta({
    id: 'AgentRunToolCallFinished',
    description: 'The tool answered; what it answered is the step’s `output` in GET .../runs/{run_id}',
  });

const citationsEvent = z.object({ type: z.literal('citations'), citations: z.array(citationSchema) }).meta({
  id: 'AgentRunCitations',
  description: 'What the answer cites by [n]; before run.finished, when it succeeded',
});

const runFinished = z
  .object({
    type: z.literal('run.finished'),
    status: z.enum(['succeeded', 'failed', 'canceled']),
    answer: z.string().nullable().describe('The answer; null when the run failed or was canceled'),
    stopped: z
      .string()
      .nullable()
      .describe(
        'Why it stopped before the model answered (max_steps, max_tokens, max_credits, agent_budget, tenant_budget)',
      ),
    stopped_because: z.string().nullable(),
    credits_charged: z.number().int(),
    error: jobErrorSchema.nullable(),
  })
  .meta({ id: 'AgentRunFinished', description: 'The run ended; the last event, after which the stream ends' });

export const runEventSchema = z
  .discriminatedUnion('type', [runStarted, textDelta, toolCallStarted, toolCallFinished, citationsEvent, runFinished])
  .meta({ id: 'AgentRunEvent' });

export type RunEvent = z.infer<typeof runEventSchema>;
export type RunEventType = RunEvent['type'];
/** An event with its place in the run. */
export type PlacedEvent = { id: string; event: RunEvent };

export const eventIds = {
  started: '0',
  toolStarted: (step: number) => `${step}.0`,
  text: (step: number, attempt: number, piece: number) => `${step}.1.${attempt}.${piece}`,
  toolFinished: (step: number) => `${step}.2`,
  citations: (lastStep: number) => `${lastStep + 1}.3`,
  finished: (lastStep: number) => `${lastStep + 1}.4`,
};

/** An id's place, or null for anything that is not one of ours (a Last-Event-ID from elsewhere). */
export function eventPlace(id: string | undefined): number[] | null {
  if (!id || !/^\d{1,9}(\.\d{1,9}){0,3}$/.test(id)) return null;
  return id.split('.').map(Number);
}

/** Whether the place `a` comes after `b`. */
export function comesAfter(a: number[], b: number[]): boolean {
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const [x, y] = [a[index] ?? -1, b[index] ?? -1];
    if (x !== y) return x > y;
  }
  return false;
}

// ---- events as the worker makes them, and as a record remakes them ----------------

type RunOf = { runId: string; agentId: string; conversationId: string };

export const startedEvent = (run: RunOf, startedAt: string): PlacedEvent => ({
  id: eventIds.started,
  event: {
    type: 'run.started',
    run_id: run.runId,
    agent_id: run.agentId,
    conversation_id: run.conversationId,
    started_at: startedAt,
  },
});

const callFields = (step: number, call: ToolCall) => ({
  step,
  tool_call_id: call.id,
  name: call.name,
  arguments: call.arguments,
});

export const toolStartedEvent = (step: number, call: ToolCall): PlacedEvent => ({
  id: eventIds.toolStarted(step),
  event: { type: 'tool_call.started', ...callFields(step, call) },
});

export const toolFinishedEvent = (
  call: ToolCall,
  done: Pick<NewStep, 'step' | 'status' | 'duration_ms'>,
): PlacedEvent => ({
  id: eventIds.toolFinished(done.step),
  event: {
    type: 'tool_call.finished',
    ...callFields(done.step, call),
    status: done.status,
    duration_ms: Math.round(done.duration_ms),
  },
});

export const citationsPlacedEvent = (lastStep: number, citations: z.infer<typeof citationSchema>[]): PlacedEvent => ({
  id: eventIds.citations(lastStep),
  event: { type: 'citations', citations },
});

const modelOutput = z.object({
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).catch([]),
});
const runInput = z.object({ agent_id: z.uuid(), conversation_id: z.uuid() });
const runOutput = z
  .object({
    answer: z.string().optional(),
    citations: z.array(citationSchema).catch([]),
    stopped: z.string().nullable().optional(),
    stopped_because: z.string().optional(),
  })
  .loose();

/** The tool calls a model step asked for. */
const callsOf = (step: RunStep): ToolCall[] => {
  const output = modelOutput.safeParse(step.output);
  return output.success ? output.data.tool_calls : [];
};

/**
 * The events the run's record holds: its start, each recorded tool call
 * (and the one it is making now), and, once it has ended, its citations and
 * its end. In order.
 */
export function recordedEvents(job: Job, steps: readonly RunStep[]): PlacedEvent[] {
  const events: PlacedEvent[] = [];
  const input = runInput.safeParse(job.input);
  if (job.started_at && input.success)
    events.push(
      startedEvent(
        { runId: job.id, agentId: input.data.agent_id, conversationId: input.data.conversation_id },
        job.started_at,
      ),
    );
  const asked = new Map<string, ToolCall>();
  const done = new Set<string>();
  for (const step of steps) {
    if (step.kind === 'model') for (const call of callsOf(step)) asked.set(call.id, call);
    if (step.kind !== 'tool') continue;
    const id = step.tool_call_id ?? '';
    done.add(id);
    const call = asked.get(id) ?? { id, name: step.name, arguments: JSON.stringify(step.input ?? {}) };
    events.push(toolStartedEvent(step.step, call), toolFinishedEvent(call, step));
  }
  const lastStep = steps.at(-1)?.step ?? 0;
  if (!isFinished(job.status)) {
    // The loop calls the tools the model asked for in order, each as the next step (worker/agents/loop.ts).
    const lastModel = steps.findLast((step) => step.kind === 'model');
    const next = lastModel && callsOf(lastModel).find((call) => !done.has(call.id));
    if (next) events.push(toolStartedEvent(lastStep + 1, next));
    return events;
  }
  const output = runOutput.safeParse(job.output ?? {});
  const result = output.success ? output.data : undefined;
  if (job.status === 'succeeded') events.push(citationsPlacedEvent(lastStep, result?.citations ?? []));
  events.push({
    id: eventIds.finished(lastStep),
    event: {
      type: 'run.finished',
      status: job.status as 'succeeded' | 'failed' | 'canceled',
      answer: job.status === 'succeeded' ? (result?.answer ?? '') : null,
      stopped: result?.stopped ?? null,
      stopped_because: result?.stopped_because ?? null,
      credits_charged: job.credits_charged,
      error: job.error,
    },
  });
  return events;
}
