// Text jobs, paid per 1,000 tokens, one task each: transforming a post
// (post_transform: summarize, rewrite, shorten, expand, title_excerpt), and
// SEO text (seo_text: worker/seo/seo-text.ts). For a post transform, with
// TEXT_PROVIDER=openai the model does it; locally only what an algorithm does
// honestly (an extractive summary; a title and excerpt from the first
// heading and sentences), and the rest fails with text_provider_not_configured,
// charging nothing. The result replaces the post's content when the job
// settles (the previous content kept as a version), unless apply is false —
// and not if someone changed the post meanwhile (post_changed).
import { z } from 'zod';
import { estimateTokens, transformLengths, transformOperations } from '../../core/posts/post-jobs.ts';
import { findPost, type postSchema } from '../../core/posts/posts.ts';
import { lockPostForJob, replaceContent, type Replacement } from '../../core/posts/versions.ts';
import { renderBlocks, textBlocks } from '../posts/blocks.ts';
import { extractiveSummary, summaryLengths, titleAndExcerpt } from '../posts/local-transforms.ts';
import { planField, type PlannedCall } from '../../core/providers/plan.ts';
import { planUsesLanguageModel } from '../providers/text/chat.ts';
import { transformWithProvider } from '../providers/text/transform.ts';
import { writeSeoText } from '../seo/seo-text.ts';
import { seoTextJobInput } from '../../core/seo/generate-text.ts';
import { jobSystemPromptSchema } from '../../core/system-prompts/for-jobs.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { Problem } from '../../core/errors.ts';
import { defineJob, type JobContext } from '../job.ts';

const postTransform = z.object({
  task: z.literal('post_transform'),
  post_id: z.uuid(),
  operation: z.enum(transformOperations),
  tone: z.string().optional(),
  length: z.enum(transformLengths).optional(),
  apply: z.boolean().default(true),
  system_prompt: jobSystemPromptSchema.optional(),
  providers: planField,
});
type PostTransform = z.output<typeof postTransform>;
type Post = z.infer<typeof postSchema>;

/** The local result, or a failure naming what to configure. */
function transformLocally(request: PostTransform, post: Post): Replacement {
  const blocks = textBlocks(post.body, post.body_format);
  if (request.operation === 'summarize') {
    const summary = extractiveSummary(blocks, summaryLengths[request.length ?? 'medium'], post.locale);
    if (summary.length === 0) throw permanent('post_empty', 'The post has no text to summarise.');
    return { body: renderBlocks([{ kind: 'paragraph', text: summary.join(' ') }], post.body_format) };
  }
  if (request.operation === 'title_excerpt') {
    const found = titleAndExcerpt(blocks, post.locale);
    if (!found) throw permanent('post_empty', 'The post has no heading or text to take a title from.');
    return found;
  }
  throw permanent(
    'text_provider_not_configured',
    `${request.operation} needs a language model: name one in TEXT_PROVIDERS (e.g. openai, with OPENAI_API_KEY). ` +
      'Without one, summarize and title_excerpt work.',
  );
}

async function transformPost(request: PostTransform, context: JobContext) {
  const { db, job } = context;
  const post = await findPost(db, job.site_id, request.post_id).catch((error: unknown) => {
    if (error instanceof Problem && error.status === 404)
      throw permanent('post_missing', 'The post was deleted before it was transformed.');
    throw error;
  });
  await context.progress(0.2, request.operation);
  const given = post.title + post.excerpt + post.body;
  let result: Replacement;
  let tokens: number;
  let source: string;
  let model: string | undefined;
  let call: PlannedCall | undefined;
  // A model's tokens at its prices for those read and written; the algorithms' by the 1,000 at the kind's price.
  let credits: number | undefined;
  const chat = { ...context, plan: request.providers };
  if (planUsesLanguageModel(chat)) {
    const systemPrompt = request.system_prompt?.content;
    const {
      tokens: used,
      credits: cost,
      call: made,
      ...fields
    } = await transformWithProvider(chat, { ...request, post, systemPrompt });
    [result, tokens, credits, source, model, call] = [fields, used, cost, made.vendor, made.model, made];
  } else {
    call = request.providers?.find((planned) => planned.vendor === 'local');
    result = transformLocally(request, post);
    tokens = estimateTokens(given + (result.title ?? '') + (result.excerpt ?? '') + (result.body ?? ''));
    source = 'local';
  }
  const output = {
    post_id: post.id,
    operation: request.operation,
    provider: source,
    ...(model ? { model } : {}),
    placeholder: source === 'local',
    tokens,
    result,
    ...(source === 'local'
      ? { note: 'Made by algorithm (no language model): sentences taken from the post itself.' }
      : {}),
  };
  const units = Math.max(1, Math.ceil(tokens / 1000));
  if (!request.apply)
    return { status: 'succeeded' as const, units, credits, call, output: { ...output, applied: false } };
  return {
    status: 'succeeded' as const,
    units,
    credits,
    call,
    output: { ...output, applied: true },
    async commit(tx: Parameters<typeof lockPostForJob>[0]) {
      const current = await lockPostForJob(tx, job.site_id, post.id);
      if (!current) throw permanent('post_missing', 'The post was deleted before the result was saved.');
      if (current.version !== post.version)
        throw permanent('post_changed', 'The post changed while it was being transformed; run the transform again.');
      const updated = await replaceContent(tx, current, result, {
        reason: 'transform',
        jobId: job.id,
        userId: job.user_id,
      });
      return { previous_version: current.version, version: updated.version };
    },
  };
}

export default defineJob({
  input: z.discriminatedUnion('task', [postTransform, seoTextJobInput]),
  run: (request, context) =>
    request.task === 'post_transform' ? transformPost(request, context) : writeSeoText(request, context),
});
