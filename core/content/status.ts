// Where elements and pages are in their life: a draft (may be incomplete,
// never public), published (public once its site is), archived (kept, not
// public). Publishing stamps published_at once; going back to draft clears
// it; archiving keeps it as the record of when it was last out. Posts have
// one more status, scheduled (core/posts), unpublished like a draft.
import { sql } from '../../db/pool.ts';

export const contentStatuses = ['draft', 'published', 'archived'] as const;

export type ContentStatus = (typeof contentStatuses)[number];

/** published_at after a change to `status`, as SQL over the row `alias`. */
export function publishedAtAfter(status: ContentStatus | 'scheduled', alias: string) {
  const column = sql.identifier([alias, 'published_at']);
  if (status === 'published') return sql.fragment`coalesce(${column}, now())`;
  if (status === 'archived') return sql.fragment`${column}`;
  return sql.fragment`null`;
}
