// The text of a PDF as headings and paragraphs, with pdf.js 6 (bundled by
// unpdf; no system fonts, nothing fetched). pdf.js 6 has no eval path left
// (the `isEvalSupported` option of CVE-2024-4367 is gone with the code it
// guarded: the bundle holds no eval or new Function).
//
// pdf.js parses synchronously, and a small PDF can take long: a 61 kB one
// held the event loop 9–13 s, a 306 kB one ran 72 s past a 60 s deadline
// that could only be checked between pages — freezing the API where it
// shares the process with the worker (`npm start`). So each PDF is read on a
// thread of its own (./pdf-thread.ts) with a hard deadline (the thread is
// terminated, wherever it is) and a heap cap (the thread dies alone, not the
// process); a canceled job terminates it too. Starting the thread costs
// tens of milliseconds, nothing beside a job that reads a PDF.
import { Worker } from 'node:worker_threads';
import { permanent } from '../../core/jobs/errors.ts';
import type { Block } from './blocks.ts';
import type { PdfThreadAnswer, PdfThreadInput } from './pdf-thread.ts';

export type PdfText = { pages: number; title: string | null; blocks: Block[] };
export type PdfLimits = { maxPages: number; timeoutMs: number; memoryMb: number; signal: AbortSignal };

const thread = new URL('./pdf-thread.ts', import.meta.url);

export async function readPdf(bytes: Uint8Array, limits: PdfLimits): Promise<PdfText> {
  limits.signal.throwIfAborted();
  const input: PdfThreadInput = { bytes, maxPages: limits.maxPages };
  // No inherited options: the process's own (a heap size, say) are not the thread's to take.
  const reader = new Worker(thread, {
    workerData: input,
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
  });
  let timer: NodeJS.Timeout | undefined;
  let aborted: (() => void) | undefined;
  try {
    return await new Promise<PdfText>((resolve, reject) => {
      timer = setTimeout(
        () => reject(permanent('pdf_timeout', `Reading the PDF took longer than ${limits.timeoutMs} ms.`)),
        limits.timeoutMs,
      );
      aborted = () => reject(limits.signal.reason);
      limits.signal.addEventListener('abort', aborted, { once: true });
      reader.once('message', (answer: PdfThreadAnswer) => {
        if (answer.ok) resolve(answer.text);
        else
          reject(
            permanent(answer.code, answer.message, answer.detail === undefined ? undefined : new Error(answer.detail)),
          );
      });
      reader.once('error', (error: Error & { code?: string }) => {
        const full = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
        const message = `Reading the PDF needed more than the ${limits.memoryMb} MB of memory an import may use.`;
        reject(full ? permanent('pdf_too_complex', message, error) : error);
      });
      reader.once('exit', (code) =>
        reject(new Error(`The PDF's thread stopped (exit code ${code}) without an answer.`)),
      );
    });
  } finally {
    clearTimeout(timer);
    if (aborted) limits.signal.removeEventListener('abort', aborted);
    await reader.terminate();
  }
}
