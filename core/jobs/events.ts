// Job changes as they happen: the `job_events` channel (a trigger on jobs
// notifies) on the process's notifications connection, fanned out in memory to
// whoever watches a job — a request holding its answer for `Prefer: wait`, an
// event stream, a worker waiting to hear its job was canceled. Nothing polls.
import type { Notifications } from '../notifications.ts';

export type JobEvent = { id: string; status: string };
type Listener = (event: JobEvent) => void;

export class JobEvents {
  readonly #notifications: Notifications;
  readonly #listeners = new Map<string, Set<Listener>>();
  #stop: Promise<() => void> | undefined;

  constructor(notifications: Notifications) {
    this.#notifications = notifications;
    // Changes made while the connection was down were not heard: every watcher looks again.
    notifications.onStateChange((listening) => {
      if (!listening) return;
      for (const [id, listeners] of this.#listeners)
        for (const listener of listeners) listener({ id, status: 'unknown' });
    });
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
      this.#stop ??= this.#notifications
        .listen('job_events', (payload) => this.#dispatch(payload))
        .catch((error: unknown) => {
          this.#stop = undefined;
          throw error;
        });
      await this.#stop;
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /**
   * Waits until `done()` holds (checked first after `firstCheckMs`, then
   * after each change of the job that `wakesOn` — by default every one), `ms`
   * pass or the signal aborts. Answers
   * whether `done()` held. The first check only catches a change made before
   * the wait listened: a caller that has just read the job can let it come a
   * moment later (a change wakes it sooner).
   */
  async waitUntil(
    jobId: string,
    done: () => Promise<boolean>,
    ms: number,
    signal?: AbortSignal,
    firstCheckMs = 0,
    wakesOn: (event: JobEvent) => boolean = () => true,
  ): Promise<boolean> {
    let changed: boolean;
    let wake = () => {};
    const unsubscribe = await this.subscribe(jobId, (event) => {
      if (!wakesOn(event)) return;
      changed = true;
      wake();
    });
    const onAbort = () => wake();
    signal?.addEventListener('abort', onAbort);
    let timer: NodeJS.Timeout | undefined;
    const pause = (pauseMs: number) =>
      new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, pauseMs);
      }).finally(() => clearTimeout(timer));
    try {
      const deadline = Date.now() + ms;
      if (firstCheckMs > 0 && !signal?.aborted) await pause(Math.min(firstCheckMs, ms));
      for (;;) {
        changed = false;
        if (await done()) return true;
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return false;
        // A change that arrived while done() ran is not waited for.
        if (changed) continue;
        await pause(left);
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

  #dispatch(payload: string): void {
    let event: JobEvent;
    try {
      event = JSON.parse(payload) as JobEvent;
    } catch {
      return;
    }
    for (const listener of this.#listeners.get(event.id) ?? []) listener(event);
  }
}
