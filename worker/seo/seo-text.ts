// The seo_text task of the text job: an SEO title, meta description or alt
// text (core/seo/generate-text.ts). With TEXT_PROVIDER=openai the model
// writes it; locally the algorithm of ./local-text.ts, and what it cannot
// do honestly (alt text for an image with no caption or title) fails with
// text_provider_not_configured, charging nothing. With apply, the text is
// written into the item in the settling transaction — through the item's
// own writer, so its version rises and its checks hold — or not at all.
import { findPage } from '../../core/content/pages.ts';
import { updatePage } from '../../core/content/page-writes.ts';
import { Problem } from '../../core/errors.ts';
import { updateMedia } from '../../core/media/library.ts';
import { estimateTokens } from '../../core/posts/post-jobs.ts';
import { updatePost } from '../../core/posts/post-writes.ts';
import { findPost } from '../../core/posts/posts.ts';
import { seoSourceOf, type SeoSource, type SeoTextJobInput } from '../../core/seo/generate-text.ts';
import { jobAccess } from '../../core/jobs/job-access.ts';
import { resolveSite } from '../../core/tenancy/site-access.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { permanent } from '../../core/jobs/errors.ts';
import type { JobContext } from '../job.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import { planUsesLanguageModel } from '../providers/text/chat.ts';
import { writeSeoTextWithProvider } from '../providers/text/seo.ts';
import { writeLocally } from './local-text.ts';
import type { Success } from '../../core/jobs/settle.ts';

type SeoPart = { title?: string; description?: string };

/** A Problem of a writer (the item deleted, say) fails the job with what it said; it will not change by retrying. */
const asJobError = (error: unknown): never => {
  if (!(error instanceof Problem)) throw error;
  throw permanent(error.status === 404 ? 'item_missing' : 'item_rejected', error.message);
};

/** Writes the text into the item, as its owner's PATCH would. */
async function applyText(tx: CommonQueryMethods, context: JobContext, request: SeoTextJobInput, text: string) {
  const access = await jobAccess(tx, context.job);
  if (!access) throw permanent('site_missing', 'The site was deleted before the text was saved.');
  const part: SeoPart = request.kind === 'title' ? { title: text } : { description: text };
  const siteId = access.site.id;
  if (request.post_id) {
    const post = await findPost(tx, siteId, request.post_id, true);
    return { version: (await updatePost(tx, access, post.id, { seo: { ...post.seo, ...part } })).version };
  }
  if (request.page_id) {
    const page = await findPage(tx, siteId, request.page_id, true);
    return { version: (await updatePage(tx, access, page.id, { seo: { ...page.seo, ...part } })).version };
  }
  await updateMedia(tx, access, request.media_id!, { alt: text });
  return {};
}

export async function writeSeoText(
  request: SeoTextJobInput,
  context: JobContext,
): Promise<{ status: 'succeeded' } & Success> {
  const { db, job } = context;
  const site = await resolveSite(db, job.site_id);
  if (!site) throw permanent('site_missing', 'The site was deleted before the text was written.');
  const source: SeoSource = await seoSourceOf(db, site, request).catch(asJobError);
  await context.progress(0.2, request.kind);
  let text: string | null;
  let tokens: number;
  let call: PlannedCall | undefined;
  // A model's tokens at its prices for those read and written; the algorithms' by the 1,000 at the kind's price.
  let credits: number | undefined;
  const chat = { ...context, plan: request.providers };
  const model = planUsesLanguageModel(chat);
  if (model) {
    const systemPrompt = request.system_prompt?.content;
    ({ text, tokens, credits, call } = await writeSeoTextWithProvider(chat, { ...request, source, systemPrompt }));
  } else {
    call = request.providers?.find((planned) => planned.vendor === 'local');
    text = writeLocally(request.kind, source, request.keyword);
    if (text === null && request.kind === 'alt_text')
      throw permanent(
        'text_provider_not_configured',
        'Alt text for an image with no caption or title needs a language model: name one in TEXT_PROVIDERS ' +
          '(e.g. openai, with OPENAI_API_KEY). Without one, alt text is taken from the item’s caption or title.',
      );
    if (text === null) throw permanent('content_empty', 'The content has no title, heading or sentence to write from.');
    tokens = estimateTokens((source.title ?? '') + source.body + text);
  }
  const output = {
    kind: request.kind,
    text,
    length: text.length,
    source: model ? ('model' as const) : ('local' as const),
    provider: call?.vendor ?? 'local',
    ...(model && call ? { model: call.model } : {}),
    placeholder: !model,
    tokens,
    item: source.item,
    ...(model
      ? {}
      : {
          note:
            request.kind === 'alt_text'
              ? 'Made by algorithm (no language model): the media item’s own caption or title.'
              : 'Made by algorithm (no language model): from the content’s own title, headings and first sentences.',
        }),
  };
  const units = Math.max(1, Math.ceil(tokens / 1000));
  if (!request.apply) return { status: 'succeeded', units, credits, call, output: { ...output, applied: false } };
  const written = text;
  return {
    status: 'succeeded',
    units,
    credits,
    call,
    output: { ...output, applied: true },
    commit: (tx) => applyText(tx, context, request, written).catch(asJobError),
  };
}
