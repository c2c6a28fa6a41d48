import { Redis } from 'ioredis';
import type { CacheStore } from './store.ts';

/**
 * A Redis client for caches. Fail fast instead of queueing commands while
 * Redis is away: a cache is an optimisation, and a request must not hang
 * waiting for it. No background reconnect loop either: `connected()` before
 * each command reconnects on demand.
 */
export function failFastRedis(url: string): { client: Redis; connected: () => Promise<void> } {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // disconnect() otherwise keeps the process alive 2 s after a failed connection.
    disconnectTimeout: 100,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  const connected = async () => {
    if (client.status === 'ready') return;
    try {
      await client.connect();
    } catch (error) {
      // Another request is already connecting; its outcome decides this one's.
      if (!/already connect/i.test((error as Error).message)) throw error;
    }
  };
  return { client, connected };
}

export function createRedisStore(url: string): CacheStore {
  const { client, connected } = failFastRedis(url);
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
