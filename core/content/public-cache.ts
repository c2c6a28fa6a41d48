// Public answers kept by this process, serialised, with their ETag and the
// tags of what they show (db/migrations/0011). A write anywhere announces the
// tags it touched on `content_changed`; entries carrying one are dropped at
// once, in every process. Kept only while this process hears those
// announcements (like the access cache): when the connection is lost,
// everything goes and nothing is kept until it is back. Entries also age out
// (PUBLIC_CACHE_SECONDS, a backstop) and the map is bounded, oldest out first.
import type { Logger } from '../logger.ts';
import type { Notifications } from '../notifications.ts';

/** `body` is the answer's JSON as UTF-8 bytes: encoded once, not on every hit. */
export type CachedAnswer = { body: Buffer; etag: string; tags: readonly string[]; surrogateKey: string };

type Entry = CachedAnswer & { expiresAt: number };

export type PublicCacheOptions = { ttlSeconds: number; maxEntries: number };

export type CacheCounts = { entries: number; hits: number; misses: number; invalidations: number };

export class PublicCache {
  readonly #entries = new Map<string, Entry>();
  /** Which entries carry each tag. */
  readonly #byTag = new Map<string, Set<string>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #notifications: Notifications | undefined;
  readonly #logger: Logger;
  #stop: (() => void) | undefined;
  #closed = false;
  /** Bumped by every invalidation: an answer computed before it is not kept. */
  #generation = 0;
  #hits = 0;
  #misses = 0;
  #invalidations = 0;

  constructor(options: PublicCacheOptions, logger: Logger, notifications?: Notifications) {
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#maxEntries = options.maxEntries;
    this.#notifications = notifications;
    this.#logger = logger;
    notifications?.onStateChange(() => this.clear());
  }

  start(): void {
    if (!this.#notifications || this.#ttlMs === 0) return;
    const listen = () => {
      if (this.#closed) return;
      this.#notifications!.listen('content_changed', (payload) => this.invalidate(payload.split(' ')))
        .then((stop) => (this.#stop = stop))
        .catch((error: unknown) => {
          this.#logger.warn({ err: (error as Error).message }, 'content changes not heard; the public cache waits');
          setTimeout(listen, 2000).unref();
        });
    };
    listen();
  }

  /** Whether answers are kept: only while every change is heard. */
  get enabled(): boolean {
    return this.#stop !== undefined && (this.#notifications?.listening ?? false);
  }

  /** A token to hand back to set(): an answer computed across an invalidation is not kept. */
  get generation(): number {
    return this.#generation;
  }

  get(key: string): CachedAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > Date.now()) {
      this.#hits++;
      return entry;
    }
    if (entry) this.#remove(key, entry);
    this.#misses++;
    return undefined;
  }

  set(key: string, answer: CachedAnswer, generation: number): void {
    if (!this.enabled || generation !== this.#generation) return;
    const old = this.#entries.get(key);
    if (old) this.#remove(key, old);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#remove(oldest, this.#entries.get(oldest)!);
    }
    this.#entries.set(key, { ...answer, expiresAt: Date.now() + this.#ttlMs });
    for (const tag of answer.tags) {
      let keys = this.#byTag.get(tag);
      if (!keys) this.#byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Drops every entry carrying one of the tags; `*` drops everything. */
  invalidate(tags: readonly string[]): void {
    this.#invalidations++;
    if (tags.includes('*')) {
      this.clear();
      return;
    }
    this.#generation++;
    for (const tag of tags) {
      const keys = this.#byTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) {
        const entry = this.#entries.get(key);
        if (entry) this.#remove(key, entry);
      }
    }
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#byTag.clear();
  }

  counts(): CacheCounts {
    return { entries: this.#entries.size, hits: this.#hits, misses: this.#misses, invalidations: this.#invalidations };
  }

  close(): void {
    this.#closed = true;
    this.#stop?.();
    this.clear();
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key);
    for (const tag of entry.tags) {
      const keys = this.#byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.#byTag.delete(tag);
    }
  }
}
