// Writes that report on a running job rather than do its work — its progress
// and stage, an agent run's events, the record of a call to a provider — go
// out behind the work instead of in front of it, each kind in order in a lane
// of its own: the handler goes on without waiting a database round trip for
// each (an agent run's step used to wait for three). The run waits for all of
// them before it settles (./jobs/run.ts), so nobody reads a stage or an event after
// the job's end. One that fails is logged and is not the job's failure: it
// reports, it does not decide — unless it is marked required (an agent run's
// last model call, whose record the run's charge must match). A worker killed
// before they are out loses them, as it would have lost them a moment earlier.
import type { Logger } from '../core/logger.ts';

export class Background {
  readonly #logger: Logger;
  /** Each lane's last write: a lane's writes go out in order, lanes side by side. */
  readonly #lanes = new Map<string, Promise<void>>();
  /** Writes queued by `latest` that have not begun, by lane: a newer one takes their place. */
  readonly #waiting = new Map<string, () => Promise<unknown>>();
  /** When each `latest` lane last began a write, and its timer when the next waits for its time. */
  readonly #began = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #failure: unknown;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * Queues `write` after the writes before it in its lane. One that is
   * `required` (a record the job's result depends on) fails the run when it
   * fails (`failure`), rather than being logged and forgotten.
   */
  add(lane: string, write: () => Promise<unknown>, options: { required?: boolean } = {}): void {
    const turn = (this.#lanes.get(lane) ?? Promise.resolve()).then(write).then(
      () => undefined,
      (error: unknown) => {
        if (options.required) this.#failure ??= error;
        else this.#logger.warn({ err: error, lane }, 'a background write of the job failed');
      },
    );
    this.#lanes.set(lane, turn);
  }

  /** The first required write's failure, once `done` has resolved; undefined when none failed. */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * Queues `write` unless one queued in the lane by `latest` is still waiting
   * its turn, which then does this one instead: only the latest progress
   * matters, so a handler reporting in a tight loop queues one write, not
   * thousands. Given `everyMs`, the lane begins a write at most that often,
   * the latest report waiting for its time; one still waiting when the job
   * ends is dropped, its end saying more (an agent run's steps, milliseconds
   * apart with a fast model, write a stage now and then rather than each).
   */
  latest(lane: string, write: () => Promise<unknown>, everyMs = 0): void {
    const queued = this.#waiting.has(lane);
    this.#waiting.set(lane, write);
    if (queued) return;
    const go = () => {
      this.#timers.delete(lane);
      this.add(lane, () => {
        const latest = this.#waiting.get(lane);
        this.#waiting.delete(lane);
        this.#began.set(lane, Date.now());
        return latest?.() ?? Promise.resolve();
      });
    };
    const wait = (this.#began.get(lane) ?? -Infinity) + everyMs - Date.now();
    if (wait <= 0) go();
    else this.#timers.set(lane, setTimeout(go, wait));
  }

  /** Resolves once every write queued so far is out (or failed, logged); those waiting for their time are dropped. */
  async done(): Promise<void> {
    for (const [lane, timer] of this.#timers) {
      clearTimeout(timer);
      this.#waiting.delete(lane);
    }
    this.#timers.clear();
    await Promise.all(this.#lanes.values());
  }
}
