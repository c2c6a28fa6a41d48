// Database access bound to one request. When the request's deadline passes
// (or its client leaves), the statement it is running is cancelled on the
// server (pg_cancel_backend, see ./canceller.ts), not merely abandoned while PostgreSQL keeps
// working, and no further statement starts: a transaction under way fails
// at its next step and rolls back, so nothing is half-written. A request of a
// route that reads from the replica (./replica.ts) picks its server at its
// first statement and keeps it, so that one answer comes from one server.
// A request's database may act for one tenant (./tenant-scope.ts): its
// statements then see that tenant's rows only, whatever they forget to filter.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { BackendCanceller } from './canceller.ts';
import type { CommonQueryMethods, DatabasePool, DatabasePoolConnection } from './pool.ts';
import { actingFor, allTenants, currentScope } from './tenant-scope.ts';

/** A server's pool and the canceller of its statements (a cancel must reach the server running the statement). */
export type Target = { pool: DatabasePool; canceller: BackendCanceller };

/** How a request that may read the replica reads (made by ReadReplica.routing). */
export type ReadRouting = {
  replica: Target;
  /**
   * Asked at the request's first statement: undefined to read the primary;
   * to read the replica, the moment (performance.now()) up to which the
   * primary's commits are visible there.
   */
  choose(): number | undefined;
  /** Whether a failure on the replica was the replica's doing: the statement then runs again on the primary. */
  unavailable(error: unknown): boolean;
};

/** What API handlers get instead of the pool: every query method, each bound to the request's deadline. */
export type RequestDb = CommonQueryMethods & {
  /** Several statements on one connection. */
  connect<T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T>;
};

/**
 * Which server process runs a request's statements, learnt without asking:
 * every query a pg client sends inside `connect` below records that client's
 * backend pid in the connect's context. (slonik hands out a new connection id
 * on each borrow and never the pg client, so the pid could otherwise only be
 * had by a `select pg_backend_pid()`: a round trip on every request.)
 */
