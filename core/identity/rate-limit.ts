// Rate limits, kept in PostgreSQL (rate-limiter-flexible's store) so every API
// process sees the same numbers. Over a limit: 429 with Retry-After.
// - Brute-force protection for the credential endpoints: per client IP (an
//   IPv6 client by its /64) and per account, asked on every attempt (they are
//   few and worth the round trip).
// - Every request: per token, or per IP (an IPv6 client by its /64) without
//   one, and job submits per tenant. These are decided in process and shared
//   once a second (./shared-window.ts), so a request pays no round trip.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import { networkOf } from '../net/client-network.ts';
import { SharedWindow, type CountStore, type Verdict } from './shared-window.ts';

export type { Verdict } from './shared-window.ts';

/** The request limits, by the policy name each announces in the RateLimit-Policy header. */
export type RequestPolicy = 'per-ip' | 'per-token' | 'per-tenant-jobs' | 'webhook-signatures';

export type RateLimits = {
  /** Counts one attempt at `action` from `ip` (and for `account`); throws 429 past the limit. */
  hit(action: string, ip: string | undefined, account?: string): Promise<void>;
  /**
   * A credential check (`check`, which throws a 401 for wrong credentials):
   * every attempt counts against the address, only failed ones against the
   * account, and a success clears the account's count. So a script that signs
   * in often never locks its own account, and guessing a password still does.
   * The attempt takes its place in the account's count before the check (and
   * gives it back unless it failed), so guesses sent at once are never all
   * checked against a count none of them has added to yet.
   */
  attempt<T>(action: string, ip: string | undefined, account: string, check: () => Promise<T>): Promise<T>;
  /** Counts one use of a public form with a limit of its own (the contact form) by `ip`; 429 past it. */
  limit(form: 'contact', ip: string | undefined): Promise<void>;
  /** Counts one request under `policy` for `key`: whether it may go on, and what the headers say. */
  request(policy: Exclude<RequestPolicy, 'webhook-signatures'>, key: string): Verdict;
  /**
   * Failed webhook signatures by address: `standing` tells where `ip` stands
   * (counting nothing), `failedSignature` counts a failure and says whether
   * the address was still within its limit when it failed.
   */
  signatures: { standing(ip: string): Verdict; failedSignature(ip: string): Verdict };
  /** Hands this process's request counts to the shared store now (they are also handed over every sync interval). */
  sync(): Promise<void>;
  /** Each limiter's key prefix, limit and window, and the requests it refused since this process started. */
  limiters(): { name: string; limit: number; window_seconds: number; refused_since_start: number }[];
  close(): Promise<void>;
};

/**
 * The longest account written out in a key. The store's keys are at most 255
 * characters (limiter, action and account) and an identifier may be 320; no
 * real address is this long, so the security dashboard still shows who is
 * locked, and longer ones count by their SHA-256, in a fixed 43 characters.
 */
const longestReadableAccount = 200;

/** The account as counted: letter case and surrounding spaces do not make another. */
function accountKey(action: string, account: string): string {
  const normalized = account.trim().toLowerCase();
  if (normalized.length <= longestReadableAccount) return `${action}:${normalized}`;
  return `${action}:sha256:${createHash('sha256').update(normalized).digest('base64url')}`;
}

/** The address as counted: its network, so an IPv6 client cannot walk its /64, and never longer than an address. */
const addressKey = (action: string, ip: string | undefined) => `${action}:${networkOf(ip).network}`;

/**
 * Adds counts to rate-limiter-flexible's table and reads keys back, in one
 * statement, with the library's semantics: a window opens at the first count
 * and lasts `windowMs`; a count after it ended opens a new one. Keys are
 * stored with the limiter's prefix, as the library stores them.
 */
