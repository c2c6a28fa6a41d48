// Keyset pages over a chosen sort column (a name, a date that may be null),
// ties broken by id: the cursor holds the last row's value and id. Lists
// sorted by creation use core/pagination.ts alone.
import { z } from 'zod';
import { sql } from '../db/pool.ts';
import { Problem } from './errors.ts';

export type SortKey = { column: string; cast: 'text' | 'timestamptz' | 'int8' };

const position = z.tuple([z.string().max(1000).nullable(), z.uuid()]);

function decode(cursor: string): [string | null, string] {
  try {
    return position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  }
}

/** A number is kept as its text, so every sort's cursor has one shape. */
const cursorValue = (value: unknown) => (value === null || value === undefined ? null : String(value));

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
  const [value, id] = decode(cursor);
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
