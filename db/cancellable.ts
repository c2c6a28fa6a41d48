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

export function cancellableDb(pool: DatabasePool, signal: AbortSignal): RequestDb {
  const connect = <T>(routine: (connection: DatabasePoolConnection) => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    return pool.connect(async (connection) => {
      const pid = await connection.oneFirst(sql.type(backend)`select pg_backend_pid() as pid`);
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
