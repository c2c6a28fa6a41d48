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
  /**
   * A credential check (`check`, which throws a 401 for wrong credentials):
   * every attempt counts against the address, only failed ones against the
   * account, and a success clears the account's count. So a script that signs
   * in often never locks its own account, and guessing a password still does.
   */
  attempt<T>(action: string, ip: string | undefined, account: string, check: () => Promise<T>): Promise<T>;
  /** Counts one use of a public form with a limit of its own (the contact form) by `ip`; 429 past it. */
  limit(form: 'contact', ip: string | undefined): Promise<void>;
  /** Each limiter's key prefix, limit and window, and the requests it refused since this process started. */
  limiters(): { name: string; limit: number; window_seconds: number; refused_since_start: number }[];
  close(): Promise<void>;
};

export function createRateLimits(databaseUrl: string, limits: Config['rateLimits']): RateLimits {
  // A small pool of its own: the library speaks node-postgres, not slonik.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, application_name: 'rate-limits' });
  pool.on('error', () => undefined);
  const limiter = (keyPrefix: string, points: number, duration = limits.windowSeconds) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix,
      points,
      duration,
    });
  const perIp = limiter('ip', limits.perIp);
  const perAccount = limiter('account', limits.perAccount);
  const forms = { contact: limiter('contact', limits.contact.points, limits.contact.seconds) };
  const all = [perIp, perAccount, forms.contact];
  const refused = new Map<RateLimiterPostgres, number>();

  const tooMany = (msBeforeNext: number) => {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new Problem(429, `Too many attempts; try again in ${seconds} s.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  };
  const consume = async (store: RateLimiterPostgres, key: string) => {
    try {
      await store.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      refused.set(store, (refused.get(store) ?? 0) + 1);
      throw tooMany(rejection.msBeforeNext);
    }
  };
  const accountKey = (action: string, account: string) => `${action}:${account.trim().toLowerCase()}`;

  return {
    async hit(action, ip, account) {
      await consume(perIp, `${action}:${ip ?? 'unknown'}`);
      if (account) await consume(perAccount, accountKey(action, account));
    },
    async attempt(action, ip, account, check) {
      await consume(perIp, `${action}:${ip ?? 'unknown'}`);
      const key = accountKey(action, account);
      const failures = await perAccount.get(key);
      if (failures && failures.consumedPoints >= limits.perAccount) {
        refused.set(perAccount, (refused.get(perAccount) ?? 0) + 1);
        throw tooMany(failures.msBeforeNext);
      }
      try {
        const result = await check();
        if (failures) await perAccount.delete(key);
        return result;
      } catch (error) {
        if (error instanceof Problem && error.status === 401) await perAccount.penalty(key, 1);
        throw error;
      }
    },
    limit: (form, ip) => consume(forms[form], ip ?? 'unknown'),
    limiters: () =>
      all.map((store) => ({
        name: store.keyPrefix,
        limit: store.points,
        window_seconds: store.duration,
        refused_since_start: refused.get(store) ?? 0,
      })),
    close: () => pool.end(),
  };
}
