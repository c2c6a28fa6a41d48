// The cache used by the API: Redis when REDIS_URL is set (shared by every API
// process), otherwise a map in this process.
export type CacheStore = {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Round-trips to the store; rejects when it does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
};
