// The sites whose search documents this process holds in memory, in its
// search thread (./engine.ts, ./site-copy.ts): the large ones, where
// PostgreSQL's GIN scan of a common word costs more than a search may
// (docs/search.md). PostgreSQL stays the source of truth, and a site not
// held — small, not loaded yet, past the memory budget, while its copy
// cannot be caught up, or when the thread is lost — is searched there.
//
// A held copy is caught up before it answers whenever a change to the site's
// documents was announced since the last catch-up (`search:<site>` on
// content_changed, 0029), or whenever announcements may go unheard: it
// reads the rows written, and the removals made, by transactions its
// snapshot did not see (0037). So an answer never misses a change announced
// before it was asked — the rule the cached answers (api/search/cache.ts)
// already rely on.
import { z } from 'zod';
import { sql, type DatabasePool } from '../../../db/pool.ts';
import { actingFor, allTenants } from '../../../db/tenant-scope.ts';
import type { Logger } from '../../logger.ts';
import { Subscription, type Notifications } from '../../notifications.ts';
import { takeOldest } from '../../cache-eviction.ts';
import { SearchEngine } from './engine.ts';
import { readChanges, readSite } from './reading.ts';
import type { SiteCopy } from './site-copy.ts';

export type MemoryIndexOptions = {
  /** The most all held sites may take together; 0 holds none. */
  maxBytes: number;
  /** Sites with fewer documents (by the planner's estimate) are searched in PostgreSQL. */
  minDocuments: number;
};

type Held = {
  index: SiteCopy;
  /** The snapshot (pg_snapshot) whose writes the copy holds. */
  snapshot: string;
  /** Announcements heard, and how many of them the last finished catch-up covers. */
  announced: number;
  caughtUp: number;
  /** When the snapshot was taken (Date.now()). */
  snapshotAt: number;
  catchingUp: Promise<void> | undefined;
  /** Too far behind to catch up row by row: not used until read afresh. */
  stale: boolean;
  reloading: boolean;
  /** When it was last searched (Date.now()). */
  searchedAt: number;
  loadedAt: Date;
};

export type HeldState = { documents: number; bytes: number; loaded_at: string };

/** Rows written since a snapshot caught up one by one; more, and the site is read afresh. */
const catchUpRows = 2_000;
/** A copy not searched for this long is dropped. */
const idleMs = 3600_000;
/** What a held document takes of the search thread's heap, with its share of the lexicon (one new word a document, about). */
const heapPerDocument = 400;
/** Removals are kept a day (0037): a copy that has not caught up for half that is read afresh instead. */
const catchUpWithinMs = 12 * 3600_000;
/** Query texts remembered (./tsquery.ts reads them), the first asked out first. */
const queryTextsKept = 10_000;
/** How long a search waits for a catch-up before asking PostgreSQL instead. */
const catchUpWaitMs = 2_000;
/** How long a site too small or too large for memory is not asked about again. */
const declinedMs = { small: 60_000, large: 600_000 };

export class SearchIndexes {
  readonly #db: DatabasePool;
  readonly #options: MemoryIndexOptions;
  readonly #logger: Logger;
  readonly #notifications: Notifications | undefined;
  readonly #engine: SearchEngine;
  #subscription: Subscription | undefined;
  readonly #held = new Map<string, Held>();
  readonly #declined = new Map<string, number>();
  readonly #loading = new Set<string>();
  readonly #queryTexts = new Map<string, string>();
  /** One load at a time: a load is CPU work the process's requests share. */
  #loads: Promise<unknown> = Promise.resolve();
  #closed = false;
  #lastDrop = Date.now();

