// Public answers in Redis, shared by every API process: an answer under
// `public:a:<key>` (its ETag, tags and body, expiring), and for each tag a set
// `public:t:<tag>` of the keys carrying it. Every process hears every
// invalidation and drops by tag here too; the work is the same each time, so
// doing it more than once does no harm. Redis failing is a miss, never a
// failed request.
import { failFastRedis } from '../cache/redis.ts';
import type { Logger } from '../logger.ts';
import type { AnswerStore, CachedAnswer } from './answer-store.ts';

const answerKey = (key: string) => `public:a:${key}`;
const tagKey = (tag: string) => `public:t:${tag}`;

/** ETag, surrogate key (the tags, space-separated) and body, in one value: one GET per hit. */
const encode = (answer: CachedAnswer) =>
  Buffer.concat([Buffer.from(`${answer.etag}\n${answer.surrogateKey}\n`), answer.body]);

function decode(value: Buffer): CachedAnswer | undefined {
  const first = value.indexOf(10);
  const second = value.indexOf(10, first + 1);
  if (first < 0 || second < 0) return undefined;
  const surrogateKey = value.subarray(first + 1, second).toString();
  return {
    etag: value.subarray(0, first).toString(),
    surrogateKey,
    tags: surrogateKey.split(' '),
    body: value.subarray(second + 1),
  };
}

export function redisAnswerStore(url: string, logger: Logger): AnswerStore {
  const { client, connected } = failFastRedis(url);
  const quietly = async <T>(what: string, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      await connected();
      return await work();
    } catch (error) {
      logger.warn({ err: (error as Error).message }, `public cache in Redis: ${what} failed`);
      return undefined;
    }
  };
  return {
    kind: 'redis',
    async get(key) {
      const value = await quietly('get', () => client.getBuffer(answerKey(key)));
      return value ? decode(value) : undefined;
    },
    async set(key, answer, ttlMs) {
      await quietly('set', async () => {
        const batch = client.multi().set(answerKey(key), encode(answer), 'PX', ttlMs);
        for (const tag of answer.tags) batch.sadd(tagKey(tag), key).pexpire(tagKey(tag), ttlMs);
        await batch.exec();
      });
    },
    async drop(tags) {
      await quietly('drop', async () => {
        for (const tag of tags) {
          const keys = await client.smembers(tagKey(tag));
          await client.del(tagKey(tag), ...keys.map(answerKey));
        }
      });
    },
    async clear() {
      await quietly('clear', async () => {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', 'public:*', 'COUNT', 500);
          if (keys.length) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      });
    },
    size: () => 0,
    evictions: () => 0,
    prune: () => 0,
    close() {
      client.disconnect();
    },
  };
}
