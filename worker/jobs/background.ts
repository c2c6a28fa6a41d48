// Writes that report on a running job rather than do its work — its progress
// and stage, an agent run's events, the record of a call to a provider — go
// out behind the work instead of in front of it, each kind in order in a lane
// of its own: the handler goes on without waiting a database round trip for
// each (an agent run's step used to wait for three). The run waits for all of
// them before it settles (./run.ts), so nobody reads a stage or an event after
// the job's end. One that fails is logged and is not the job's failure: it
// reports, it does not decide — unless it is marked required (an agent run's
// last model call, whose record the run's charge must match). A worker killed
// before they are out loses them, as it would have lost them a moment earlier.
import type { Logger } from '../../core/logger.ts';

export class Background {
  readonly #logger: Logger;
  /** Each lane's last write: a lane's writes go out in order, lanes side by side. */
  readonly #lanes = new Map<string, Promise<void>>();
  /** Writes queued by `replace` that have not begun, by lane: a newer one takes their place. */
  readonly #waiting = new Map<string, () => Promise<unknown>>();
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
   * Queues `write` unless one queued in the lane by `replace` is still waiting
   * its turn, which then does this one instead: only the latest progress
   * matters, so a handler reporting in a tight loop queues one write, not
   * thousands.
   */
  replace(lane: string, write: () => Promise<unknown>): void {
    const queued = this.#waiting.has(lane);
    this.#waiting.set(lane, write);
    if (queued) return;
    this.add(lane, () => {
      const latest = this.#waiting.get(lane)!;
      this.#waiting.delete(lane);
      return latest();
    });
  }

  /** Resolves once every write queued so far is out (or failed, logged). */
  async done(): Promise<void> {
    await Promise.all(this.#lanes.values());
  }
}
