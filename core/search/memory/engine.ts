// The thread that holds this process's copies of large sites' search
// documents (./engine-thread.ts) and matches and ranks searches in them. A
// search's own work (sets of thousands of documents, cover density over a
// hundred candidates) and a site's load (seconds of parsing) ran on the API's
// event loop, which then answered nothing else: under 8 clients it was the
// one busy core of two. Here the API's thread reads the query and the
// texts, and this thread does the rest alongside. Started on the first load,
// so a process that never holds a site has no such thread.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../logger.ts';
import type { IndexedDocument, Scope } from './site-index.ts';
import type { After, RankedHit } from './page.ts';
import type { QueryNode } from './tsquery.ts';

/** What a copy holds, as the search thread counts it. */
export type CopyCounts = { size: number; changes: number; bytes: number };
export type PageOptions = { newest: number; atMicros: number; after: After | undefined; pageSize: number };
export type Ranked = { facets: Partial<Record<string, number>>; hits: RankedHit[] };

/** Messages that want an answer, and what each answers. */
export type Asked =
  | { op: 'finish'; copy: number }
  | {
      op: 'apply';
      copy: number;
      removed: { kind: string; itemId: string }[];
      written: { doc: IndexedDocument; vector: string }[];
    }
  | { op: 'rank'; copy: number; query: QueryNode; scope: Scope; options: PageOptions }
  | { op: 'heap' };
export type Answers = { finish: CopyCounts; apply: CopyCounts; rank: Ranked; heap: { limit: number; used: number } };
/** Messages that want none: a batch of a copy being loaded, a copy given up. */
export type Told =
  { op: 'add'; copy: number; docs: IndexedDocument[]; vectors: string[] } | { op: 'drop'; copy: number };
export type Reply = { id: number; value: unknown } | { id: number; error: string };

const startThread = () => new Worker(new URL('./engine-thread.ts', import.meta.url));

export class SearchEngine {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: (value: never) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #nextCopy = 1;
  readonly #logger: Logger;
  readonly #onLost: (error: Error) => void;
  readonly #spawn: () => Worker;
  #closed = false;

  /** `onLost` hears of the thread's end, and with it every copy's; `spawn` starts a thread (another in tests). */
  constructor(logger: Logger, onLost: (error: Error) => void, spawn = startThread) {
    this.#logger = logger;
    this.#onLost = onLost;
    this.#spawn = spawn;
  }

  /** A number for a new copy, never given before in this process. */
  newCopy(): number {
    return this.#nextCopy++;
  }

  /** The thread's answer; rejected (never thrown) when the thread fails it, ends, or is closed. */
  async ask<A extends Asked>(message: A): Promise<Answers[A['op']]> {
    const worker = this.#thread();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  }

  tell(message: Told): void {
    // A copy dropped after the thread ended went with it: no thread is started for that.
    if (message.op === 'drop' && !this.#worker) return;
    this.#thread().postMessage(message);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #thread(): Worker {
    if (this.#closed) throw new Error('the search thread is closed');
    if (this.#worker) return this.#worker;
    const worker = this.#spawn();
    // A process ends when its work does; this thread holds only what can be read again.
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if ('error' in reply) {
        // Its callers fall back to PostgreSQL; a failure is worth knowing of all the same.
        this.#logger.warn({ err: reply.error }, 'the search thread failed a request');
        pending?.reject(new Error(reply.error));
      } else pending?.resolve(reply.value as never);
    });
    worker.on('error', (error: Error) => this.#lost(worker, error));
    worker.on('exit', (code) => this.#lost(worker, new Error(`the search thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #lost(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    if (!this.#closed) this.#onLost(error);
  }
}
