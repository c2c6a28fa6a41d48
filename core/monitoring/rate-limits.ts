// The rate limiters, for global admins: each one's limit and window, what it
// refused since this process started, and from the shared store (the
// rate_limits table every API process counts in) the keys tracked now, those
// over their limit (blocked until their window ends) and the busiest.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { RateLimits } from '../identity/rate-limit.ts';
import { timestamp } from '../timestamp.ts';

const keyRow = z.object({
  limiter: z.string(),
  subject: z.string().describe('What is counted: the action and the IP, account or network'),
  points: z.number().int(),
  resets_at: timestamp.nullable(),
});

export const rateLimitStatsSchema = z
  .object({
    process: z.number().int(),
    limiters: z.array(
      z.object({
        name: z.string(),
        limit: z.number().int(),
        window_seconds: z.number().int(),
        refused_since_start: z.number().int().describe('By this API process'),
        tracked_keys: z.number().int(),
        blocked_keys: z.number().int(),
      }),
    ),
    blocked: z.array(keyRow).describe('Keys over their limit now, most points first (at most 50)'),
    top_offenders: z.array(keyRow).describe('The keys with the most points in their current window (at most 10)'),
  })
  .meta({ id: 'RateLimitStats' });

export async function rateLimitStats(db: CommonQueryMethods, rateLimits: RateLimits) {
  const limiters = rateLimits.limiters();
  const limits = sql.jsonb(Object.fromEntries(limiters.map((limiter) => [limiter.name, limiter.limit])));
  const live = sql.fragment`(expire is null or expire > (extract(epoch from now()) * 1000)::bigint)`;
  const rows = (where: ReturnType<typeof sql.fragment>, limit: number) =>
    db.any(sql.type(keyRow)`
      select split_part(key, ':', 1) as limiter, substr(key, length(split_part(key, ':', 1)) + 2) as subject, points,
        case when expire is null then null else to_timestamp(expire / 1000.0) end as resets_at
      from rate_limits where ${live} and ${where} order by points desc, key limit ${limit}`);
  const overLimit = sql.fragment`points > coalesce((${limits}->>split_part(key, ':', 1))::int, 2147483647)`;
  const counts = await db.any(sql.type(z.object({ limiter: z.string(), tracked: z.number(), blocked: z.number() }))`
    select split_part(key, ':', 1) as limiter, count(*)::int as tracked, count(*) filter (where ${overLimit})::int as blocked
    from rate_limits where ${live} group by 1`);
  const byLimiter = new Map(counts.map((row) => [row.limiter, row]));
  return {
    process: process.pid,
    limiters: limiters.map((limiter) => ({
      ...limiter,
      tracked_keys: byLimiter.get(limiter.name)?.tracked ?? 0,
      blocked_keys: byLimiter.get(limiter.name)?.blocked ?? 0,
    })),
    blocked: [...(await rows(overLimit, 50))],
    top_offenders: [...(await rows(sql.fragment`true`, 10))],
  };
}
