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
// How: the looks go to a connection of their own, opened with
// `synchronous_commit = off` for its whole session, so a look is the one
// round trip it is in graphile-worker. (Wrapping each look in a transaction
// with `set local` on graphile-worker's own connection took three round
// trips, which cost more than the flush they saved on a disk that flushes in
// a quarter of a millisecond.) Looks are taken one at a time in a process
// (./tenant-slots.ts), so one connection serves them all.
import pg from 'pg';
import type { Logger } from '../core/logger.ts';
import { withSetting } from '../db/pool.ts';
import { GraphilePool } from './graphile-pool.ts';

type Query = pg.ClientBase['query'];

/** Whether a statement is graphile-worker's look for jobs: its prepared statements are named get_job… */
const isLook = (config: unknown): config is pg.QueryConfig =>
  typeof config === 'object' &&
  config !== null &&
  typeof (config as { name?: unknown }).name === 'string' &&
  (config as { name: string }).name.startsWith('get_job');

/** The connection graphile-worker's looks run on, and what sends them there. */
export class GetJobConnection {
  readonly #pool: GraphilePool;

  constructor(connectionString: string, logger: Logger, waitMs: number) {
    const unflushed = withSetting(connectionString, 'synchronous_commit', 'off');
    this.#pool = new GraphilePool({ connectionString: unflushed, max: 1 }, logger, waitMs);
  }

  /** Sends the client's looks for jobs to the looks' connection; its other statements are left as they are. */
  route = (client: pg.ClientBase): void => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) =>
      args.length === 1 && isLook(args[0]) ? this.#look(args[0]) : query(...args)) as Query;
  };

  async #look(config: pg.QueryConfig): Promise<pg.QueryResult> {
    const client = await this.#pool.connect();
    try {
      const result = await client.query(config);
      client.release();
      return result;
    } catch (error) {
      // A statement that failed may have left the session in any state; the next look gets a new one.
      client.release(error as Error);
      throw error;
    }
  }

  /** From now on a connection is not waited for (stopping must not hang on a database that is away). */
  stopWaiting(): void {
    this.#pool.stopWaiting();
  }

  end(): Promise<void> {
    return this.#pool.end();
  }
}
