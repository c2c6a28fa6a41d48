// The thread a PDF is read on (./pdf-text.ts starts one per PDF, with a
// deadline and a heap of its own). pdf.js parses a content stream in one
// synchronous run, however long it is: a few kB of deflated text operators
// kept the event loop busy for seconds and grew the heap by a gigabyte. Here
// it blocks only this thread, which is terminated when time is up, and dies
// alone when its heap is full. What it answers is plain data: the text, or
// the failure's code and sentence, with pdf.js's own words kept apart for
// the log.
import { parentPort, workerData } from 'node:worker_threads';
import { getDocumentProxy } from 'unpdf';
import { blocksOf, linesOf, type Line } from './pdf-layout.ts';
import type { PdfText } from './pdf-text.ts';

export type PdfThreadInput = { bytes: Uint8Array; maxPages: number };
export type PdfThreadAnswer =
  { ok: true; text: PdfText } | { ok: false; code: string; message: string; detail?: string };

class Refused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

function failureOf(error: unknown): PdfThreadAnswer {
  if (error instanceof Refused) return { ok: false, code: error.code, message: error.message };
  const detail = String((error as Error | null)?.message ?? error);
  if ((error as { name?: string } | null)?.name === 'PasswordException')
    return {
      ok: false,
      code: 'pdf_encrypted',
      message: 'The PDF is protected by a password; upload it unprotected.',
      detail,
    };
  return {
    ok: false,
    code: 'pdf_unreadable',
    message: 'The file cannot be read as a PDF (damaged or incomplete).',
    detail,
  };
}

async function read({ bytes, maxPages }: PdfThreadInput): Promise<PdfText> {
  const pdf = await getDocumentProxy(bytes, {
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: 0,
    maxImageSize: 1,
  });
  if (pdf.numPages > maxPages)
    throw new Refused('pdf_too_many_pages', `The PDF has ${pdf.numPages} pages; at most ${maxPages} are read.`);
  const lines: Line[] = [];
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number);
    const content = await page.getTextContent();
    lines.push(...linesOf(content.items.filter((item) => 'str' in item)));
    page.cleanup();
  }
  if (lines.length === 0)
    throw new Refused(
      'pdf_no_text',
      'The PDF has no text to import (scanned pages are images; text recognition is not done).',
    );
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc 7 reads `info` as Object: it needs it
  const info = (await pdf.getMetadata().catch(() => null))?.info as { Title?: unknown } | undefined;
  const title = typeof info?.Title === 'string' && info.Title.trim() ? info.Title.trim() : null;
  return { pages: pdf.numPages, title, blocks: blocksOf(lines) };
}

// Terminated, not left to finish: whoever started the thread ends it once it has answered.
const answer = await read(workerData as PdfThreadInput).then(
  (text): PdfThreadAnswer => ({ ok: true, text }),
  failureOf,
);
parentPort!.postMessage(answer);
