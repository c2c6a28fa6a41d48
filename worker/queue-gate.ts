// Which queue entries a worker process skips beside busy tenants
// (./tenant-slots.ts), by graphile-worker's forbiddenFlags:
// - the kinds outside its pool: WORKER_KINDS names the kinds it takes (every
//   one when empty), so it forbids the flags of every other kind it knows;
// - the kinds and tenants global admins paused (core/jobs/pauses.ts).
// Pauses are read at start and again on each notification on `queue_pauses`
// (LISTEN through core/notifications.ts, which the worker already holds for
// job events): an admin's pause takes hold within a round trip, where a poll
// would let every worker start its jobs for up to a period more, and costs
// no query per second per worker. A notification sent while the connection
// was down is lost, so they are read again whenever listening (re)starts, and
// once a minute in case a change slipped between a read and a reconnection.
// An entry queued without a kind flag (by an older API process during a
// rolling deploy; migration 0051 flagged those queued before) is taken by any
// worker that knows its kind, as before pools.
import { ConfigError } from '../core/config.ts';
import { pausedTargets, pausesChannel } from '../core/jobs/pauses.ts';
import { kindFlag, tenantFlag } from '../core/jobs/queue.ts';
import type { Logger } from '../core/logger.ts';
import type { Notifications } from '../core/notifications.ts';
import type { DatabasePool } from '../db/pool.ts';

const rereadMs = 60_000;
const listenRetryMs = 2_000;

export type QueueGateOptions = {
  /** WORKER_KINDS: the kinds this process takes; empty, all of `known`. */
  kinds: readonly string[];
  /** Every kind this process could run. */
  known: readonly string[];
  db: DatabasePool;
  logger: Logger;
  /**
   * Called when a pause was lifted: graphile-worker, which found nothing the
   * last time it looked, would otherwise wait for its next poll to look again.
   */
  onLifted?: () => void;
};

/** The kinds of `known` a process given WORKER_KINDS `kinds` does not take; a ConfigError for a name it does not know. */
export function kindsOutsidePool(kinds: readonly string[], known: readonly string[]): string[] {
  const unknown = kinds.filter((kind) => !known.includes(kind));
  if (unknown.length)
    throw new ConfigError(
      `Invalid configuration:\n  WORKER_KINDS: unknown kind${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} ` +
        `(known: ${known.join(', ')})`,
    );
  return kinds.length ? known.filter((kind) => !kinds.includes(kind)) : [];
}

export class QueueGate {
  readonly #outside: readonly string[];
  readonly #options: QueueGateOptions;
  #paused: readonly string[] = [];
  #unsubscribe: (() => void) | undefined;
  #unlisten: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: QueueGateOptions) {
    this.#options = options;
    this.#outside = kindsOutsidePool(options.kinds, options.known).map(kindFlag);
  }

  /** The flags to skip: kinds outside the pool, paused kinds and tenants. */
  flags(): string[] {
    return [...this.#outside, ...this.#paused];
  }

  /** Listens, then reads: a pause made between the two is read rather than missed. */
  async start(notifications: Notifications): Promise<void> {
    this.#unsubscribe = notifications.onStateChange((listening) => {
      if (listening) this.#read();
    });
    await this.#listen(notifications);
    this.#timer = setInterval(() => this.#read(), rereadMs);
    this.#timer.unref();
    if (!this.#unlisten) this.#read();
    await this.#reading;
  }

  /** Tried again every few seconds while it cannot be (read once a minute meanwhile). */
  async #listen(notifications: Notifications): Promise<void> {
    try {
      const unlisten = await notifications.listen(pausesChannel, () => this.#read());
      if (this.#stopped) unlisten();
      else this.#unlisten = unlisten;
      this.#read();
    } catch (error) {
      this.#options.logger.warn({ err: (error as Error).message }, 'could not listen for pauses of the queue');
      if (!this.#stopped) setTimeout(() => void this.#listen(notifications), listenRetryMs).unref();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#unsubscribe?.();
    this.#unlisten?.();
    await this.#reading;
  }

  /** Reads the pauses, one read after another (a notification during a read is read again after it). */
  #read(): void {
    this.#reading = this.#reading.then(async () => {
      try {
        const paused = await pausedTargets(this.#options.db);
        const before = this.#paused;
        this.#paused = [...paused.kinds.map(kindFlag), ...paused.tenants.map(tenantFlag)];
        if (before.some((flag) => !this.#paused.includes(flag))) this.#options.onLifted?.();
      } catch (error) {
        // Kept as last read.
        this.#options.logger.warn({ err: (error as Error).message }, 'could not read the pauses of the queue');
      }
    });
  }
}
