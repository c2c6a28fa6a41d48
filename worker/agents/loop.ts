// The loop of an agent run: the model is asked (through the text chain, so a
// 429 or 5xx passes to the next provider), the tools it calls are carried out
// one step each (./tool-steps.ts), and the model is asked again with their
// answers, until it answers without a tool call or the run's budget (its
// model calls, its tokens, its credits or a monthly budget's rest) is spent. Every step is recorded as it ends: a
// run that resumes after its worker died rebuilds the conversation from its
// steps and goes on from the last, never calling a tool twice, and is billed
// for each recorded model call once.
//
// A canceled run stops at the next step boundary: the model call in flight
// is aborted (the job's signal reaches the adapter), a tool call in flight
// ends with its transaction, and no step begins after the cancel. The model's
// text and each tool call are published as they happen (./run-events.ts).
import { z } from 'zod';
import { Sources } from '../../core/agents/citations.ts';
import { recordStep, type NewStep, type RunStep } from '../../core/agents/run-steps.ts';
import type { RunJobInput } from '../../core/agents/runs.ts';
import { knowledgeSearchResultSchema } from '../../core/knowledge/search.ts';
import type { ChatMessage, ToolCall, ToolDefinition } from '../../core/providers/capabilities.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import { tokenCost } from '../../core/providers/prices.ts';
import { adapterFor, type RemoteVendor } from '../../core/providers/registry.ts';
import { estimateTokens } from '../../core/posts/post-jobs.ts';
import { argumentsSchema, jsonSchemaOf } from '../../api/mcp/tool.ts';
import { toolsFor } from '../../api/mcp/tools.ts';
import { inTurn } from '../providers/chain.ts';
import { toolFinishedEvent, toolStartedEvent } from '../../core/agents/run-events.ts';
import { retrievalStep } from './retrieval.ts';
import { toolStep, type RunScope } from './tool-steps.ts';

export type LoopResult = {
  answer: string;
  sources: Sources;
  stopped: 'max_steps' | 'max_tokens' | 'max_credits' | 'agent_budget' | 'tenant_budget' | null;
  steps: RunStep[] | NewStep[];
  /** The credits its model calls cost, to 6 places: what the run is charged (rounded up). */
  cost: number;
  tokens: number;
  model: PlannedCall | null;
};

/** Arguments the run decides itself are not offered to the model (./tool-steps.ts fills them in), nor waits. */
const notOffered = ['site_identifier', 'agent_id', 'wait', 'webhook', 'webhook_events'];

/** A tool as the model is offered it: its schema is the same for every run, and costs a millisecond to make. */
const offered = new Map<string, ToolDefinition>();

/** The agent's tools as the model is offered them: the MCP tools' own schemas, less what the run decides. */
export function offeredTools(scope: Pick<RunScope, 'agent' | 'site'>): ToolDefinition[] {
  return toolsFor(scope.agent.tools).map((tool) => {
    const known = offered.get(tool.name);
    if (known) return known;
    const shape = Object.fromEntries(
      Object.entries(argumentsSchema(tool).shape).filter(([name]) => !notOffered.includes(name)),
    );
    const made = {
      name: tool.name,
      description: tool.description,
      parameters: jsonSchemaOf(z.strictObject(shape), 'input'),
    };
    offered.set(tool.name, made);
    return made;
  });
}

const guidance = (scope: RunScope) =>
  [
    `You work on the site "${scope.site.name}" through the tools you are given; they act with the access of the member ` +
      'who asked you, and answer a problem when that access does not reach.',
    'When you use what knowledge_search found, cite each passage by its marker, as [1].',
  ].join(' ');

/** What a step tells the model: a tool's answer (knowledge passages with their markers), or its problem. */
function toolMessage(step: Pick<NewStep, 'name' | 'output' | 'tool_call_id'>, sources: Sources): ChatMessage {
  let content: unknown = step.output;
  if (step.name === 'knowledge_search') {
    const found = knowledgeSearchResultSchema.safeParse(step.output);
    if (found.success) content = { passages: sources.add(found.data) };
  }
  return { role: 'tool', toolCallId: step.tool_call_id ?? '', content: JSON.stringify(content) };
}

type ModelOutput = { content: string | null; tool_calls: ToolCall[] };

/**
 * A run's stage is written at most this often: a poller reads what the run is
 * at within a tenth of a second, and a fast model's steps (milliseconds
 * apart) do not each cost a write; the run's events tell each step as it
 * happens.
 */
const stageEveryMs = 100;

/** How many passages a search before the first model call hands the model. */
const passagesGiven = 5;

/** A search made before the model was asked: its passages, with their markers, as a system message. */
function passagesMessage(step: Pick<NewStep, 'output'>, sources: Sources): ChatMessage {
  const found = knowledgeSearchResultSchema.safeParse(step.output);
  const passages = found.success ? sources.add(found.data) : [];
  return {
    role: 'system',
    content: `Passages from your knowledge base that may answer this (cite them by marker, as [1]): ${JSON.stringify(passages)}`,
  };
}

/** What the run read before its first step (worker/jobs/agent_run.ts reads it beside the agent). */
export type RunStart = {
  /** The agent's instructions, after its type's system prompt. */
  instructions: string;
  /** The conversation before this run. */
  history: ChatMessage[];
  /** The steps an earlier attempt of the run recorded. */
  recorded: readonly RunStep[];
};

