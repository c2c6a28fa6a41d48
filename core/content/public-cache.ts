// Public answers, serialised, with their ETag and the tags of what they show
// (db/migrations/0011): in this process, or in Redis when REDIS_URL is set
// (core/content/answer-store*.ts). A write anywhere announces the tags it
// touched on `content_changed`; answers carrying one are dropped at once, in
// every process. Kept only while this process hears those announcements
// (like the access cache): while it does not, nothing is read or kept, and
// what is kept is cleared when hearing resumes, since a change may have gone
// unheard. Answers also age out (PUBLIC_CACHE_SECONDS, a backstop); the map
// in a process is bounded, oldest out first.
//
// An answer read from the read replica (db/replica.ts) may predate a change
// already announced: it is kept only if the replica held every change
// announced for what the answer shows, so that nothing stale outlives an
// announcement here. For that, the moment each tag was last announced is
// remembered for a minute (a replica read is never that far behind).
import type { Logger } from '../logger.ts';
import { Subscription, type Notifications } from '../notifications.ts';
import { memoryAnswerStore, type AnswerStore, type CachedAnswer } from './answer-store.ts';
import { redisAnswerStore } from './answer-store-redis.ts';

export type { CachedAnswer };

export type PublicCacheOptions = { ttlSeconds: number; maxEntries: number; redisUrl?: string | undefined };

/** How long the moment of a tag's last announcement is remembered, and how many at most. */
const announcedKeepMs = 60_000;
const announcedMaxTags = 50_000;

export type CacheCounts = {
  store: 'memory' | 'redis';
  entries: number;
  hits: number;
  misses: number;
  invalidations: number;
  evictions: number;
};

export class PublicCache {
  readonly #store: AnswerStore;
  readonly #ttlMs: number;
  readonly #notifications: Notifications | undefined;
  readonly #logger: Logger;
  #subscription: Subscription | undefined;
  /** Bumped by every invalidation: an answer computed before it is not kept. */
  #generation = 0;
  #hits = 0;
  #misses = 0;
  #invalidations = 0;
  /** When each tag was last announced (performance.now()), oldest first. */
  readonly #announced = new Map<string, number>();
  /** When everything was last dropped, or tags were forgotten: as if every tag had been announced then. */
  #announcedAll = -Infinity;

  constructor(options: PublicCacheOptions, logger: Logger, notifications?: Notifications) {
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#store = options.redisUrl ? redisAnswerStore(options.redisUrl, logger) : memoryAnswerStore(options.maxEntries);
    this.#notifications = notifications;
    this.#logger = logger;
    notifications?.onStateChange((listening) => {
      // In this process, nothing may outlive a gap; a shared store is cleared once the gap is over.
      if (this.#store.kind === 'memory' || listening) void this.clear();
    });
  }

  start(): void {
    if (!this.#notifications || this.#ttlMs === 0) return;
    this.#subscription = new Subscription(
      this.#notifications,
      'content_changed',
      (payload) => void this.invalidate(payload.split(' ')),
      (error) => this.#logger.warn({ err: error.message }, 'content changes not heard; the public cache waits'),
    );
  }

  /** Whether answers are read and kept: only while every change is heard. */
  get enabled(): boolean {
    return this.#subscription?.active ?? false;
  }

  /** A token to hand back to set(): an answer computed across an invalidation is not kept. */
  get generation(): number {
    return this.#generation;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const answer = this.enabled ? await this.#store.get(key) : undefined;
    if (answer) this.#hits++;
    else this.#misses++;
    return answer;
  }

  /**
   * The kept answer when this process's map holds it, found without a wait;
   * undefined otherwise (and always with the shared store, asked by get()).
   * Counts only hits: a request that finds nothing here goes on to get().
   */
  hit(key: string): CachedAnswer | undefined {
    if (this.#store.kind !== 'memory' || !this.enabled) return undefined;
    const answer = this.#store.get(key) as CachedAnswer | undefined;
    if (answer) this.#hits++;
    return answer;
  }

  /**
   * Keeps the answer unless a change was announced since `generation` was
   * read, or, for an answer read from the replica, unless a change to what it
   * shows was announced after `readAsOf` (db/cancellable.ts readAsOf).
   */
  async set(key: string, answer: CachedAnswer, generation: number, readAsOf = Infinity): Promise<void> {
    if (!this.enabled || generation !== this.#generation) return;
    if (readAsOf !== Infinity && readAsOf < this.#lastAnnounced(answer.tags)) return;
    await this.#store.set(key, answer, this.#ttlMs);
  }

  /** Drops every answer carrying one of the tags; `*` drops everything. */
  async invalidate(tags: readonly string[]): Promise<void> {
    this.#generation++;
    this.#invalidations++;
    this.#announce(tags);
    if (tags.includes('*')) await this.#store.clear();
    else await this.#store.drop(tags);
  }

  async clear(): Promise<void> {
    this.#generation++;
    this.#announcedAll = performance.now();
    await this.#store.clear();
  }

  #announce(tags: readonly string[]): void {
    const now = performance.now();
    if (tags.includes('*')) this.#announcedAll = now;
    else
      for (const tag of tags) {
        this.#announced.delete(tag);
        this.#announced.set(tag, now);
      }
    for (const [tag, at] of this.#announced) {
      if (at > now - announcedKeepMs && this.#announced.size <= announcedMaxTags) break;
      this.#announced.delete(tag);
      this.#announcedAll = Math.max(this.#announcedAll, at);
    }
  }

  #lastAnnounced(tags: readonly string[]): number {
    let last = this.#announcedAll;
    for (const tag of tags) last = Math.max(last, this.#announced.get(tag) ?? -Infinity);
    return last;
  }

  counts(): CacheCounts {
    return {
      store: this.#store.kind,
      entries: this.#store.size(),
      hits: this.#hits,
      misses: this.#misses,
      invalidations: this.#invalidations,
      evictions: this.#store.evictions(),
    };
  }

  /** Drops the answers past their time now; answers how many. */
  prune(): number {
    return this.#store.prune();
  }

  close(): void {
    this.#subscription?.close();
    this.#store.close();
  }
}
