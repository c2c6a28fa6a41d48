// A stored file may be named by more than one media item: a tenant's clone
// shares the original's files by reference (core/cloning/content-copy.ts)
// until either side changes its own. So a file is removed only once no item,
// variant or earlier version of any tenant names its key any more — asked
// after the rows that named it are gone, in the same transaction.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

/** Which of `keys` nothing names any more (media_keys_unused, migration 0060: it sees every tenant's rows). */
export async function unusedKeys(db: CommonQueryMethods, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  return [
    ...(await db.anyFirst(sql.type(z.object({ key: z.string() }))`
      select key from media_keys_unused(${sql.array([...new Set(keys)], 'text')}) as key`)),
  ];
}
