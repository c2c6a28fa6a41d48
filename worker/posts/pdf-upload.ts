// An uploaded PDF read from storage as a titled text, for the jobs that take
// one: a post's import (worker/jobs/pdf_import.ts) and a knowledge document's
// first run (worker/knowledge/extract.ts), so both read and title a PDF the
// same way. The upload is removed once known unreadable (encrypted, broken,
// no text, too long to read); a transient failure keeps it for the next
// attempt; after a good read the caller removes it when it no longer needs it.
import { JobError, permanent } from '../../core/jobs/errors.ts';
import type { Config } from '../../core/config.ts';
import type { Storage } from '../../core/storage/storage.ts';
import type { Block } from './blocks.ts';
import { sentences } from './local-transforms.ts';
import { readPdf } from './pdf-text.ts';

export type UploadedPdf = {
  bytes: Buffer;
  pages: number;
  title: string;
  /** Its text as headings and paragraphs, without the heading that became the title. */
  blocks: Block[];
};

/** The title asked for, else the PDF's own, else its first heading, else its first sentence, else the file's name. */
function titleOf(asked: string | undefined, own: string | null, blocks: Block[], fileName: string) {
  const heading = blocks.find((block) => block.kind === 'heading')?.text;
  const first = blocks[0] ? sentences(blocks[0].text)[0] : undefined;
  return (asked ?? own ?? heading ?? first ?? fileName).slice(0, 300);
}

export async function readUploadedPdf(
  context: { storage: Storage; config: Config; signal: AbortSignal },
  upload: { key: string; fileName: string; maxPages: number; title?: string | undefined },
): Promise<UploadedPdf> {
  const { storage, config } = context;
  const file = await storage.read(upload.key);
  if (!file) throw permanent('pdf_missing', 'The uploaded PDF is no longer stored; upload it again.');
  const bytes = Buffer.concat(await file.toArray());
  let text: Awaited<ReturnType<typeof readPdf>>;
  try {
    text = await readPdf(new Uint8Array(bytes), {
      maxPages: upload.maxPages,
      timeoutMs: config.pdf.timeoutMs,
      memoryMb: config.pdf.memoryMb,
      signal: context.signal,
    });
  } catch (error) {
    if (error instanceof JobError && !error.transient) await storage.delete(upload.key);
    throw error;
  }
  const title = titleOf(upload.title, text.title, text.blocks, upload.fileName);
  // The heading that became the title is not repeated as the body's first line.
  const blocks = text.blocks[0]?.text === title ? text.blocks.slice(1) : text.blocks;
  return { bytes, pages: text.pages, title, blocks };
}
