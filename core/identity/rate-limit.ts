// Brute-force protection for the credential endpoints: counts per client IP
// and per account, kept in PostgreSQL (rate-limiter-flexible's store) so every
// API process sees the same numbers. Over the limit: 429 with Retry-After.
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';

export type RateLimits = {
  /** Counts one attempt at `action` from `ip` (and for `account`); throws 429 past the limit. */
  hit(action: string, ip: string | undefined, account?: string): Promise<void>;
  close(): Promise<void>;
};

export function createRateLimits(databaseUrl: string, limits: Config['rateLimits']): RateLimits {
  // A small pool of its own: the library speaks node-postgres, not slonik.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, application_name: 'rate-limits' });
  pool.on('error', () => undefined);
  const limiter = (keyPrefix: string, points: number) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix,
      points,
      duration: limits.windowSeconds,
    });
  const perIp = limiter('ip', limits.perIp);
  const perAccount = limiter('account', limits.perAccount);

  const consume = async (store: RateLimiterPostgres, key: string) => {
    try {
      await store.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new Problem(429, `Too many attempts; try again in ${seconds} s.`, {
        headers: { 'Retry-After': String(seconds) },
      });
    }
  };

  return {
    async hit(action, ip, account) {
      await consume(perIp, `${action}:${ip ?? 'unknown'}`);
      if (account) await consume(perAccount, `${action}:${account.trim().toLowerCase()}`);
    },
    close: () => pool.end(),
  };
}
