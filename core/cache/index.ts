import { createMemoryStore } from './memory.ts';
import { createRedisStore } from './redis.ts';
import type { CacheStore } from './store.ts';

export type { CacheStore };

export function createCacheStore(redisUrl: string | undefined): CacheStore {
  return redisUrl ? createRedisStore(redisUrl) : createMemoryStore();
}
