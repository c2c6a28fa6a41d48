// Database access bound to one request. When the request's deadline passes
// (or its client leaves), the statement it is running is cancelled on the
// server (pg_cancel_backend), not merely abandoned while PostgreSQL keeps
// working, and no further statement starts: a transaction under way fails
// at its next step and rolls back, so nothing is half-written.
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool, type DatabasePoolConnection } from './pool.ts';

/** What API handlers get instead of the pool: every query method, each bound to the request's deadline. */
export type RequestDb = CommonQueryMethods & {
  /** Several statements on one connection. */
  connect<T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T>;
};

const backend = z.object({ pid: z.number() });

// Backend pids by slonik connection id (stable for a physical connection), so
// the pid costs one round trip per connection, not one per request. Ids of
// closed connections are dropped wholesale when the map grows past any pool size.
const pids = new WeakMap<DatabasePool, Map<string, number>>();

async function backendPid(pool: DatabasePool, connection: DatabasePoolConnection): Promise<number> {
  let known = pids.get(pool);
  if (!known || known.size > 1000) pids.set(pool, (known = new Map()));
  let pid = known.get(connection.connectionId);
  if (pid === undefined) {
    pid = await connection.oneFirst(sql.type(backend)`select pg_backend_pid() as pid`);
    known.set(connection.connectionId, pid);
  }
  return pid;
}

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

export function cancellableDb(pool: DatabasePool, signal: AbortSignal): RequestDb {
  const connect = <T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    return pool.connect(async (connection) => {
      const pid = await backendPid(pool, connection);
      let cancelled: Promise<unknown> | undefined;
      const cancel = () => {
        cancelled = pool.query(sql.unsafe`select pg_cancel_backend(${pid})`).catch(() => undefined);
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
    });
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