  constructor(db: DatabasePool, options: MemoryIndexOptions, logger: Logger, notifications?: Notifications) {
    this.#db = db;
    this.#options = options;
    this.#logger = logger;
    this.#notifications = notifications;
    this.#engine = new SearchEngine(logger, (error) => {
      // Every copy was in the thread: searched in PostgreSQL until read again, in a new thread.
      this.#logger.error({ err: error.message }, 'search thread lost; held sites are read again');
      this.#held.clear();
    });
  }

  start(): void {
    if (!this.#notifications || this.#options.maxBytes === 0) return;
    // Whatever was announced while not listening went unheard: every copy catches up before its next answer.
    this.#notifications.onStateChange(() => {
      for (const held of this.#held.values()) held.announced++;
    });
    this.#subscription = new Subscription(
      this.#notifications,
      'content_changed',
      (payload) => {
        for (const tag of payload.split(' ')) {
          if (tag === '*') for (const held of this.#held.values()) held.announced++;
          else if (tag.startsWith('search:')) {
            const held = this.#held.get(tag.slice('search:'.length));
            if (held) held.announced++;
          }
        }
      },
      (error) =>
        this.#logger.warn(
          { err: error.message },
          'content changes not heard; held search indexes catch up on each search',
        ),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subscription?.close();
    this.#held.clear();
    await this.#engine.close();
  }

  /**
   * The site's copy, caught up with every change announced until now; or
   * undefined, and the site is searched in PostgreSQL (and loaded for next
   * time, when it is large enough).
   */
  async current(siteId: string): Promise<SiteCopy | undefined> {
    if (this.#options.maxBytes === 0 || this.#closed) return undefined;
    this.#dropIdle();
    const held = this.#held.get(siteId);
    if (!held) {
      this.#considerLoading(siteId);
      return undefined;
    }
    held.searchedAt = Date.now();
    // Unheard announcements are possible: catch up on every search.
    if (!this.#subscription?.active) held.announced++;
    const wanted = held.announced;
    if (held.caughtUp < wanted && Date.now() - held.snapshotAt > catchUpWithinMs) {
      held.stale = true;
      this.#reload(siteId, held);
    }
    try {
      while (held.caughtUp < wanted && !held.stale) {
        held.catchingUp ??= this.#catchUp(siteId, held).finally(() => (held.catchingUp = undefined));
        await withTimeout(held.catchingUp, catchUpWaitMs);
      }
    } catch (error) {
      this.#logger.warn(
        { site_id: siteId, err: (error as Error).message },
        'held search index not caught up; searched in PostgreSQL',
      );
      return undefined;
    }
    if (held.stale) {
      // Being read afresh, or its reading failed: tried again once the failure's pause is over.
      this.#reload(siteId, held);
      return undefined;
    }
    // Many changes kept apart slow every search: read the site afresh, answering from this copy meanwhile.
    if (held.index.changes > Math.max(catchUpRows, held.index.size / 20)) this.#reload(siteId, held);
    return held.index;
  }

  /**
   * A query's text form in the configurations of some locales (`key` names
   * both), as PostgreSQL's websearch_to_tsquery reads it: asked once, then
   * remembered, since a configuration does not change while the process runs.
   */
  async queryText(key: string, ask: () => Promise<string>): Promise<string> {
    const known = this.knownQueryText(key);
    if (known !== undefined) return known;
    const text = await ask();
    this.rememberQueryText(key, text);
    return text;
  }

  knownQueryText(key: string): string | undefined {
    return this.#queryTexts.get(key);
  }

  rememberQueryText(key: string, text: string): void {
    if (this.#queryTexts.size >= queryTextsKept) takeOldest(this.#queryTexts);
    this.#queryTexts.set(key, text);
  }

  /** What this process holds of the site, for its stats. */
  state(siteId: string): HeldState | null {
    const held = this.#held.get(siteId);
    return held && !held.stale
      ? { documents: held.index.size, bytes: held.index.bytes, loaded_at: held.loadedAt.toISOString() }
      : null;
  }

  #considerLoading(siteId: string): void {
    if (this.#loading.has(siteId) || (this.#declined.get(siteId) ?? 0) > Date.now()) return;
    this.#loading.add(siteId);
    const load = async () => {
      try {
        const estimate = await this.#db.oneFirst(
          sql.type(z.object({ n: z.number() }))`select search_site_size(${siteId})::int8 as n`,
        );
        if (estimate < this.#options.minDocuments) {
          this.#declined.set(siteId, Date.now() + declinedMs.small);
          return;
        }
        if (this.#heldBytes() >= this.#options.maxBytes) {
          this.#decline(siteId, 'the memory for search indexes is taken by other sites');
          return;
        }
        if (!(await this.#heapHasRoom(estimate))) {
          this.#decline(
            siteId,
            `${estimate} documents would take more than half the free heap; raise --max-old-space-size`,
          );
          return;
        }
        const loaded = await this.#load(siteId);
        if (this.#heldBytes() + loaded.index.bytes > this.#options.maxBytes) {
          loaded.index.drop();
          this.#decline(siteId, `its index takes ${loaded.index.bytes} bytes, past SEARCH_MEMORY_MB`);
          return;
        }
        this.#held.set(siteId, loaded);
      } finally {
        this.#loading.delete(siteId);
      }
    };
    this.#queueLoad(siteId, load);
  }

  #reload(siteId: string, held: Held): void {
    if (held.reloading || (this.#declined.get(siteId) ?? 0) > Date.now()) return;
    held.reloading = true;
    this.#queueLoad(siteId, async () => {
      try {
        // Both copies are in memory until the new one replaces the old: without room for both, the old goes first,
        // and the site is loaded again on its next search, as the first time.
        if (!(await this.#heapHasRoom(held.index.size))) {
          this.#release(siteId, held);
          return;
        }
        const loaded = await this.#load(siteId);
        if (this.#held.get(siteId) === held) {
          held.index.drop();
          this.#held.set(siteId, loaded);
        } else loaded.index.drop();
      } finally {
        held.reloading = false;
      }
    });
  }

  /** The lists live outside the heap, but each document and word takes some of the thread's: never risk running out. */
  async #heapHasRoom(documents: number): Promise<boolean> {
    const { limit, used } = await this.#engine.ask({ op: 'heap' });
    return documents * heapPerDocument <= (limit - used) / 2;
  }

  #queueLoad(siteId: string, load: () => Promise<void>): void {
    this.#loads = this.#loads
      .then(() => (this.#closed ? undefined : actingFor(allTenants, load)))
      .catch((error: unknown) => {
        this.#declined.set(siteId, Date.now() + declinedMs.small);
        this.#logger.warn(
          { site_id: siteId, err: (error as Error).message },
          'search index not loaded; searched in PostgreSQL',
        );
      });
  }

  /** Copies not searched for an hour (a site made private, deleted, or out of fashion) give their memory back. */
  #dropIdle(): void {
    const now = Date.now();
    if (now - this.#lastDrop < 60_000) return;
    this.#lastDrop = now;
    for (const [siteId, held] of this.#held) {
      if (now - held.searchedAt > idleMs) {
        this.#release(siteId, held);
        this.#logger.info({ site_id: siteId }, 'search index no longer held: not searched for an hour');
      }
    }
  }

  /** No longer held: the search thread gives its memory back (a search under way is answered by PostgreSQL). */
  #release(siteId: string, held: Held): void {
    if (this.#held.get(siteId) === held) this.#held.delete(siteId);
    held.index.drop();
  }

  #decline(siteId: string, why: string): void {
    this.#declined.set(siteId, Date.now() + declinedMs.large);
    this.#logger.warn({ site_id: siteId, why }, 'search index not held in memory; searched in PostgreSQL');
  }

  #heldBytes(): number {
    let bytes = 0;
    for (const held of this.#held.values()) bytes += held.index.bytes;
    return bytes;
  }

  /** The site read afresh, as a copy to hold. */
  async #load(siteId: string): Promise<Held> {
    const started = performance.now();
    const snapshotAt = Date.now();
    const { index, snapshot } = await readSite(this.#db, this.#engine, siteId);
    const ms = Math.round(performance.now() - started);
    this.#logger.info(
      { site_id: siteId, documents: index.size, bytes: index.bytes, ms },
      'search index held in memory',
    );
    return {
      index,
      snapshot,
      // Changes made after the snapshot were announced to the copy this one replaces, if any: catch up first.
      announced: 1,
      caughtUp: 0,
      snapshotAt,
      catchingUp: undefined,
      stale: false,
      reloading: false,
      searchedAt: Date.now(),
      loadedAt: new Date(),
    };
  }

  /** The rows written and removed since the copy's snapshot, applied to it. */
  async #catchUp(siteId: string, held: Held): Promise<void> {
    const target = held.announced;
    const since = held.snapshot;
    const asked = Date.now();
    const found = await actingFor(allTenants, () => readChanges(this.#db, siteId, since, catchUpRows));
    if (!found) {
      held.stale = true;
      this.#reload(siteId, held);
      return;
    }
    await held.index.apply(found.removed, found.written);
    held.snapshot = found.snapshot;
    held.snapshotAt = asked;
    held.caughtUp = target;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
