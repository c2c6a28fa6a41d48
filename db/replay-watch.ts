// How far behind the primary the read replica is, learnt beside the request
// path rather than on it: every 100 ms this process reads the primary's WAL
// insert position, then the replica's replay position. Once the replica has
// replayed past a position the primary reported, everything the primary had
// committed when that sample was asked for is visible on the replica. The
// newest such moment is `freshAsOf` (this process's monotonic clock,
// performance.now()): a caller who wrote before it, or a cache that heard of
// a change before it, may read the replica. The replica's lag is how long ago
// that moment is, which also holds on an idle primary (its position does not
// move, so every sample is passed at once).
//
// Two connections of its own, outside the pools, so that a pool full of
// requests cannot delay a sample. A replica that cannot be asked counts as
// not fresh at all until it answers again: the server reached next may be
// another, or behind.
import pg from 'pg';
import type { Logger } from '../core/logger.ts';

const intervalMs = 100;
/** A server that takes longer than this to answer a sample is treated as unreachable. */
const timeoutMs = 2000;
/** Samples not yet replayed that are kept; older ones go (the replica is then far too behind to be read anyway). */
const maxSamples = 1200;

type Sample = { at: number; lsn: bigint };
type WalGeometry = { block: bigint; segment: bigint };

export type ReplayState = {
  reachable: boolean;
  /** Round trip of the last sample asked of the replica. */
  latencyMs: number;
  /** How long ago the replica last held everything the primary had committed; null before it ever did. */
  lagMs: number | null;
  error?: string;
};

export class ReplayWatch {
  readonly #primaryUrl: string;
  readonly #replicaUrl: string;
  readonly #logger: Logger;
  #primary: Promise<pg.Client> | undefined;
  #replica: Promise<pg.Client> | undefined;
  #geometry: WalGeometry | undefined;
  #samples: Sample[] = [];
  #freshAsOf = -Infinity;
  #reachable = false;
  #latencyMs = 0;
  #error: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(primaryUrl: string, replicaUrl: string, logger: Logger) {
    this.#primaryUrl = primaryUrl;
    this.#replicaUrl = replicaUrl;
    this.#logger = logger;
  }

  start(): void {
    if (this.#timer || this.#closed) return;
    const next = () => {
      this.#sampling = this.#sample().finally(() => {
        if (!this.#closed) this.#timer = setTimeout(next, intervalMs).unref();
      });
    };
    next();
  }

  /** The moment (performance.now()) up to which the primary's commits are visible on the replica; -Infinity when unknown. */
  get freshAsOf(): number {
    return this.#reachable ? this.#freshAsOf : -Infinity;
  }

  state(): ReplayState {
    const lag = performance.now() - this.freshAsOf;
    return {
      reachable: this.#reachable,
      latencyMs: Math.round(this.#latencyMs * 100) / 100,
      lagMs: Number.isFinite(lag) ? Math.round(lag) : null,
      ...(this.#error ? { error: this.#error } : {}),
    };
  }

  /** A request could not use the replica: it is not read again until a sample reaches it. */
  lost(error: unknown): void {
    this.#unreachable(error);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#sampling;
    await Promise.all([drop(this.#primary), drop(this.#replica)]);
    this.#primary = this.#replica = undefined;
  }

  async #sample(): Promise<void> {
    // The primary first: a position passed by a replay read afterwards was committed before `at`.
    const at = performance.now();
    let inserted: bigint;
    try {
      this.#primary ??= connect(this.#primaryUrl);
      const primary = await this.#primary;
      this.#geometry ??= await walGeometry(primary);
      const { rows } = await primary.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
      inserted = recordEnd(lsnBytes(rows[0]!.lsn), this.#geometry);
    } catch {
      // Without the primary's position the replica's freshness cannot advance; its lag grows until it can.
      void drop(this.#primary);
      this.#primary = undefined;
      return;
    }
    this.#remember({ at, lsn: inserted });
    try {
      const asked = performance.now();
      this.#replica ??= connect(this.#replicaUrl);
      const { rows } = await (
        await this.#replica
      ).query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn');
      this.#latencyMs = performance.now() - asked;
      const replayed = rows[0]!.lsn;
      if (replayed === null)
        throw new Error('the server at DATABASE_READ_URL is not a standby (it is not in recovery)');
      this.#passed(lsnBytes(replayed));
      this.#reachableAgain();
    } catch (error) {
      void drop(this.#replica);
      this.#replica = undefined;
      this.#unreachable(error);
    }
  }

  /** A new sample; one at the same position as the last replaces it (it is the later moment with the same content). */
  #remember(sample: Sample): void {
    if (this.#samples.at(-1)?.lsn === sample.lsn) this.#samples.pop();
    this.#samples.push(sample);
    if (this.#samples.length > maxSamples) this.#samples.shift();
  }

  #passed(replayed: bigint): void {
    while (this.#samples.length > 0 && this.#samples[0]!.lsn <= replayed) {
      this.#freshAsOf = Math.max(this.#freshAsOf, this.#samples.shift()!.at);
    }
  }

  #reachableAgain(): void {
    if (this.#reachable) return;
    this.#reachable = true;
    this.#error = undefined;
    this.#logger.info('read replica reachable: public, search and statistics reads may use it');
  }

  #unreachable(error: unknown): void {
    // What the server reached next holds is not known: it must prove it is fresh again.
    this.#freshAsOf = -Infinity;
    this.#error = (error as Error).message;
    if (!this.#reachable) return;
    this.#reachable = false;
    this.#logger.warn({ err: this.#error }, 'read replica unreachable: every read goes to the primary');
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'replica-watch',
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  // A lost connection fails the next sample, which replaces it.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function drop(client: Promise<pg.Client> | undefined): Promise<void> {
  await client?.then((c) => c.end()).catch(() => undefined);
}

async function walGeometry(client: pg.Client): Promise<WalGeometry> {
  const { rows } = await client.query<{ block: string; segment: string }>(
    `select current_setting('wal_block_size') as block, pg_size_bytes(current_setting('wal_segment_size'))::text as segment`,
  );
  return { block: BigInt(rows[0]!.block), segment: BigInt(rows[0]!.segment) };
}

/** An LSN ('16/B374D848') as a byte position. */
export function lsnBytes(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * The insert position as the end of the last record. Where the last record
 * ended exactly at a page boundary, PostgreSQL reports the insert position
 * past the next page's header (24 bytes; 40 on a segment's first page), a
 * place no record ends at, so a caught-up standby's replay position would
 * never pass it on an idle primary (seen here: insert 0/175E018, replayed
 * 0/175E000). The insert position rather than the write or flush position:
 * it already covers a commit acknowledged without waiting for the disk
 * (synchronous_commit = off).
 */
function recordEnd(lsn: bigint, { block, segment }: WalGeometry): bigint {
  if (lsn % segment === 40n) return lsn - 40n;
  if (lsn % block === 24n) return lsn - 24n;
  return lsn;
}