export async function runLoop(
  scope: RunScope,
  input: RunJobInput,
  plan: PlannedCall[],
  { instructions, history, recorded }: RunStart,
): Promise<LoopResult> {
  const { context, events } = scope;
  const { db, job } = context;
  const sources = new Sources();
  const messages: ChatMessage[] = [
    { role: 'system', content: [instructions, guidance(scope)].filter(Boolean).join('\n\n') },
    ...history,
    { role: 'user', content: input.input },
  ];
  const steps: NewStep[] = [];
  const take = (step: NewStep) => {
    steps.push(step);
    if (step.kind === 'model') {
      const output = step.output as ModelOutput;
      messages.push({ role: 'assistant', content: output.content, toolCalls: output.tool_calls });
    } else if (step.kind === 'tool') messages.push(toolMessage(step, sources));
    else messages.push(passagesMessage(step, sources));
  };
  // An agent that searches first: its knowledge comes before the model is asked anything.
  const first = scope.agent.knowledge_first && (await retrievalStep(scope, input, recorded, passagesGiven));
  for (const step of recorded) take(step);
  if (first && !recorded.includes(first as RunStep)) take(first);

  const tools = offeredTools(scope);
  const tokensUsed = () => steps.reduce((sum, step) => sum + step.input_tokens + step.output_tokens, 0);
  const modelCalls = () => steps.filter((step) => step.kind === 'model').length;
  const cost = () => steps.reduce((sum, step) => sum + step.cost, 0);
  // The model that answered last, also when that was before the worker died.
  const named = (step: NewStep | undefined) => plan.find((call) => `${call.vendor}/${call.model}` === step?.name);
  let model: PlannedCall | null = named(steps.findLast((step) => step.kind === 'model')) ?? null;
  // The model call that asked for tools, until the first of them records it (./tool-steps.ts).
  let unrecorded: NewStep | undefined;
  for (;;) {
    // The step boundary: a run canceled (or a worker stopping) begins no other step.
    context.signal.throwIfAborted();
    const lastModel = steps.findLast((step) => step.kind === 'model');
    const output = lastModel?.output as ModelOutput | undefined;
    const done = new Set(
      steps.flatMap((step) => (step.kind === 'tool' && step.tool_call_id ? [step.tool_call_id] : [])),
    );
    const waiting = output?.tool_calls.filter((call) => !done.has(call.id)) ?? [];
    if (waiting.length > 0) {
      const call = waiting[0]!;
      const number = steps.length + 1;
      await context.progress(Math.min(0.95, modelCalls() / input.max_steps), `step ${number}: ${call.name}`, {
        atMostEveryMs: stageEveryMs,
      });
      events.publish(toolStartedEvent(number, call));
      const called = await toolStep(scope, call, number, unrecorded);
      unrecorded = undefined;
      events.publish(toolFinishedEvent(call, called));
      take(called);
      continue;
    }
    if (output && output.tool_calls.length === 0) return result(output.content ?? '', null);
    if (modelCalls() >= input.max_steps) return result(output?.content ?? '', 'max_steps');
    if (tokensUsed() >= input.max_tokens) return result(output?.content ?? '', 'max_tokens');
    const limit = input.credit_limit;
    if (limit && cost() >= limit.credits)
      return result(output?.content ?? '', limit.by === 'run' ? 'max_credits' : limit.by);

    await context.progress(Math.min(0.95, modelCalls() / input.max_steps), `step ${steps.length + 1}: thinking`, {
      atMostEveryMs: stageEveryMs,
    });
    const started = Date.now();
    const text = events.text(steps.length + 1);
    const { value: answer, call } = await inTurn('text', plan, context, (planned) => {
      text.restart();
      return adapterFor(context.config, 'text', planned.vendor as RemoteVendor).chat(
        { messages, tools: tools.length ? tools : undefined, temperature: scope.agent.temperature, onText: text.hear },
        { model: planned.model, signal: context.signal },
      );
    }).finally(() => text.end());
    model = call;
    const usage = answer.usage ?? {
      inputTokens: estimateTokens(JSON.stringify(messages)),
      outputTokens: estimateTokens((answer.content ?? '') + JSON.stringify(answer.toolCalls)),
    };
    const step: NewStep = {
      step: steps.length + 1,
      kind: 'model',
      name: `${call.vendor}/${call.model}`,
      input: { messages: messages.length, tools: tools.map((tool) => tool.name) },
      output: { content: answer.content, tool_calls: answer.toolCalls } satisfies ModelOutput,
      status: 'ok',
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      duration_ms: Date.now() - started,
      cost: tokenCost(call, usage),
    };
    // A final answer's step goes out behind the run (its settling waits for it); one that asked for tools is
    // recorded with the first of them.
    if (answer.toolCalls.length > 0) unrecorded = step;
    else
      context.background.add('agent run steps', () => recordStep(db, job, step, { unhurried: true }), {
        required: true,
      });
    take(step);
  }

  function result(answer: string, stopped: LoopResult['stopped']): LoopResult {
    return {
      answer,
      sources,
      stopped,
      steps,
      cost: cost(),
      tokens: tokensUsed(),
      model,
    };
  }
}
