// A point in time as the API answers it: an ISO 8601 string in UTC with up to
// microseconds (db/pool.ts renders timestamptz so). Documented as date-time;
// not re-validated, since the database made it.
import { z } from 'zod';

export const timestamp = z.string().meta({ format: 'date-time' });

/**
 * The year 0000 is valid ISO 8601 but not a PostgreSQL date (it counts 1 BC
 * before 1 AD, with no year zero): a query given one failed as a 500.
 */
const hasYearZero = (value: string) => value.startsWith('0000');

/**
 * Instants in UTC years 1 to 9999: the offset may carry an edge value past
 * them (9999-12-31T23:59:59-14:00 is in the year 10000 in UTC), and
 * Date.toISOString() then writes +010000-..., which PostgreSQL refuses.
 */
const first = Date.parse('0001-01-01T00:00:00Z');
const end = Date.parse('9999-12-31T23:59:59.999Z');
const inRange = (value: string) => {
  const time = Date.parse(value);
  return time >= first && time <= end;
};

/**
 * The same instant in UTC (…Z), its fraction of a second kept as given (a
 * cursor's microseconds must survive a round trip through Date's
 * milliseconds). RFC 3339 allows offsets up to ±23:59, PostgreSQL's
 * timestamptz input only up to ±15:59: an offset past that was a 500. An
 * offset moves whole minutes, so the fraction is untouched.
 */
function inUtc(value: string): string {
  const parts = /^(.+T\d{2}:\d{2}(?::\d{2})?)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  if (!parts || !inRange(value)) return value;
  const [, whole, fraction = '', offset] = parts;
  return new Date(`${whole}${offset}`).toISOString().replace(/\.000Z$/, `${fraction}Z`);
}

/**
 * An instant a client sends (ISO 8601 with an offset of up to ±23:59), in the
 * UTC years PostgreSQL and ISO strings share (0001 to 9999), handed on in UTC.
 */
const instantSchema = z.iso
  .datetime({ offset: true })
  .refine(inRange, 'must be in the years 0001 to 9999 in UTC')
  .overwrite(inUtc);

/** What an instant takes, said in the document wherever one is asked for. */
const instantRule = 'An instant with its offset (RFC 3339; up to ±23:59), in the years 0001 to 9999 once in UTC';

export const instant = instantSchema.describe(instantRule);

/** An instant whose field says more: the rule is kept beside it. */
export const instantAs = (description: string) => instantSchema.describe(`${description}. ${instantRule}`);

/** A calendar date a client sends (YYYY-MM-DD), in a year PostgreSQL has. */
export const calendarDate = z.iso.date().refine((value) => !hasYearZero(value), 'has no year 0000');
