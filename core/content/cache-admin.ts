// Clearing the public cache by hand (global administrators): an element's
// answers on a site, a site's, or everything. The clearing is announced like
// any content change, so every API process drops the same entries.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';

export const clearedSchema = z
  .object({ tags: z.array(z.string()).describe('What was dropped in every API process: entries carrying these tags') })
  .meta({ id: 'CacheCleared' });

const announce = async (db: CommonQueryMethods, tags: string[]) => {
  await db.query(sql.typeAlias('void')`select from pg_notify('content_changed', ${tags.join(' ')})`);
  return { tags };
};

export async function clearSite(db: CommonQueryMethods, siteId: string) {
  const found = await db.exists(sql.type(z.object({}))`select 1 from sites where id = ${siteId}`);
  if (!found) throw notFound('No such site.');
  return announce(db, [`site:${siteId}`]);
}

export async function clearElement(db: CommonQueryMethods, elementId: string, siteId: string) {
  const master = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    select coalesce(master_id, id) as id from content_elements where id = ${elementId} and site_id = ${siteId}`);
  if (!master) throw notFound('No such element in that site.');
  return announce(db, [`element:${master}`]);
}

export const clearAll = (db: CommonQueryMethods) => announce(db, ['*']);
