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

/** An instant a client sends (ISO 8601 with an offset), in a year PostgreSQL has. */
export const instant = z.iso.datetime({ offset: true }).refine((value) => !hasYearZero(value), 'has no year 0000');

/** A calendar date a client sends (YYYY-MM-DD), in a year PostgreSQL has. */
export const calendarDate = z.iso.date().refine((value) => !hasYearZero(value), 'has no year 0000');
