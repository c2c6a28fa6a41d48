// The text of a PDF as headings and paragraphs, with pdf.js 6 (bundled by
// unpdf; no system fonts, nothing fetched). pdf.js 6 has no eval path left
// (the `isEvalSupported` option of CVE-2024-4367 is gone with the code it
// guarded: the bundle holds no eval or new Function). pdf.js parses on this
// thread, so the work is bounded: the page count is checked before any page
// is read, pages are read one at a time with a turn of the event loop between
// them, and the whole read has a deadline after which the document is
// destroyed. Headings are told by type size: a line set clearly larger than
// the body text (the size most characters use) is a heading.
import { getDocumentProxy } from 'unpdf';
import { permanent } from '../jobs/errors.ts';
import type { Block } from './blocks.ts';

export type PdfText = { pages: number; title: string | null; blocks: Block[] };
export type PdfLimits = { maxPages: number; timeoutMs: number; signal: AbortSignal };

type Line = { text: string; size: number; y: number };
type TextItem = { str: string; transform: number[]; height: number; hasEOL: boolean };

const headingRatio = 1.25;

/** The page's lines, top to bottom as written, each with its largest type size. */
function linesOf(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  for (const item of items) {
    const y = item.transform[5] ?? 0;
    const size = Math.abs(item.transform[3] ?? item.height) || item.height;
    if (current && Math.abs(current.y - y) > Math.max(current.size, size) * 0.5) {
      lines.push(current);
      current = null;
    }
    if (item.str) {
      current ??= { text: '', size: 0, y };
      current.text += item.str;
      if (item.str.trim()) current.size = Math.max(current.size, size);
    }
    if (item.hasEOL && current) {
      lines.push(current);
      current = null;
    }
  }
  if (current) lines.push(current);
  return lines.map((line) => ({ ...line, text: line.text.replace(/\s+/g, ' ').trim() })).filter((line) => line.text);
}

/** The size most characters are set in: the body text's. */
function bodySize(lines: Line[]): number {
  const chars = new Map<number, number>();
  for (const line of lines)
    chars.set(Math.round(line.size), (chars.get(Math.round(line.size)) ?? 0) + line.text.length);
  return [...chars].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 12;
}

/** Lines into blocks: a heading per large line; a paragraph runs until the type size changes or a gap opens. */
function blocksOf(lines: Line[], body: number): Block[] {
  const blocks: Block[] = [];
  let previous: Line | null = null;
  for (const line of lines) {
    const heading = line.size >= body * headingRatio && line.text.length <= 200;
    const last = blocks.at(-1);
    const continues =
      !heading &&
      last?.kind === 'paragraph' &&
      previous !== null &&
      Math.abs(previous.size - line.size) < 0.5 &&
      Math.abs(previous.y - line.y) <= line.size * 1.8;
    if (continues) last.text = `${last.text.replace(/-$/, '')}${last.text.endsWith('-') ? '' : ' '}${line.text}`;
    else blocks.push({ kind: heading ? 'heading' : 'paragraph', text: line.text });
    previous = line;
  }
  return blocks;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function failureOf(error: unknown) {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'PasswordException')
    return permanent('pdf_encrypted', 'The PDF is protected by a password; upload it unprotected.', error);
  return permanent('pdf_unreadable', 'The file cannot be read as a PDF (damaged or incomplete).', error);
}

export async function readPdf(bytes: Uint8Array, limits: PdfLimits): Promise<PdfText> {
  const timedOut = AbortSignal.timeout(limits.timeoutMs);
  const stop = AbortSignal.any([timedOut, limits.signal]);
  const guard = <T>(work: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const abort = () =>
        reject(
          limits.signal.aborted
            ? limits.signal.reason
            : permanent('pdf_timeout', `Reading the PDF took longer than ${limits.timeoutMs} ms.`),
        );
      if (stop.aborted) return abort();
      stop.addEventListener('abort', abort, { once: true });
      work.then(resolve, reject).finally(() => stop.removeEventListener('abort', abort));
    });
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await guard(
      getDocumentProxy(bytes, {
        useSystemFonts: false,
        disableFontFace: true,
        verbosity: 0,
        maxImageSize: 1,
      }),
    );
  } catch (error) {
    if (stop.aborted) throw error;
    throw failureOf(error);
  }
  try {
    if (pdf.numPages > limits.maxPages)
      throw permanent('pdf_too_many_pages', `The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} are read.`);
    const lines: Line[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      await yieldToEventLoop();
      const page = await guard(pdf.getPage(number));
      const content = await guard(page.getTextContent());
      lines.push(...linesOf(content.items.filter((item) => 'str' in item) as TextItem[]));
      page.cleanup();
    }
    if (lines.length === 0)
      throw permanent(
        'pdf_no_text',
        'The PDF has no text to import (scanned pages are images; text recognition is not done).',
      );
    const info = (await guard(pdf.getMetadata()).catch(() => null))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === 'string' && info.Title.trim() ? info.Title.trim() : null;
    return { pages: pdf.numPages, title, blocks: blocksOf(lines, bodySize(lines)) };
  } catch (error) {
    if (error instanceof Error && error.name === 'JobError') throw error;
    if (stop.aborted) throw error;
    throw failureOf(error);
  } finally {
    await pdf.loadingTask.destroy().catch(() => undefined);
  }
}
