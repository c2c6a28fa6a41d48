// A post from an uploaded PDF: its text read page by page (worker/posts/
// pdf-upload.ts and pdf-text.ts, on a thread of its own, bounded in pages, time and memory), large type as headings, the rest
// as paragraphs, written as a draft when the job settles. One unit a page.
// The upload is kept in storage only for the job: removed once read, or once
// the PDF is known unreadable (encrypted, broken, no text); a transient
// failure keeps it for the next attempt.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { importLocale, insertImportedPost } from '../../core/posts/imported.ts';
import { renderBlocks, type Block } from '../posts/blocks.ts';
import { readUploadedPdf } from '../posts/pdf-upload.ts';
import { defineJob } from '../job.ts';

const input = z.object({
  file_key: z.string().min(1),
  file_name: z.string(),
  max_pages: z.number().int().positive(),
  locale: z.string().optional(),
  title: z.string().optional(),
});

function excerptOf(blocks: Block[]) {
  const first = blocks.find((block) => block.kind === 'paragraph')?.text ?? '';
  return first.length <= 300 ? first : `${first.slice(0, 299).trimEnd()}…`;
}

export default defineJob({
  input,
  async run(job, context) {
    const { storage, job: row } = context;
    await context.progress(0.1, 'reading the PDF');
    const pdf = await readUploadedPdf(context, {
      key: job.file_key,
      fileName: job.file_name,
      maxPages: job.max_pages,
      title: job.title,
    });
    await storage.delete(job.file_key);
    const { bytes, title, blocks } = pdf;
    const locale = await importLocale(context.db, row.site_id, job.locale, null);
    const headings = blocks.filter((block) => block.kind === 'heading').length;
    return {
      status: 'succeeded',
      units: pdf.pages,
      output: { pages: pdf.pages, title, locale, headings, paragraphs: blocks.length - headings },
      async commit(tx) {
        const post = await insertImportedPost(
          tx,
          { tenantId: row.tenant_id, siteId: row.site_id, userId: row.user_id },
          {
            title,
            excerpt: excerptOf(blocks),
            body: renderBlocks(blocks, 'html'),
            locale,
            source: {
              url: job.file_name,
              kind: 'pdf',
              fetched_at: new Date().toISOString(),
              // The file's own fingerprint: the same PDF uploaded again has the same one.
              etag: `"sha256-${createHash('sha256').update(bytes).digest('hex')}"`,
            },
            featuredMediaId: null,
          },
        );
        return { post_id: post.id, slug: post.slug };
      },
    };
  },
});
