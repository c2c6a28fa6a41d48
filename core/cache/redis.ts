import { Redis } from 'ioredis';
import type { CacheStore } from './store.ts';

export function createRedisStore(url: string): CacheStore {
  // Fail fast instead of queueing commands while Redis is away: the cache is an
  // optimisation, and a request must not hang waiting for it.
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  });
  client.on('error', () => undefined);
  const connected = () => (client.status === 'ready' ? Promise.resolve() : client.connect().catch(() => undefined));
  return {
    kind: 'redis',
    async get(key) {
      await connected();
      return (await client.get(key)) ?? undefined;
    },
    async set(key, value, ttlSeconds) {
      await connected();
      await client.set(key, value, 'EX', ttlSeconds);
    },
    async delete(key) {
      await connected();
      await client.del(key);
    },
    async ping() {
      await connected();
      await client.ping();
    },
    async close() {
      client.disconnect();
    },
  };
}
