// A generated website's copy through the chat endpoint (./chat.ts), in one
// call: the brief goes in, JSON for every page asked and every post comes
// back, checked against the same schema the templates' copy meets
// (core/website/brief.ts). An answer that misses a page, adds one, or
// brings the wrong number of posts is refused (provider_invalid_response):
// building half of what was asked would not be the website ordered. The
// website system prompt the job was submitted with, if any, replaces the
// built-in opening line (./instructions.ts).
import { websiteCopySchema, type WebsiteCopy, type WebsiteJob } from '../../../core/website/brief.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import type { PlannedCall } from '../../../core/providers/plan.ts';
import { chatJson, type ChatContext } from './chat.ts';
import { instructionsFor } from './instructions.ts';

const shape =
  '{"pages": [{"key": "...", "title": "...", "hero": {"headline": "...", "subheadline": "...", "call_to_action": "..."}, ' +
  '"sections": [{"heading": "...", "body": "..."}], "services": [{"name": "...", "description": "..."}]}], ' +
  '"posts": [{"title": "...", "excerpt": "...", "body": "..."}]}';

export async function websiteCopyWithProvider(
  context: ChatContext,
  brief: WebsiteJob,
  locale: string,
): Promise<{ copy: WebsiteCopy; tokens: number; call: PlannedCall }> {
  // The stored website prompt, when the job was submitted with one, replaces the opening line.
  const builtIn = 'You write the copy of a small business website from a brief.';
  const instructions = instructionsFor(brief.system_prompt?.content, builtIn, [
    `Write one entry in "pages" for each of these page keys, in this order: ${brief.pages.join(', ')}.`,
    'Give the home page a "hero"; give a services page its "services" (at most 8); every page has 1 to 6 "sections" of plain text.',
    `Write exactly ${brief.posts} blog posts in "posts" (body in Markdown, excerpt at most 300 characters).`,
    'Titles and headings at most 200 characters. Invent no prices, addresses or facts the brief does not give.',
    brief.tone ? `Tone: ${brief.tone}.` : '',
    `Write in ${locale}.`,
    `Answer with JSON only: ${shape}`,
  ]);
  const content = `Business: ${brief.business}\nAudience: ${brief.audience ?? 'not given'}`;
  const { answer, tokens, call } = await chatJson(context, { instructions, content, answer: websiteCopySchema, shape });
  const keys = answer.pages.map((page) => page.key);
  if (keys.join(',') !== brief.pages.join(',') || answer.posts.length !== brief.posts)
    throw permanent(
      'provider_invalid_response',
      `The text provider wrote pages ${keys.join(', ') || 'none'} and ${answer.posts.length} posts; ` +
        `${brief.pages.join(', ')} and ${brief.posts} were asked for.`,
    );
  return { copy: answer, tokens, call };
}
