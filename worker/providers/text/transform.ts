// A post transform through the OpenAI-compatible chat endpoint
// (TEXT_PROVIDER=openai): the post's title, excerpt and body go in, JSON
// comes back — a new body for summarize, rewrite, shorten and expand, a title
// and excerpt for title_excerpt. The body keeps the post's format (HTML is
// sanitised again by the post's writer). Tokens are what the provider
// reports, else estimated at four characters each.
import { z } from 'zod';
import type { Config } from '../../../core/config.ts';
import { estimateTokens, type transformOperations } from '../../../core/posts/post-jobs.ts';
import { permanent } from '../../jobs/errors.ts';
import { callProvider } from '../http.ts';

export type TransformOperation = (typeof transformOperations)[number];

export type TransformRequest = {
  operation: TransformOperation;
  tone?: string | undefined;
  length?: string | undefined;
  post: { title: string; excerpt: string; body: string; body_format: 'html' | 'markdown'; locale: string };
};

export type Transformed = { title?: string; excerpt?: string; body?: string; tokens: number };

const asked: Record<TransformOperation, string> = {
  summarize: 'Write a summary of the post as its new body.',
  rewrite: 'Rewrite the body, keeping its meaning and facts.',
  shorten: 'Shorten the body, keeping the essential points.',
  expand: 'Expand the body with more detail and explanation, inventing no facts.',
  title_excerpt: 'Write a title (at most 120 characters) and an excerpt (at most 300 characters) for the post.',
};

const reply = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z.object({ total_tokens: z.number().int().nonnegative() }).optional(),
});
const bodyAnswer = z.object({ body: z.string().min(1).max(900_000) });
const titleAnswer = z.object({ title: z.string().min(1).max(300), excerpt: z.string().max(2000) });

export async function transformWithProvider(
  config: Config,
  request: TransformRequest,
  signal: AbortSignal,
): Promise<Transformed> {
  if (!config.ai.baseUrl)
    throw permanent('not_configured', 'TEXT_PROVIDER=openai needs AI_BASE_URL (and usually AI_API_KEY).');
  const { post, operation } = request;
  const shape = operation === 'title_excerpt' ? '{"title": "...", "excerpt": "..."}' : '{"body": "..."}';
  const instructions = [
    asked[operation],
    request.tone ? `Tone: ${request.tone}.` : '',
    request.length ? `Length: ${request.length}.` : '',
    `Write in the post's language (${post.locale}).`,
    operation === 'title_excerpt' ? '' : `The body is ${post.body_format}; answer in ${post.body_format} too.`,
    `Answer with JSON only: ${shape}`,
  ]
    .filter(Boolean)
    .join(' ');
  const content = `Title: ${post.title}\nExcerpt: ${post.excerpt}\nBody:\n${post.body}`;
  const response = await callProvider('The text provider', {
    url: `${config.ai.baseUrl}/chat/completions`,
    apiKey: config.ai.apiKey,
    json: {
      model: config.text.model,
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content },
      ],
      response_format: { type: 'json_object' },
    },
    timeoutMs: config.ai.timeoutMs,
    signal,
  });
  const body = reply.safeParse(await response.json().catch(() => null));
  let answer: unknown;
  try {
    answer = body.success ? JSON.parse(body.data.choices[0]!.message.content) : undefined;
  } catch {
    answer = undefined;
  }
  const parsed = (operation === 'title_excerpt' ? titleAnswer : bodyAnswer).safeParse(answer);
  if (!body.success || !parsed.success)
    throw permanent('provider_invalid_response', `The text provider did not answer with ${shape}.`);
  const tokens = body.data.usage?.total_tokens ?? estimateTokens(instructions + content + JSON.stringify(answer));
  return { ...parsed.data, tokens };
}
