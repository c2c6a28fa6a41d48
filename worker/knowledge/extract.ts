// The text of a page's or a PDF's knowledge document, taken in the first run
// of its rag_index job with the post importers' own code: a page fetched
// through the SSRF-safe fetcher (worker/posts/fetch-page.ts, the same refusals
// and codes as a post's import) and its article extracted with Readability
// (worker/posts/page.ts, article.ts); a PDF read on its own thread, bounded
// in pages, time and memory (worker/posts/pdf-upload.ts). What the caller
// gave (a title, a locale) stays; the rest comes from the source. The HTML is
// sanitised as a post's is.
import { importLocale } from '../../core/posts/imported.ts';
import { storedBody } from '../../core/posts/post-writes.ts';
import { permanent } from '../../core/jobs/errors.ts';
import type { RagIndexInput } from '../../core/knowledge/indexing.ts';
import type { TakenText } from '../../core/knowledge/source-text.ts';
import type { StoredDocument } from '../../core/knowledge/source.ts';
import type { JobContext } from '../job.ts';
import { renderBlocks } from '../posts/blocks.ts';
import { fetchForJob } from '../posts/fetch-page.ts';
import { acceptHtml, articleOf, extracted } from '../posts/page.ts';
import { readUploadedPdf } from '../posts/pdf-upload.ts';

/** The text taken, and what the job's output says of its source. */
export type Extraction = { text: TakenText; output: Record<string, unknown>; done(): Promise<void> };

async function fromPage(document: StoredDocument, context: JobContext): Promise<Extraction> {
  const url = document.source_url!;
  await context.progress(0.05, 'fetching the page');
  const page = await fetchForJob(url, context, { headers: acceptHtml });
  const article = articleOf(page);
  const locale = document.locale_from_source
    ? await importLocale(context.db, document.site_id, undefined, article.lang)
    : document.locale;
  return {
    text: {
      title: document.title_from_source ? article.title || document.title : document.title,
      body: storedBody(article.content, 'html'),
      format: 'html',
      locale,
      sourceUrl: page.url,
    },
    output: { url, final_url: page.url, locale, extracted: extracted(article) },
    done: async () => undefined,
  };
}

async function fromPdf(document: StoredDocument, input: RagIndexInput, context: JobContext): Promise<Extraction> {
  if (!input.file_key)
    throw permanent('pdf_missing', 'The uploaded PDF was not kept; add the document again with the file.');
  await context.progress(0.05, 'reading the PDF');
  const pdf = await readUploadedPdf(context, {
    key: input.file_key,
    fileName: document.file_name!,
    maxPages: input.max_pages ?? context.config.pdf.maxPages,
    title: document.title_from_source ? undefined : document.title,
  });
  const headings = pdf.blocks.filter((block) => block.kind === 'heading').length;
  return {
    text: {
      title: pdf.title,
      body: renderBlocks(pdf.blocks, 'html'),
      format: 'html',
      locale: document.locale,
      sourceUrl: null,
    },
    output: { file_name: document.file_name, pages: pdf.pages, title: pdf.title, headings },
    // The upload is kept until the text is written, so a run cut short before that reads it again.
    done: () => context.storage.delete(input.file_key!),
  };
}

/** The document's text from its source; the caller writes it, then calls `done`. */
export function extractText(document: StoredDocument, input: RagIndexInput, context: JobContext): Promise<Extraction> {
  return document.kind === 'url' ? fromPage(document, context) : fromPdf(document, input, context);
}
