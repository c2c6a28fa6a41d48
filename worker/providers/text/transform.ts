// A post transform through the OpenAI-compatible chat endpoint
// (TEXT_PROVIDER=openai): the post's title, excerpt and body go in, JSON
// comes back — a new body for summarize, rewrite, shorten and expand, a title
// and excerpt for title_excerpt. The body keeps the post's format (HTML is
// sanitised again by the post's writer). Tokens are what the provider
// reports, else estimated at four characters each. The transform system
// prompt the job was submitted with, if any, comes first (./instructions.ts).
import { z } from 'zod';
import type { transformOperations } from '../../../core/posts/post-jobs.ts';
import type { PlannedCall } from '../../../core/providers/plan.ts';
import { chatJson, type ChatContext } from './chat.ts';
import { instructionsFor } from './instructions.ts';

export type TransformOperation = (typeof transformOperations)[number];

export type TransformRequest = {
  operation: TransformOperation;
  tone?: string | undefined;
  length?: string | undefined;
  /** The transform system prompt the job was submitted with. */
  systemPrompt?: string | undefined;
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

const bodyAnswer = z.object({ body: z.string().min(1).max(900_000) });
const titleAnswer = z.object({ title: z.string().min(1).max(300), excerpt: z.string().max(2000) });

export async function transformWithProvider(
  context: ChatContext,
  request: TransformRequest,
): Promise<Transformed & { call: PlannedCall; credits: number }> {
  const { post, operation } = request;
  const shape = operation === 'title_excerpt' ? '{"title": "...", "excerpt": "..."}' : '{"body": "..."}';
  // No built-in guidance beyond the ask itself: a stored transform prompt (house style) goes before it.
  const instructions = instructionsFor(request.systemPrompt, '', [
    asked[operation],
    request.tone ? `Tone: ${request.tone}.` : '',
    request.length ? `Length: ${request.length}.` : '',
    `Write in the post's language (${post.locale}).`,
    operation === 'title_excerpt' ? '' : `The body is ${post.body_format}; answer in ${post.body_format} too.`,
    `Answer with JSON only: ${shape}`,
  ]);
  const content = `Title: ${post.title}\nExcerpt: ${post.excerpt}\nBody:\n${post.body}`;
  const answer = operation === 'title_excerpt' ? titleAnswer : bodyAnswer;
  const { answer: parsed, tokens, credits, call } = await chatJson(context, { instructions, content, answer, shape });
  return { ...parsed, tokens, credits, call };
}
