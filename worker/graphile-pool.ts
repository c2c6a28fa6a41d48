// graphile-worker's connections, from a pool that waits for a database that
// cannot be reached (stopped, restarting) instead of failing at once.
// graphile-worker's batched completions and failures are tried again when
// they fail (with the fix in patches/graphile-worker+0.18.0.patch: 0.18 gave
// them one try, then stopped the worker pool for good, "the queue is in an
// inconsistent state", while the process lived on with its jobs locked). Each
// try takes a connection from here, so a completion, claim or failure made
// while the database is away waits for it and goes through once it is back,
// and listening for new jobs resumes as soon as it is; past `waitMs` the
// error is graphile-worker's.
import pg from 'pg';
import { isDatabaseUnavailable } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

type Callback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

export class GraphilePool extends pg.Pool {
  readonly #logger: Logger;
  readonly #waitMs: number;
  #waiting = 0;
  #stopping = false;

  constructor(config: pg.PoolConfig, logger: Logger, waitMs: number) {
    super(config);
    this.#logger = logger;
    this.#waitMs = waitMs;
    // A connection that dies (the database restarted) is dropped by pg; without listeners its error is unhandled.
    const lost = (error: Error) => logger.warn({ err: error.message }, 'a worker database connection was lost');
    this.on('error', lost);
    this.on('connect', (client) => client.on('error', lost));
  }

  /** From now on a connection is not waited for: stopping must not hang on a database that is away. */
  stopWaiting(): void {
    this.#stopping = true;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: Callback): void;
  override connect(callback?: Callback): Promise<pg.PoolClient> | void {
    if (!callback) return this.#patiently();
    // The callback form is graphile-worker's LISTEN connection: waiting here, it listens again as soon as the
    // database is back, where its own back-off (up to a minute) would leave new jobs to the poll meanwhile.
    this.#patiently()
      .then(
        (client) => callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
        (error: Error) => callback(error, undefined, () => undefined),
      )
      .catch((error: unknown) => this.#logger.error({ err: error }, 'the worker could not listen for new jobs'));
  }

  async #patiently(): Promise<pg.PoolClient> {
    const deadline = Date.now() + this.#waitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const client = await super.connect();
        if (attempt > 0 && --this.#waiting === 0) this.#logger.info('the database is back; the worker goes on');
        return client;
      } catch (error) {
        if (!isDatabaseUnavailable(error) || this.#stopping || this.ending || Date.now() > deadline) {
          if (attempt > 0) this.#waiting--;
          throw error;
        }
        if (attempt === 0 && this.#waiting++ === 0)
          this.#logger.warn(
            { err: (error as Error).message },
            'the database cannot be reached; the worker waits for it',
          );
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 1000)));
      }
    }
  }
}
