// A post from a web page, and a recrawl of one. One unit: the page fetched.
// create: fetch (SSRF-safe), extract the article, optionally import its lead
// image, and write a draft post when the job settles.
// recrawl: fetch the post's source again, conditionally (its ETag and
// Last-Modified); a 304 or the same article leaves the post as it is; a
// changed one replaces the title and body, the previous kept as a version,
// and the output says what changed.
import { z } from 'zod';
import { insertImportedPost, importLocale, postSource } from '../../core/posts/imported.ts';
import type { PostSource } from '../../core/posts/posts.ts';
import { storedBody } from '../../core/posts/post-writes.ts';
import { lockPostForJob, replaceContent, touchSource } from '../../core/posts/versions.ts';
import { textBlocks } from '../posts/blocks.ts';
import { diffSummary } from '../posts/diff.ts';
import { fetchForJob } from '../posts/fetch-page.ts';
import { fetchLeadImage } from '../posts/lead-image.ts';
import { acceptHtml, articleOf, extracted } from '../posts/page.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext, type Outcome } from '../job.ts';

const input = z.discriminatedUnion('mode', [
  z.object({
    mode: z.literal('create'),
    url: z.string(),
    locale: z.string().optional(),
    import_lead_image: z.boolean().default(false),
  }),
  z.object({ mode: z.literal('recrawl'), post_id: z.uuid() }),
]);

const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : null);
const postGone = () => permanent('post_missing', 'The post was deleted before the job finished.');

async function create(job: Extract<z.output<typeof input>, { mode: 'create' }>, context: JobContext): Promise<Outcome> {
  await context.progress(0.1, 'fetching the page');
  const page = await fetchForJob(job.url, context, { headers: acceptHtml });
  const article = articleOf(page);
  await context.progress(0.5, 'extracting the article');
  const lead =
    job.import_lead_image && article.lead_image_url
      ? await fetchLeadImage(article.lead_image_url, article.title, context)
      : null;
  const locale = await importLocale(context.db, context.job.site_id, job.locale, article.lang);
  const source: PostSource = {
    url: page.url,
    kind: 'url',
    fetched_at: new Date().toISOString(),
    etag: header(page.headers.etag),
    last_modified: header(page.headers['last-modified']),
    byline: article.byline,
    published_at: article.published_at,
  };
  const { job: row } = context;
  return {
    status: 'succeeded',
    units: 1,
    output: {
      url: job.url,
      final_url: page.url,
      locale,
      extracted: extracted(article),
      lead_image:
        lead === null ? null : 'skipped' in lead ? { imported: false, reason: lead.skipped } : { imported: true },
    },
    media: lead && 'draft' in lead ? [lead.draft] : [],
    async commit(tx, made) {
      const post = await insertImportedPost(
        tx,
        { tenantId: row.tenant_id, siteId: row.site_id, userId: row.user_id },
        {
          title: article.title,
          excerpt: article.excerpt,
          body: article.content,
          locale,
          source,
          featuredMediaId: made.media[0]?.id ?? null,
        },
      );
      return { post_id: post.id, slug: post.slug, featured_media_id: post.featured_media_id };
    },
  };
}

async function recrawl(postId: string, context: JobContext): Promise<Outcome> {
  const { db, job } = context;
  const post = await postSource(db, job.site_id, postId);
  if (!post) throw postGone();
  const before = post.source;
  if (before?.kind !== 'url') throw permanent('no_source_url', 'The post was not imported from a URL.');
  await context.progress(0.1, 'fetching the page again');
  const page = await fetchForJob(before.url, context, {
    headers: {
      ...acceptHtml,
      ...(before.etag ? { 'if-none-match': before.etag } : {}),
      ...(before.last_modified ? { 'if-modified-since': before.last_modified } : {}),
    },
  });
  const checked = { ...before, fetched_at: new Date().toISOString() };
  if (page.status === 304) {
    return {
      status: 'succeeded',
      units: 1,
      output: { post_id: postId, url: before.url, changed: false, not_modified: true },
      async commit(tx) {
        if (!(await lockPostForJob(tx, job.site_id, postId))) throw postGone();
        await touchSource(tx, postId, checked);
      },
    };
  }
  const article = articleOf(page);
  const source: PostSource = {
    ...checked,
    etag: header(page.headers.etag),
    last_modified: header(page.headers['last-modified']),
    byline: article.byline,
    published_at: article.published_at,
  };
  const body = storedBody(article.content, 'html');
  return {
    status: 'succeeded',
    units: 1,
    output: {
      post_id: postId,
      url: before.url,
      final_url: page.url,
      not_modified: false,
      extracted: extracted(article),
    },
    // Compared under the post's lock, with what it holds then.
    async commit(tx) {
      const current = await lockPostForJob(tx, job.site_id, postId);
      if (!current) throw postGone();
      if (current.body === body && current.title === article.title && current.body_format === 'html') {
        await touchSource(tx, postId, source);
        return { changed: false, version: current.version };
      }
      const diff = diffSummary(
        { title: current.title, blocks: textBlocks(current.body, current.body_format) },
        { title: article.title, blocks: textBlocks(body, 'html') },
      );
      const updated = await replaceContent(
        tx,
        current,
        { title: article.title.slice(0, 300), body, body_format: 'html', source },
        { reason: 'recrawl', jobId: job.id, userId: job.user_id },
      );
      return { changed: true, previous_version: current.version, version: updated.version, diff };
    },
  };
}

export default defineJob({
  input,
  run: (job, context) => (job.mode === 'create' ? create(job, context) : recrawl(job.post_id, context)),
});
