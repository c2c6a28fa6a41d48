// A post from an uploaded PDF: its text read page by page (worker/posts/
// pdf-text.ts, on a thread of its own, bounded in pages, time and memory), large type as headings, the rest
// as paragraphs, written as a draft when the job settles. One unit a page.
// The upload is kept in storage only for the job: removed once read, or once
// the PDF is known unreadable (encrypted, broken, no text); a transient
// failure keeps it for the next attempt.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { importLocale, insertImportedPost } from '../../core/posts/imported.ts';
import { renderBlocks, type Block } from '../posts/blocks.ts';
import { sentences } from '../posts/local-transforms.ts';
import { readPdf } from '../posts/pdf-text.ts';
import { JobError, permanent } from '../../core/jobs/errors.ts';
import { defineJob } from './handler.ts';

const input = z.object({
  file_key: z.string().min(1),
  file_name: z.string(),
  max_pages: z.number().int().positive(),
  locale: z.string().optional(),
  title: z.string().optional(),
});

/** The title asked for, else the PDF's own, else its first heading, else its first sentence. */
function titleOf(asked: string | undefined, own: string | null, blocks: Block[], fileName: string) {
  const heading = blocks.find((block) => block.kind === 'heading')?.text;
  const first = blocks[0] ? sentences(blocks[0].text)[0] : undefined;
  return (asked ?? own ?? heading ?? first ?? fileName).slice(0, 300);
}

function excerptOf(blocks: Block[]) {
  const first = blocks.find((block) => block.kind === 'paragraph')?.text ?? '';
  return first.length <= 300 ? first : `${first.slice(0, 299).trimEnd()}…`;
}

export default defineJob({
  input,
  async run(job, context) {
    const { storage, config, job: row } = context;
    const file = await storage.read(job.file_key);
    if (!file) throw permanent('pdf_missing', 'The uploaded PDF is no longer stored; upload it again.');
    const bytes = Buffer.concat(await file.toArray());
    await context.progress(0.1, 'reading the PDF');
    let text: Awaited<ReturnType<typeof readPdf>>;
    try {
      text = await readPdf(new Uint8Array(bytes), {
        maxPages: job.max_pages,
        timeoutMs: config.pdf.timeoutMs,
        memoryMb: config.pdf.memoryMb,
        signal: context.signal,
      });
    } catch (error) {
      if (error instanceof JobError && !error.transient) await storage.delete(job.file_key);
      throw error;
    }
    await storage.delete(job.file_key);
    const title = titleOf(job.title, text.title, text.blocks, job.file_name);
    // The heading that became the title is not repeated as the body's first line.
    const blocks = text.blocks[0]?.text === title ? text.blocks.slice(1) : text.blocks;
    const locale = await importLocale(context.db, row.site_id, job.locale, null);
    const headings = blocks.filter((block) => block.kind === 'heading').length;
    return {
      status: 'succeeded',
      units: text.pages,
      output: { pages: text.pages, title, locale, headings, paragraphs: blocks.length - headings },
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
