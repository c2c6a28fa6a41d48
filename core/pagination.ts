// Keyset pagination shared by every list: ?limit (default 50, max 200),
// ?cursor (opaque), ?include_total=true; answers {items, next_cursor, total?}.
import { z } from 'zod';
import { instant } from './timestamp.ts';
import { sql, type CommonQueryMethods } from '../db/pool.ts';
import { Problem } from './errors.ts';

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
  include_total: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional(),
});

export type PageQuery = z.output<typeof pageQuery>;

export type Page<T> = { items: T[]; next_cursor: string | null; total?: number };

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last'),
    total: z.number().int().optional().describe('With ?include_total=true'),
  });

type Position = { created_at: string; id: string };

/** A timestamp a cursor may hold: one PostgreSQL takes, or a forged cursor fails the query. */
export const cursorTimestamp = instant;

const position = z.tuple([cursorTimestamp, z.uuid()]);

function decodeCursor(cursor: string): Position {
  try {
    const [created_at, id] = position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { created_at, id };
  } catch {
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  }
}

const encodeCursor = (row: Position) => Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');

/** `(created_at, id) > cursor` for the WHERE clause: rows after the cursor, or all. */
export function after(query: PageQuery, table: string) {
  if (!query.cursor) return sql.fragment`true`;
  const { created_at, id } = decodeCursor(query.cursor);
  return sql.fragment`(${sql.identifier([table, 'created_at'])}, ${sql.identifier([table, 'id'])}) > (${created_at}::timestamptz, ${id}::uuid)`;
}

/** `(created_at, id) < cursor`: the same, for a list read newest first. */
export function before(query: PageQuery, table: string) {
  if (!query.cursor) return sql.fragment`true`;
  const { created_at, id } = decodeCursor(query.cursor);
  return sql.fragment`(${sql.identifier([table, 'created_at'])}, ${sql.identifier([table, 'id'])}) < (${created_at}::timestamptz, ${id}::uuid)`;
}

/** Runs a list query that fetched `limit + 1` rows into a page. */
export async function toPage<T extends Position>(
  rows: readonly T[],
  query: PageQuery,
  count?: () => Promise<number>,
): Promise<Page<T>> {
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return {
    items,
    next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null,
    ...(query.include_total && count ? { total: await count() } : {}),
  };
}

export const countOf = (db: CommonQueryMethods, query: ReturnType<typeof sql.fragment>) =>
  db.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from (${query}) as counted`);
