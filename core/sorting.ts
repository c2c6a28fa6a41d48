// Keyset pages over a chosen sort column (a name, a date that may be null),
// ties broken by id: the cursor holds the last row's value and id. Lists
// sorted by creation use core/pagination.ts alone.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../db/pool.ts';
import { Problem } from './errors.ts';
import { countOf, cursorTimestamp, toPage, type PageQuery } from './pagination.ts';

export type SortKey = { column: string; cast: 'text' | 'timestamptz' | 'int8' };

const position = z.tuple([z.string().max(1000).nullable(), z.uuid()]);

/**
 * What a cursor's value must be for its column's type. A forged cursor
 * (["", id] for a date, ["-9223372036854775809", id] for a count) would
 * otherwise fail the cast in the query as a 500 rather than be a 400.
 */
const int8 = z
  .string()
  .regex(/^-?\d{1,19}$/)
  .refine((value) => BigInt(value) >= -(2n ** 63n) && BigInt(value) < 2n ** 63n);
const castable: Record<SortKey['cast'], z.ZodType<string>> = {
  text: z.string(),
  int8,
  timestamptz: cursorTimestamp,
};

function decode(cursor: string, sort: SortKey): [string | null, string] {
  try {
    const [value, id] = position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return [value === null ? null : castable[sort.cast].parse(value), id];
  } catch {
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  }
}

/** A number is kept as its text, so every sort's cursor has one shape. */
const cursorValue = (value: unknown) =>
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a sort column holds text, a number or a bigint
  value === null || value === undefined ? null : String(value);

/** The cursor after `row` for this sort. */
export const sortedCursor = (row: object, sort: SortKey) =>
  Buffer.from(
    JSON.stringify([cursorValue((row as Record<string, unknown>)[sort.column]), (row as { id: string }).id]),
  ).toString('base64url');

/**
 * Rows after the cursor in `order by column asc nulls first, id` (or
 * `desc nulls last, id desc`), as a WHERE condition; true without a cursor.
 */
export function afterSorted(cursor: string | undefined, table: string, sort: SortKey, descending: boolean) {
  if (!cursor) return sql.fragment`true`;
  const [value, id] = decode(cursor, sort);
  const column = sql.identifier([table, sort.column]);
  const key = sql.identifier([table, 'id']);
  const cast =
    sort.cast === 'text'
      ? sql.fragment`${value}::text`
      : sort.cast === 'int8'
        ? sql.fragment`${value}::int8`
        : sql.fragment`${value}::timestamptz`;
  if (!descending)
    return value === null
      ? sql.fragment`((${column} is null and ${key} > ${id}) or ${column} is not null)`
      : sql.fragment`(${column} > ${cast} or (${column} = ${cast} and ${key} > ${id}))`;
  return value === null
    ? sql.fragment`(${column} is null and ${key} < ${id})`
    : sql.fragment`(${column} < ${cast} or (${column} = ${cast} and ${key} < ${id}) or ${column} is null)`;
}

/** The `sort` values a list takes for these keys: each name, and `-name` for descending. */
export const sortOptions = (sorts: Record<string, SortKey>) =>
  Object.keys(sorts).flatMap((name) => [name, `-${name}`]) as [string, ...string[]];

/**
 * A page of `matching` (a select of the rows `table` names, ending in a WHERE
 * clause that takes one more condition) in `query.sort`, one of `sorts`.
 */
export async function sortedPage<T extends { id: string; created_at: string }>(
  db: CommonQueryMethods,
  rowSchema: z.ZodType<T>,
  matching: ReturnType<typeof sql.fragment>,
  table: string,
  sorts: Record<string, SortKey>,
  query: PageQuery & { sort: string },
) {
  const descending = query.sort.startsWith('-');
  const sort = sorts[query.sort.replace(/^-/, '')]!;
  const rows = await db.any(sql.type(rowSchema)`
    ${matching} and ${afterSorted(query.cursor, table, sort, descending)}
    order by ${sql.identifier([table, sort.column])} ${descending ? sql.fragment`desc nulls last` : sql.fragment`asc nulls first`},
      ${sql.identifier([table, 'id'])} ${descending ? sql.fragment`desc` : sql.fragment`asc`}
    limit ${query.limit + 1}`);
  const page = await toPage(rows, query, () => countOf(db, matching));
  return { ...page, next_cursor: page.next_cursor && sortedCursor(page.items.at(-1)!, sort) };
}
