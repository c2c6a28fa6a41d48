// Database access bound to one request. When the request's deadline passes
// (or its client leaves), the statement it is running is cancelled on the
// server (pg_cancel_backend, see ./canceller.ts), not merely abandoned while PostgreSQL keeps
// working, and no further statement starts: a transaction under way fails
// at its next step and rolls back, so nothing is half-written.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { BackendCanceller } from './canceller.ts';
import type { CommonQueryMethods, DatabasePool, DatabasePoolConnection } from './pool.ts';

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

export function cancellableDb(pool: DatabasePool, canceller: BackendCanceller, signal: AbortSignal): RequestDb {
  const connect = <T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    const borrowed: { pid?: number } = {};
    return running.run(borrowed, () =>
      pool.connect(async (connection) => {
        let cancelled: Promise<unknown> | undefined;
        const cancel = () => {
          const { pid } = borrowed;
          if (pid === undefined) return;
          cancelled = running.exit(() => canceller.cancel(pid));
        };
        signal.addEventListener('abort', cancel, { once: true });
        try {
          return await routine(guarded(connection, signal));
        } finally {
          signal.removeEventListener('abort', cancel);
          // The connection goes back to the pool only once the cancel has reached
          // its backend, so it cannot land on the next borrower's statement.
          if (cancelled) await cancelled;
        }
      }),
    );
  };
  const db = { connect } as Record<string, unknown>;
  for (const name of queryMethods) {
    db[name] = (...args: unknown[]) =>
      connect((connection) => (connection[name] as (...rest: unknown[]) => Promise<unknown>)(...args));
  }
  db.transaction = <T>(routine: Parameters<CommonQueryMethods['transaction']>[0], retryLimit?: number) =>
    connect((connection) => connection.transaction(routine, retryLimit)) as Promise<T>;
  return db as RequestDb;
}
