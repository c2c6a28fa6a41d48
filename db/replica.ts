// The read replica (DATABASE_READ_URL): a second pool, on a streaming standby
// of the primary, for the routes that declare `reads: 'replica'` (public
// delivery, search and suggestions, statistics). Which server a request reads
// is decided at its first statement (db/cancellable.ts), by three rules:
//
// - the replica is reachable and at most DATABASE_READ_MAX_LAG_MS behind
//   (./replay-watch.ts), else the primary: a reader without a token sees
//   nothing older than that;
// - the caller has no write of their own that the replica has not replayed:
//   after any change request (not a GET) by an actor, this process notes the
//   moment it ended, and that actor's reads go to the primary until the
//   replica holds everything committed then (read-your-writes). Noted in this
//   process's memory, for as long as the lag allowed: behind several API
//   processes, a caller's next request reaching another process is held to
//   the lag bound only;
// - a statement the replica fails for want of a server (stopped, restarting,
//   a query cancelled by a conflict with its replay) runs again on the
//   primary: these routes only read, so nothing fails for it.
//
// The public cache keeps an answer read from the replica only if the replica
// had replayed every change announced for what it shows (PublicCache.set).
import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError } from 'slonik';
import { causes, isDatabaseUnavailable } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { BackendCanceller } from './canceller.ts';
import type { ReadRouting, Target } from './cancellable.ts';
import { createPool } from './pool.ts';
import { ReplayWatch, type ReplayState } from './replay-watch.ts';

export type ReplicaOptions = {
  primaryUrl: string;
  replicaUrl: string;
  maxLagMs: number;
  poolSize: number;
  applicationName: string;
  /** DATABASE_APP_ROLE: the replica's statements act as it too. */
  role?: string | undefined;
};

export type ReplicaState = ReplayState & { maxLagMs: number; reads: { replica: number; primary: number } };

export class ReadReplica {
  readonly #target: Target;
  readonly #watch: ReplayWatch;
  readonly #maxLagMs: number;
  /** The moment each actor's last change request ended, oldest first. */
  readonly #writes = new Map<string, number>();
  #reads = { replica: 0, primary: 0 };

  private constructor(target: Target, watch: ReplayWatch, maxLagMs: number) {
    this.#target = target;
    this.#watch = watch;
    this.#maxLagMs = maxLagMs;
  }

  /** Connects nothing yet: a replica that is down at start only sends every read to the primary. */
  static async create(options: ReplicaOptions, logger: Logger): Promise<ReadReplica> {
    const pool = await createPool(options.replicaUrl, {
      maxPoolSize: options.poolSize,
      applicationName: `${options.applicationName}-replica`,
      role: options.role,
    });
    const canceller = new BackendCanceller(options.replicaUrl);
    const watch = new ReplayWatch(options.primaryUrl, options.replicaUrl, logger);
    return new ReadReplica({ pool, canceller }, watch, options.maxLagMs);
  }

  /** Starts watching the replica's replay (the API does; a worker, which reads nothing from it, never does). */
  start(): void {
    this.#watch.start();
  }

  /** A change request by `actor` has ended: their reads wait until the replica holds what it committed. */
  wrote(actor: string): void {
    const now = performance.now();
    this.#writes.delete(actor);
    this.#writes.set(actor, now);
    // A write older than the lag allowed needs no remembering: a replica that far behind is not read at all.
    for (const [key, at] of this.#writes) {
      if (at >= now - this.#maxLagMs) break;
      this.#writes.delete(key);
    }
  }

  /** How one request (of `actor`, when known) reads: see the rules above. */
  routing(actor: string | undefined): ReadRouting {
    return {
      replica: this.#target,
      choose: () => this.#choose(actor),
      unavailable: (error) => this.#unavailable(error),
    };
  }

  state(): ReplicaState {
    return { ...this.#watch.state(), maxLagMs: this.#maxLagMs, reads: { ...this.#reads } };
  }

  async close(): Promise<void> {
    await this.#watch.close();
    await Promise.allSettled([this.#target.pool.end(), this.#target.canceller.close()]);
  }

  #choose(actor: string | undefined): number | undefined {
    const asOf = this.#watch.freshAsOf;
    const wrote = actor === undefined ? undefined : this.#writes.get(actor);
    if (performance.now() - asOf > this.#maxLagMs || (wrote !== undefined && asOf < wrote)) {
      this.#reads.primary++;
      return undefined;
    }
    this.#reads.replica++;
    return asOf;
  }

  #unavailable(error: unknown): boolean {
    const cause = unavailability(error);
    // A server that is gone is not asked again until the watch reaches it; a cancelled query is only retried.
    if (cause === 'server') this.#watch.lost(error);
    return cause !== undefined;
  }
}

/** What a hot standby answers when replaying WAL had to cancel the query (a conflict with recovery). */
const recoveryConflict = new Set(['40001', '40P01']);

/**
 * Why a statement failed on the replica, when it was the replica's doing:
 * its server could not be reached or went away, or it cancelled the query to
 * go on replaying. Errors of the statement itself are left to the caller.
 * Slonik wraps the driver's error as `cause`.
 */
function unavailability(error: unknown): 'server' | 'conflict' | undefined {
  for (const current of causes(error)) {
    if (typeof current.code === 'string' && recoveryConflict.has(current.code)) return 'conflict';
    if (
      current instanceof ConnectionError ||
      current instanceof BackendTerminatedError ||
      current instanceof BackendTerminatedUnexpectedlyError
    )
      return 'server';
  }
  // node-postgres says so only in words when the server does not answer in time.
  if (
    isDatabaseUnavailable(error) ||
    [...causes(error)].some((cause) => /timeout expired/i.test(String(cause.message)))
  )
    return 'server';
  return undefined;
}
