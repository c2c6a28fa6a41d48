// Job changes as they happen: one LISTEN connection per process on the
// `job_events` channel (a trigger on jobs notifies), fanned out in memory to
// whoever watches a job — a request holding its answer for `Prefer: wait`, an
// event stream, a worker waiting to hear its job was canceled. Nothing polls.
import pg from 'pg';
import type { Logger } from '../logger.ts';

export type JobEvent = { id: string; status: string };
type Listener = (event: JobEvent) => void;

export class JobEvents {
  readonly #databaseUrl: string;
  readonly #logger: Logger;
  readonly #listeners = new Map<string, Set<Listener>>();
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(databaseUrl: string, logger: Logger) {
    this.#databaseUrl = databaseUrl;
    this.#logger = logger;
  }

  /** Resolves once notifications for the job are being received, so a read after it misses nothing. */
  async subscribe(jobId: string, listener: Listener): Promise<() => void> {
    const listeners = this.#listeners.get(jobId) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(jobId, listeners);
    const unsubscribe = () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.#listeners.delete(jobId);
    };
    try {
      await this.#listen();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /**
   * Waits until `done()` holds (checked now and after each change of the job),
   * `ms` pass or the signal aborts. Answers whether `done()` held.
   */
  async waitUntil(jobId: string, done: () => Promise<boolean>, ms: number, signal?: AbortSignal): Promise<boolean> {
    let changed = false;
    let wake = () => {};
    const unsubscribe = await this.subscribe(jobId, () => {
      changed = true;
      wake();
    });
    const onAbort = () => wake();
    signal?.addEventListener('abort', onAbort);
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = Date.now() + ms;
      for (;;) {
        changed = false;
        if (await done()) return true;
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return false;
        // A change that arrived while done() ran is not waited for.
        if (changed) continue;
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, left);
        });
        clearTimeout(timer);
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      unsubscribe();
    }
  }

  get watched(): number {
    return this.#listeners.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }

  #listen(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('job events are closed'));
    this.#client ??= this.#connect().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
    return this.#client;
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.#databaseUrl, application_name: 'job-events' });
    client.on('notification', (message) => this.#dispatch(message.payload));
    // A lost connection is replaced on the next subscribe, and at once while anyone watches.
    client.on('error', (error) => {
      this.#logger.warn({ err: error.message }, 'job events connection lost');
      this.#client = undefined;
      client.end().catch(() => {});
      if (this.#listeners.size > 0 && !this.#closed) setTimeout(() => void this.#listen().catch(() => {}), 500).unref();
    });
    await client.connect();
    await client.query('listen job_events');
    return client;
  }

  #dispatch(payload: string | undefined): void {
    if (!payload) return;
    let event: JobEvent;
    try {
      event = JSON.parse(payload) as JobEvent;
    } catch {
      return;
    }
    for (const listener of this.#listeners.get(event.id) ?? []) listener(event);
  }
}
