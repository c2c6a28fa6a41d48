// The order of a job list: oldest first (as lists always were, so clients
// that page without `sort` see no change) or newest first, where a fresh
// failure is on the first page. Both walk the (…, created_at, id) indexes of
// db/migrations/0005_jobs.sql, backwards for newest first.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { after, before, countOf, toPage, type PageQuery } from '../pagination.ts';

export const jobSorts = ['created_at', '-created_at'] as const;

export const jobSort = z
  .enum(jobSorts)
  .default('created_at')
  .describe(
    '`created_at`: oldest first (the default); `-created_at`: newest first. A cursor pages on in the order it came from.',
  );

/**
 * A page of `matching` (a select of jobs ending in a WHERE clause that takes
 * one more condition) in the order asked for, with its total when asked.
 */
export async function orderedJobPage<T extends { id: string; created_at: string }>(
  db: CommonQueryMethods,
  rowSchema: z.ZodType<T>,
  matching: ReturnType<typeof sql.fragment>,
  query: PageQuery & { sort: (typeof jobSorts)[number] },
) {
  const newestFirst = query.sort === '-created_at';
  // No `nulls last`: created_at is never null, and a plain desc order lets PostgreSQL read the index backwards.
  const rows = await db.any(sql.type(rowSchema)`
    ${matching} and ${newestFirst ? before(query, 'jobs') : after(query, 'jobs')}
    order by ${newestFirst ? sql.fragment`jobs.created_at desc, jobs.id desc` : sql.fragment`jobs.created_at, jobs.id`}
    limit ${query.limit + 1}`);
  return toPage(rows, query, () => countOf(db, matching));
}
