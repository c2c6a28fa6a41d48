// Where elements and pages are in their life: a draft (may be incomplete,
// never public), published (public once its site is), archived (kept, not
// public). Publishing stamps published_at once; going back to draft clears
// it; archiving keeps it as the record of when it was last out.
import { sql } from '../../db/pool.ts';

export const contentStatuses = ['draft', 'published', 'archived'] as const;

export type ContentStatus = (typeof contentStatuses)[number];

/** published_at after a change to `status`, as SQL over the row `alias`. */
export function publishedAtAfter(status: ContentStatus, alias: string) {
  const column = sql.identifier([alias, 'published_at']);
  if (status === 'published') return sql.fragment`coalesce(${column}, now())`;
  if (status === 'draft') return sql.fragment`null`;
  return sql.fragment`${column}`;
}
