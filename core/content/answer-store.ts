// Where public answers are kept: a bounded map in this process, or Redis
// (REDIS_URL), shared by every API process. Either holds each answer with the
// tags of what it shows, and drops by tag.
export type CachedAnswer = { body: Buffer; etag: string; tags: readonly string[]; surrogateKey: string };

export type AnswerStore = {
  readonly kind: 'memory' | 'redis';
  get(key: string): CachedAnswer | undefined | Promise<CachedAnswer | undefined>;
  set(key: string, answer: CachedAnswer, ttlMs: number): void | Promise<void>;
  /** Drops every answer carrying one of the tags. */
  drop(tags: readonly string[]): void | Promise<void>;
  clear(): void | Promise<void>;
  /** Answers kept (in this process's map; Redis's own count is not asked). */
  size(): number;
  /** Answers pushed out by the size bound (Redis evicts by its own policy: 0 here). */
  evictions(): number;
  /** Drops the answers past their time now; answers how many (Redis expires keys itself: 0). */
  prune(): number;
  close(): void;
};

import { takeOldest } from '../cache-eviction.ts';

type Entry = CachedAnswer & { expiresAt: number };

/** A map, oldest out first past `maxEntries`, with an index from tag to keys. */
export function memoryAnswerStore(maxEntries: number): AnswerStore {
  const entries = new Map<string, Entry>();
  const byTag = new Map<string, Set<string>>();
  let evicted = 0;
  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    for (const tag of entry.tags) {
      const keys = byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) byTag.delete(tag);
    }
  };
  return {
    kind: 'memory',
    get(key) {
      const entry = entries.get(key);
      if (entry && entry.expiresAt > Date.now()) return entry;
      if (entry) remove(key, entry);
      return undefined;
    },
    set(key, answer, ttlMs) {
      const old = entries.get(key);
      if (old) remove(key, old);
      if (entries.size >= maxEntries) {
        remove(...takeOldest(entries)!);
        evicted++;
      }
      entries.set(key, { ...answer, expiresAt: Date.now() + ttlMs });
      for (const tag of answer.tags) {
        let keys = byTag.get(tag);
        if (!keys) byTag.set(tag, (keys = new Set()));
        keys.add(key);
      }
    },
    drop(tags) {
      for (const tag of tags)
        for (const key of [...(byTag.get(tag) ?? [])]) {
          const entry = entries.get(key);
          if (entry) remove(key, entry);
        }
    },
    clear() {
      entries.clear();
      byTag.clear();
    },
    size: () => entries.size,
    evictions: () => evicted,
    prune() {
      const now = Date.now();
      let removed = 0;
      for (const [key, entry] of entries)
        if (entry.expiresAt <= now) {
          remove(key, entry);
          removed++;
        }
      return removed;
    },
    close() {
      entries.clear();
      byTag.clear();
    },
  };
}