function countStore(pool: pg.Pool, prefix: string): CountStore {
  return async (counted, known, windowMs) => {
    const now = Date.now();
    const { rows } = await pool.query<{ key: string; points: number; expire: string }>(
      `with counted as (
         select $1 || key as key, points from unnest($2::text[], $3::int[]) as c(key, points)
       ), added as (
         insert into rate_limits (key, points, expire)
         select key, points, $4::bigint + $5::bigint from counted
         on conflict (key) do update set
           points = case when rate_limits.expire is null or rate_limits.expire <= $4 then excluded.points
                         else rate_limits.points + excluded.points end,
           expire = case when rate_limits.expire is null or rate_limits.expire <= $4 then excluded.expire
                         else rate_limits.expire end
         returning key, points, expire
       )
       select key, points, expire from added
       union all
       select key, points, expire from rate_limits
       where key = any(select $1 || k from unnest($6::text[]) as k) and key not in (select key from counted)`,
      [prefix, [...counted.keys()], [...counted.values()], now, windowMs, known],
    );
    return rows.map((row) => ({ key: row.key.slice(prefix.length), points: row.points, expire: Number(row.expire) }));
  };
}

export function createRateLimits(
  databaseUrl: string,
  limits: Config['rateLimits'],
  /** Told of every credential check that failed (a 401), for the security dashboard. */
  onFailedAttempt: (ip: string | undefined, account: string) => void = () => undefined,
): RateLimits {
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
  const { requests } = limits;
  const shared = (name: RequestPolicy, points: number, seconds: number) =>
    new SharedWindow(name, points, seconds, countStore(pool, `${name}:`));
  const windows = {
    'per-ip': shared('per-ip', requests.perIp, requests.windowSeconds),
    'per-token': shared('per-token', requests.perToken, requests.windowSeconds),
    'per-tenant-jobs': shared('per-tenant-jobs', requests.jobsPerTenant, requests.windowSeconds),
    'webhook-signatures': shared('webhook-signatures', requests.webhookFailuresPerIp, limits.windowSeconds),
  };
  const sync = async () => {
    await Promise.all(Object.values(windows).map((window) => window.sync()));
  };
  const syncing = setInterval(() => void sync(), requests.syncMs);
  syncing.unref();

  const tooMany = (msBeforeNext: number) => {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new Problem(429, `Too many attempts; try again in ${seconds} s.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  };
  /** Counts one point for `key` (atomically, in the store); past the limit, `onRefused` and a 429. */
  const consume = async (store: RateLimiterPostgres, key: string, onRefused?: () => Promise<unknown>) => {
    try {
      await store.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      refused.set(store, (refused.get(store) ?? 0) + 1);
      await onRefused?.();
      throw tooMany(rejection.msBeforeNext);
    }
  };

  return {
    async hit(action, ip, account) {
      await consume(perIp, addressKey(action, ip));
      if (account) await consume(perAccount, accountKey(action, account));
    },
    async attempt(action, ip, account, check) {
      await consume(perIp, addressKey(action, ip));
      const key = accountKey(action, account);
      // The count stays at the failures checked: a refused attempt gives its point back.
      const giveBack = () => perAccount.reward(key, 1);
      await consume(perAccount, key, giveBack);
      const result = await check().catch(async (error: unknown) => {
        if (error instanceof Problem && error.status === 401) onFailedAttempt(ip, account);
        else await giveBack();
        throw error;
      });
      await perAccount.delete(key);
      return result;
    },
    limit: (form, ip) => consume(forms[form], ip ?? 'unknown'),
    request: (policy, key) => windows[policy].take(key),
    signatures: {
      standing: (ip) => windows['webhook-signatures'].standing(ip),
      failedSignature: (ip) => windows['webhook-signatures'].fail(ip),
    },
    sync,
    limiters: () => [
      ...all.map((store) => ({
        name: store.keyPrefix,
        limit: store.points,
        window_seconds: store.duration,
        refused_since_start: refused.get(store) ?? 0,
      })),
      ...Object.values(windows).map((window) => ({
        name: window.name,
        limit: window.limit,
        window_seconds: window.windowSeconds,
        refused_since_start: window.refused,
      })),
    ],
    async close() {
      clearInterval(syncing);
      // What this process counted since the last sync is handed over before the pool goes.
      await sync();
      await pool.end();
    },
  };
}
