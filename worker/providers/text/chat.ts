// One JSON answer from a language model: the text providers of
// TEXT_PROVIDERS tried in turn (worker/providers/chain.ts), an instruction
// and the user's content in, a JSON object out, checked against the caller's
// schema. Anything else — not JSON, not the shape asked — fails the job
// permanently (provider_invalid_response): asking again would cost the
// caller's credits for the same garbage. Tokens are what the provider
// reports, else estimated at four characters each. `local` in the chain
// stands for the built-in algorithms, which the callers run themselves when
// no model is named (usesLanguageModel).
import { z } from 'zod';
import type { Config } from '../../../core/config.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { estimateTokens } from '../../../core/posts/post-jobs.ts';
import type { ChatRequest, ContentPart } from '../../../core/providers/capabilities.ts';
import { planFor, type PlannedCall } from '../../../core/providers/plan.ts';
import { tokenCost } from '../../../core/providers/prices.ts';
import { adapterFor } from '../../../core/providers/registry.ts';
import type { JobContext } from '../../job.ts';
import { inTurn } from '../chain.ts';

/** Whether a language model writes text (a vendor is named in TEXT_PROVIDERS), or the built-in algorithms do. */
export const usesLanguageModel = (config: Pick<Config, 'providers'>) =>
  config.providers.chains.text.some((vendor) => vendor !== 'local');

export type ChatJsonRequest<S extends z.ZodType> = {
  instructions: string;
  content: string | ContentPart[];
  answer: S;
  /** The shape asked for, as the failure names it: `{"title": "..."}`. */
  shape: string;
  temperature?: number | undefined;
};

/**
 * What a language model's call needs of its job: the configuration, the
 * signal, where its calls are recorded, and the plan it was submitted with
 * (a text job's, priced at submit); jobs without one use the chain as it is.
 */
export type ChatContext = Pick<JobContext, 'config' | 'db' | 'job' | 'signal' | 'progress' | 'background'> & {
  plan?: PlannedCall[] | undefined;
};

/** Whether the job's plan (or the chain, for a job without one) has a language model, or only the algorithms. */
export const planUsesLanguageModel = (context: ChatContext) =>
  context.plan ? context.plan.some((call) => call.vendor !== 'local') : usesLanguageModel(context.config);

/** The text plan: the chain's vendors, each with its default model (local, the algorithms, is the caller's). */
function modelPlan(context: ChatContext): PlannedCall[] {
  const planned = context.plan ?? planFor(context.config.providers, 'text');
  const plan = planned.filter((call) => call.vendor !== 'local');
  if (!plan.length) throw permanent('text_provider_not_configured', 'No language model is named in TEXT_PROVIDERS.');
  return plan;
}

/** What a model's answer cost: its tokens, and their credits at the model's prices for those read and written. */
export type ChatCost = { tokens: number; credits: number };

/** A model's answer in the words it wrote, with what it cost and who wrote it. */
export async function chatText(
  context: ChatContext,
  request: ChatRequest,
): Promise<{ text: string; call: PlannedCall } & ChatCost> {
  const { value, call } = await inTurn('text', modelPlan(context), context, (call) =>
    call.vendor === 'local'
      ? Promise.reject(permanent('text_provider_not_configured', 'The built-in algorithms write no free text.'))
      : adapterFor(context.config, 'text', call.vendor).chat(request, { model: call.model, signal: context.signal }),
  );
  const usage = value.usage ?? {
    inputTokens: estimateTokens(JSON.stringify(request.messages)),
    outputTokens: estimateTokens(value.content ?? ''),
  };
  const tokens = usage.inputTokens + usage.outputTokens;
  return { text: value.content ?? '', tokens, credits: tokenCost(call, usage), call };
}

export async function chatJson<S extends z.ZodType>(
  context: ChatContext,
  request: ChatJsonRequest<S>,
): Promise<{ answer: z.output<S>; call: PlannedCall } & ChatCost> {
  const { text, tokens, credits, call } = await chatText(context, {
    messages: [
      { role: 'system', content: request.instructions },
      { role: 'user', content: request.content },
    ],
    json: true,
    temperature: request.temperature,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = request.answer.safeParse(json);
  if (!parsed.success)
    throw permanent('provider_invalid_response', `The language model did not answer with ${request.shape}.`);
  return { answer: parsed.data, tokens, credits, call };
}
