// One JSON answer from the OpenAI-compatible chat endpoint
// (TEXT_PROVIDER=openai): a system instruction and the user's content go
// in, a JSON object comes back and is checked against the caller's schema.
// Anything else — not JSON, not the shape asked — fails the job
// permanently (provider_invalid_response): asking again would cost the
// caller's credits for the same garbage. Tokens are what the provider
// reports, else estimated at four characters each.
import { z } from 'zod';
import type { Config } from '../../../core/config.ts';
import { estimateTokens } from '../../../core/posts/post-jobs.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { callProvider, readJson } from '../../../core/providers/http.ts';

const reply = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z.object({ total_tokens: z.number().int().nonnegative() }).optional(),
});

export type ChatJsonRequest<S extends z.ZodType> = {
  instructions: string;
  content: string;
  answer: S;
  /** The shape asked for, as the failure names it: `{"title": "..."}`. */
  shape: string;
};

export async function chatJson<S extends z.ZodType>(
  config: Config,
  request: ChatJsonRequest<S>,
  signal: AbortSignal,
): Promise<{ answer: z.output<S>; tokens: number }> {
  if (!config.ai.baseUrl)
    throw permanent('not_configured', 'TEXT_PROVIDER=openai needs AI_BASE_URL (and usually AI_API_KEY).');
  const response = await callProvider('The text provider', {
    url: `${config.ai.baseUrl}/chat/completions`,
    apiKey: config.ai.apiKey,
    json: {
      model: config.text.model,
      messages: [
        { role: 'system', content: request.instructions },
        { role: 'user', content: request.content },
      ],
      response_format: { type: 'json_object' },
    },
    timeoutMs: config.ai.timeoutMs,
    signal,
  });
  const body = reply.safeParse(await readJson('The text provider', response));
  let json: unknown;
  try {
    json = body.success ? JSON.parse(body.data.choices[0]!.message.content) : undefined;
  } catch {
    json = undefined;
  }
  const parsed = request.answer.safeParse(json);
  if (!body.success || !parsed.success)
    throw permanent('provider_invalid_response', `The text provider did not answer with ${request.shape}.`);
  const tokens =
    body.data.usage?.total_tokens ?? estimateTokens(request.instructions + request.content + JSON.stringify(json));
  return { answer: parsed.data, tokens };
}
