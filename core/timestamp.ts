// A point in time as the API answers it: an ISO 8601 string in UTC with up to
// microseconds (db/pool.ts renders timestamptz so). Documented as date-time;
// not re-validated, since the database made it.
import { z } from 'zod';

export const timestamp = z.string().meta({ format: 'date-time' });
