// Database access bound to one request: when the request's deadline passes,
// the statement it is running is cancelled on the server (pg_cancel_backend),
// not merely abandoned by the client while PostgreSQL keeps working.
import { z } from 'zod';
import { sql, type DatabasePool, type DatabasePoolConnection, type DatabaseTransactionConnection } from './pool.ts';

export type RequestDb = {
  connect<T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T>;
  transaction<T>(routine: (transaction: DatabaseTransactionConnection) => Promise<T>): Promise<T>;
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

export function cancellableDb(pool: DatabasePool, signal: AbortSignal): RequestDb {
  const connect = <T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    return pool.connect(async (connection) => {
      const pid = await backendPid(pool, connection);
      const cancel = () => {
        pool.query(sql.unsafe`select pg_cancel_backend(${pid})`).catch(() => undefined);
      };
      signal.addEventListener('abort', cancel, { once: true });
      try {
        signal.throwIfAborted();
        return await routine(connection);
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    });
  };
  return {
    connect,
    transaction: (routine) => connect((connection) => connection.transaction(routine)),
  };
}
