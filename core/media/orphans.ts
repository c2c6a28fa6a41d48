// Files in storage that no row refers to. A file is written before the row
// that names it commits (an upload streams to storage, then records its item;
// a job stores its output, then settles), so a process killed in between —
// or a write cut short, which leaves a local `.partial` file — leaves a file
// behind; so does a removal that failed after its row was deleted. They cost
// space, never correctness: nothing serves a key without its row. The sweep
// removes those last written before a time well past any write under way.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Logger } from '../logger.ts';
import type { Storage } from '../storage/storage.ts';

/** Every key we write starts with its tenant's and site's ids (core/media/upload.ts, worker/jobs/*). */
const siteKey = /^[0-9a-f-]{36}\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\//;

const batchSize = 500;

export type Sweep = { listed: number; removed: number };

/**
 * Removes the objects last written before `before` that no row of their site
 * refers to: an item's file, its variants and its earlier versions, or the
 * upload a PDF import job reads. Keys of another shape are not ours to judge
 * and stay. Safe to run again, and beside writes: a key is judged by the rows
 * committed when it is judged.
 */
export async function sweepOrphans(
  deps: { db: CommonQueryMethods; storage: Storage; logger: Logger },
  before: Date,
): Promise<Sweep> {
  const { storage, logger } = deps;
  const result: Sweep = { listed: 0, removed: 0 };
  let site: string | undefined;
  let batch: string[] = [];
  const judge = async () => {
    if (site && batch.length > 0) {
      for (const key of await unreferencedKeys(deps.db, site, batch)) {
        await storage.delete(key);
        result.removed++;
        logger.info({ key }, 'removed a stored file no row refers to');
      }
    }
    batch = [];
  };
  // Listings come in key order, so a site's keys arrive together and are judged by the batch.
  for await (const object of storage.list()) {
    result.listed++;
    const of = siteKey.exec(object.key)?.[1];
    if (!of || object.modified >= before) continue;
    if (of !== site || batch.length >= batchSize) {
      await judge();
      site = of;
    }
    batch.push(object.key);
  }
  await judge();
  return result;
}

/**
 * Which of the site's `keys` no row refers to: no media item of any site (a
 * clone's copy shares the original's files, ./shared-files.ts), nor a job of
 * the site.
 */
export async function unreferencedKeys(
  db: CommonQueryMethods,
  siteId: string,
  keys: string[],
): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ key: z.string() }))`
    select key from media_keys_unused(${sql.array(keys, 'text')}) as key
    except
    select input->>'file_key' from jobs where site_id = ${siteId} and input ? 'file_key'`);
}
