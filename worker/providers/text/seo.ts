// SEO text through the chat endpoint (./chat.ts): the item's title, body
// (or a media item's words) and the focus keyword go in, `{"text": "..."}`
// comes back. The limit is asked for and then held to: an answer longer than
// asked is cut at a word boundary rather than refused, since the words are
// still the model's and useful. The seo system prompt the job was submitted
// with, if any, comes first in the instructions (./instructions.ts).
import { z } from 'zod';
import { fitAtWord, seoTextLimits, type SeoSource, type SeoTextKind } from '../../../core/seo/generate-text.ts';
import type { PlannedCall } from '../../../core/providers/plan.ts';
import { chatJson, type ChatContext, type ChatCost } from './chat.ts';
import { instructionsFor } from './instructions.ts';

const asked: Record<SeoTextKind, string> = {
  title: 'Write an SEO title for this content: what a search result shows as its headline.',
  meta_description: 'Write a meta description for this content: the summary a search result shows under its title.',
  alt_text:
    'Write alt text for this image from what is known of it: say what it shows, briefly, for someone who cannot see it.',
};

export async function writeSeoTextWithProvider(
  context: ChatContext,
  request: { kind: SeoTextKind; source: SeoSource; keyword?: string | undefined; systemPrompt?: string | undefined },
): Promise<{ text: string; call: PlannedCall } & ChatCost> {
  const { kind, source, keyword } = request;
  const max = seoTextLimits[kind];
  // No built-in guidance beyond the ask itself: a stored seo prompt (brand voice, house rules) goes before it.
  const instructions = instructionsFor(request.systemPrompt, '', [
    asked[kind],
    `At most ${max} characters.`,
    keyword ? `Use the focus keyword "${keyword}"${kind === 'title' ? ', near the start' : ''}.` : '',
    `Write in ${source.locale}.`,
    'Answer with JSON only: {"text": "..."}',
  ]);
  const content = source.media
    ? `Image. Title: ${source.media.title ?? ''}\nCaption: ${source.media.caption ?? ''}\nTags: ${source.media.tags.join(', ')}`
    : `Title: ${source.title ?? ''}\nBody (${source.format}):\n${source.body}`;
  const { answer, tokens, credits, call } = await chatJson(context, {
    instructions,
    content,
    answer: z.object({ text: z.string().trim().min(1).max(2000) }),
    shape: '{"text": "..."}',
  });
  return { text: fitAtWord(answer.text, max), tokens, credits, call };
}
