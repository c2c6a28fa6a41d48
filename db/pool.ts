// The slonik pool every process uses. Rows are validated against the zod
// schema given with sql.type(...): slonik only types results until a result
// parser interceptor like this one is installed.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  createPool as createSlonikPool,
  createSqlTag,
  createTypeParserPreset,
  SchemaValidationError,
  type DatabasePool,
  type Interceptor,
  type QueryResultRow,
  type QuerySqlToken,
} from 'slonik';
import { enforceTenantScopes } from './tenant-scope.ts';

/** The SQL tag. `sql.typeAlias('void')` marks a statement that returns no rows. */
export const sql = createSqlTag({ typeAliases: { void: z.object({}).strict() } });
export type { DatabasePool, DatabasePoolConnection, DatabaseTransactionConnection, CommonQueryMethods } from 'slonik';

/**
 * The query as a named prepared statement, named by its text: each connection
 * parses and plans it once, and PostgreSQL keeps its plan (a generic one once
 * five runs show it is no worse). For the statements every job runs, whose
 * plans cost more than their execution: planning the submit's CTEs took 1 ms
 * of a 2.5 ms statement. Only for statements of a few shapes (each shape is
 * kept by every connection that ran it) whose best plan does not depend on
 * the values (ids, not search terms). Behind a pooler, this needs one that
 * keeps prepared statements per server connection (PgBouncer ≥ 1.21 with
 * max_prepared_statements), as session pooling does.
 */
export function prepared<T extends QuerySqlToken>(query: T): T {
  const name = `s_${createHash('sha1').update(query.sql).digest('base64url')}`;
  return Object.freeze({ ...query, name });
}

const resultParser: Interceptor = {
  name: 'result-parser',
  // Synchronous: the row schemas are zod's, which validate without a promise
  // (an async transform would cost a promise and a tick per row).
  transformRow: (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = parser['~standard'].validate(row);
    if (result instanceof Promise) throw new TypeError('row schemas must validate synchronously');
    if (result.issues) throw new SchemaValidationError(query, row, result.issues);
    return result.value as QueryResultRow;
  },
};

// Rows go straight into JSON responses: timestamps become ISO strings (not
// slonik's epoch numbers) and int8 becomes a number (JSON has no BigInt;
// counts and credit sums stay far below 2^53, and a larger one fails loudly).
const typeParsers = [
  ...createTypeParserPreset().filter((parser) => !['int8', 'timestamp', 'timestamptz'].includes(parser.name)),
  { name: 'int8', parse: (value: string) => toSafeInteger(value) },
  {
    name: 'timestamptz',
    parse: (value: string) => utcText(value) ?? withMicroseconds(value, new Date(Date.parse(value)).toISOString()),
  },
  {
    name: 'timestamp',
    parse: (value: string) => withMicroseconds(value, new Date(Date.parse(`${value}Z`)).toISOString()),
  },
];

const utcShape = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz PostgreSQL wrote in UTC (its TimeZone is UTC unless set
 * otherwise) rewritten as ISO without a Date: the same text as below, at a
 * fraction of the cost, on every timestamp of every row. Null for anything
 * else (another zone, a BC date, infinity), which the Date path handles.
 */
function utcText(text: string): string | null {
  const match = utcShape.exec(text);
  if (!match) return null;
  const fraction = match[3] ?? '';
  return `${match[1]}T${match[2]}.${fraction.padEnd(fraction.length > 3 ? 6 : 3, '0')}Z`;
}

/**
 * PostgreSQL keeps microseconds, a Date only milliseconds: the rest is put
 * back so a timestamp read and sent back (a pagination cursor) compares equal
 * to the stored one, instead of sorting before it.
 */
function withMicroseconds(text: string, iso: string): string {
  const micros = /\.\d{3}(\d{1,3})/.exec(text)?.[1];
  return micros ? iso.replace(/Z$/, `${micros.padEnd(3, '0')}Z`) : iso;
}

function toSafeInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new RangeError(`int8 value ${value} exceeds the safe integer range`);
  return number;
}

export type PoolOptions = {
  maxPoolSize?: number;
  applicationName?: string;
  /** Server-side cap on any one statement; per-request timeouts cancel sooner. */
  statementTimeoutMs?: number;
  /**
   * The role every connection acts as (DATABASE_APP_ROLE), set when it
   * starts: one that row-level security binds, so that each statement sees
   * only the rows of the tenant it acts for (./tenant-scope.ts).
   */
  role?: string | undefined;
};

export async function createPool(url: string, options: PoolOptions = {}): Promise<DatabasePool> {
  const connectionUri = asRole(withApplicationName(url, options.applicationName ?? 'content-platform'), options.role);
  if (options.role) enforceTenantScopes();
  const pool = await createSlonikPool(connectionUri, {
    maxPoolSize: options.maxPoolSize ?? 10,
    interceptors: [resultParser],
    typeParsers,
    statementTimeout: options.statementTimeoutMs ?? 300_000,
    captureStackTrace: false,
    // slonik's default runs DISCARD ALL on every release: a round trip per
    // borrowed connection. Nothing of ours leaves session state behind that a
    // later borrower could trip on (locks are transaction-scoped, settings are
    // set per connection at start, no LISTEN or temporary tables on pooled
    // connections; the named statements of prepared() are meant to stay), so
    // there is nothing to discard.
    resetConnection: async () => {},
  });
  // Without a listener, a connection error surfaces as an unhandled 'error' event.
  pool.on('error', () => undefined);
  return pool;
}

/** The URL with `-c role=…` among its startup options: SET ROLE before the connection's first statement, no round trip. */
function asRole(url: string, role: string | undefined): string {
  return role ? withSetting(url, 'role', role) : url;
}

/**
 * The URL with `-c name=value` added to its startup options (those it names
 * already are kept): a setting of the session from its start, with no
 * statement. In the URL rather than pg's `options`, which a URL's own
 * `options` would replace.
 */
export function withSetting(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  const given = parsed.searchParams.get('options');
  parsed.searchParams.set('options', `${given ? `${given} ` : ''}-c ${name}=${value}`);
  return parsed.toString();
}

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has('application_name')) parsed.searchParams.set('application_name', name);
  return parsed.toString();
}
