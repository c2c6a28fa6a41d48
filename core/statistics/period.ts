// The period a statistics request covers: ?from= and ?to= as dates (in the
// site's time zone, `settings.time_zone`, when it has a valid one) or as
// instants; the last 30 days by default.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import type { Site } from '../tenancy/sites.ts';
import { calendarDate, instant, timestamp } from '../timestamp.ts';

const dateOrInstant = z.union([calendarDate, instant]);

export const periodQuery = z.object({
  from: dateOrInstant.optional().describe('A date (the site’s time zone) or an instant; default 30 days ago'),
  to: dateOrInstant.optional().describe('Exclusive; a date means its start; default now'),
});

export type Period = { from: string; to: string; time_zone: string };

export const periodSchema = z.object({ from: timestamp, to: timestamp, time_zone: z.string() });

export function timeZoneOf(site: Site): string {
  const zone = site.settings['time_zone'];
  if (typeof zone !== 'string') return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

const bound = (value: string | undefined, zone: string, fallback: ReturnType<typeof sql.fragment>) =>
  value === undefined
    ? fallback
    : /^\d{4}-\d{2}-\d{2}$/.test(value)
      ? sql.fragment`(${value}::date::timestamp at time zone ${zone})`
      : sql.fragment`${value}::timestamptz`;

export async function resolvePeriod(
  db: CommonQueryMethods,
  site: Site,
  query: z.output<typeof periodQuery>,
): Promise<Period> {
  const zone = timeZoneOf(site);
  const period = await db.one(sql.type(z.object({ from: timestamp, to: timestamp }))`
    select ${bound(query.from, zone, sql.fragment`now() - interval '30 days'`)} as from,
           ${bound(query.to, zone, sql.fragment`now()`)} as to`);
  if (Date.parse(period.from) >= Date.parse(period.to))
    throw new Problem(422, 'The period is empty: from must come before to.', {
      errors: [{ path: 'query.from', message: 'not before to' }],
    });
  return { ...period, time_zone: zone };
}