const running = new AsyncLocalStorage<{ pid?: number }>();
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client & { processID: number | null }, ...args: unknown[]) {
  const borrowed = running.getStore();
  if (borrowed && this.processID !== null) borrowed.pid = this.processID;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const queryMethods = [
  'any',
  'anyFirst',
  'exists',
  'many',
  'manyFirst',
  'maybeOne',
  'maybeOneFirst',
  'one',
  'oneFirst',
  'query',
  'record',
  'stream',
] as const;

/**
 * The connection, or a transaction on it, refusing to start a statement once
 * the signal has fired. Everything else (ids, events) is the target's own.
 */
function guarded<C extends CommonQueryMethods>(target: C, signal: AbortSignal): C {
  const guard = Object.create(target) as Record<string, unknown>;
  for (const name of queryMethods) {
    const method = target[name] as (...args: unknown[]) => unknown;
    guard[name] = (...args: unknown[]) => {
      signal.throwIfAborted();
      return method.apply(target, args);
    };
  }
  guard.transaction = <T>(routine: (tx: never) => Promise<T>, retryLimit?: number) => {
    signal.throwIfAborted();
    return target.transaction((tx) => routine(guarded(tx, signal) as never), retryLimit);
  };
  return guard as C;
}

/** A request's database: one per request, so its methods live on the prototype rather than in closures. */
class CancellableDb {
  readonly #primary: Target;
  readonly #signal: AbortSignal;
  readonly #reads: ReadRouting | undefined;
  /** The tenant its statements act for; undefined: the scope of the code that runs them. */
  readonly #tenant: string | undefined;
  /** The server this request reads, once its first statement has chosen. */
  #target: Target | undefined;
  /** Up to when the primary's commits are certainly in what this request read: Infinity unless it read the replica. */
  asOf = Infinity;

  constructor(primary: Target, signal: AbortSignal, options: RequestDbOptions) {
    this.#primary = primary;
    this.#signal = signal;
    this.#reads = options.reads;
    this.#tenant = options.tenant;
  }

  /** Several statements on one connection: each one checks the signal before it starts. */
  connect<T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> {
    return this.#borrow((connection) => routine(guarded(connection, this.#signal)));
  }

  transaction<T>(routine: (tx: never) => Promise<T>, retryLimit?: number): Promise<T> {
    return this.#borrow((connection) =>
      connection.transaction((tx) => routine(guarded(tx, this.#signal) as never), retryLimit),
    );
  }

  /** One statement: checked once, when the connection is borrowed. */
  one(...args: unknown[]) {
    return this.#run('one', args);
  }
  maybeOne(...args: unknown[]) {
    return this.#run('maybeOne', args);
  }
  any(...args: unknown[]) {
    return this.#run('any', args);
  }
  anyFirst(...args: unknown[]) {
    return this.#run('anyFirst', args);
  }
  many(...args: unknown[]) {
    return this.#run('many', args);
  }
  manyFirst(...args: unknown[]) {
    return this.#run('manyFirst', args);
  }
  oneFirst(...args: unknown[]) {
    return this.#run('oneFirst', args);
  }
  maybeOneFirst(...args: unknown[]) {
    return this.#run('maybeOneFirst', args);
  }
  exists(...args: unknown[]) {
    return this.#run('exists', args);
  }
  query(...args: unknown[]) {
    return this.#run('query', args);
  }
  record(...args: unknown[]) {
    return this.#run('record', args);
  }
  stream(...args: unknown[]) {
    return this.#run('stream', args);
  }

  #run(name: (typeof queryMethods)[number], args: unknown[]): Promise<unknown> {
    return this.#borrow((connection) => (connection[name] as (...rest: unknown[]) => Promise<unknown>)(...args));
  }

  /** Borrows a connection for `routine` from the request's server; on the replica, the primary's if it cannot serve. */
  #borrow<T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> {
    const target = (this.#target ??= this.#choose());
    if (target === this.#primary) return this.#borrowFrom(target, routine);
    return this.#borrowFrom(target, routine).catch((error: unknown) => {
      if (this.#signal.aborted || !this.#reads!.unavailable(error)) throw error;
      // The rest of the request reads the primary (asOf stays the replica's: part of the answer may be its).
      this.#target = this.#primary;
      return this.#borrowFrom(this.#primary, routine);
    });
  }

  #choose(): Target {
    const asOf = this.#reads?.choose();
    if (asOf === undefined) return this.#primary;
    this.asOf = asOf;
    return this.#reads!.replica;
  }

  /** Borrows a connection of the target's pool for `routine`, cancelling its statement if the signal fires meanwhile. */
  #borrowFrom<T>(target: Target, routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> {
    const signal = this.#signal;
    signal.throwIfAborted();
    const borrowed: { pid?: number } = {};
    return running.run(borrowed, () =>
      actingFor(this.#tenant ?? currentScope(), () => this.#connect(target, borrowed, routine)),
    );
  }

  #connect<T>(
    target: Target,
    borrowed: { pid?: number },
    routine: (connection: DatabasePoolConnection) => Promise<T>,
  ): Promise<T> {
    const signal = this.#signal;
    return target.pool.connect(async (connection) => {
      let cancelled: Promise<unknown> | undefined;
      const cancel = () => {
        const { pid } = borrowed;
        if (pid !== undefined)
          cancelled = running.exit(() => actingFor(allTenants, () => target.canceller.cancel(pid)));
      };
      signal.addEventListener('abort', cancel, { once: true });
      try {
        // The signal may have fired while the pool made us wait.
        signal.throwIfAborted();
        return await routine(connection);
      } finally {
        signal.removeEventListener('abort', cancel);
        // The connection goes back to the pool only once the cancel has reached
        // its backend, so it cannot land on the next borrower's statement.
        if (cancelled) await cancelled;
      }
    });
  }
}

export type RequestDbOptions = {
  /** With `reads`, the request reads the server its first statement chooses; else the primary. */
  reads?: ReadRouting | undefined;
  /** The tenant (or allTenants) every statement acts for; unset, the scope of the code that runs them. */
  tenant?: string | undefined;
};

/** The request's database on the primary, or, with `reads`, on the server its first statement chooses. */
export function cancellableDb(primary: Target, signal: AbortSignal, options: RequestDbOptions = {}): RequestDb {
  return new CancellableDb(primary, signal, options) as unknown as RequestDb;
}

/**
 * Up to when the primary's commits are certainly in what the request's
 * database has read (performance.now()): Infinity unless it read the replica.
 * The public cache keeps an answer only if that is past every change
 * announced for it.
 */
export function readAsOf(db: CommonQueryMethods): number {
  return db instanceof CancellableDb ? db.asOf : Infinity;
}
