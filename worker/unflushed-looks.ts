// graphile-worker's look for a job (its get_job statement, which locks the
// queue entry it finds) commits without waiting for the disk. Every other
// commit of the worker waits for it, as PostgreSQL's default has it.
//
// Why: on an idle worker a job's start waits for two disk flushes, the
// submit's (which must stay: an acknowledged job survives a crash) and the
// look's (docs/scaling.md, "What one job waits for"). A look's lock is the
// one write of the worker whose loss in a database crash costs nothing: the
// entry comes back unlocked and is taken again, and the claim of the job
// (worker/jobs/run.ts) is a synchronous commit made after it, whose flush
// writes the look's commit to disk too, so a job that has started has its
// look on disk. Completions and failures stay synchronous: a failure lost in
// a crash would leave its entry locked by a live worker for graphile-worker's
// four hours.
//
// The setting is local to a transaction around the statement, so it cannot
// leak to the next statement on the connection.
import type pg from 'pg';

type Query = pg.ClientBase['query'];

/** Whether a statement is graphile-worker's look for jobs: its prepared statements are named get_job… */
const isLook = (config: unknown): config is pg.QueryConfig =>
  typeof config === 'object' &&
  config !== null &&
  typeof (config as { name?: unknown }).name === 'string' &&
  (config as { name: string }).name.startsWith('get_job');

/** Makes the client's looks for jobs commit without waiting for the disk; its other statements are left as they are. */
export function lookWithoutFlush(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const unflushed = async (config: pg.QueryConfig) => {
    await query('begin; set local synchronous_commit = off');
    try {
      const result = await (query(config) as Promise<pg.QueryResult>);
      await query('commit');
      return result;
    } catch (error) {
      // A connection that broke has no transaction left to end; the statement's error is the one to report.
      await (query('rollback') as Promise<unknown>).catch(() => undefined);
      throw error;
    }
  };
  client.query = ((...args: unknown[]) =>
    args.length === 1 && isLook(args[0]) ? unflushed(args[0]) : query(...args)) as Query;
}
