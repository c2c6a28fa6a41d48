// Rebuilding a site's search documents from its items, and dropping them.
// The triggers of 0023 keep documents current on every write; a rebuild is
// for what they cannot see (a changed text search configuration, a dropped
// index). It runs in batches, each its own short transaction, through the
// same search_refresh the triggers call, so it is safe to repeat and to run
// beside writers. One at a time per site: a second request while one is
// queued or running gets that job.
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { jobColumns, jobRow, toJob, type Job } from '../jobs/model.ts';
import { submitJob } from '../jobs/submit.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { JobWebhook } from '../webhooks/request.ts';

export const reindexKind = 'search_reindex';
const batchSize = 500;

/** The source table and kind of each searchable thing, and when its row counts as public. */
const sources = [
  { kind: 'post', table: 'posts', visible: sql.fragment`s.status = 'published'` },
  { kind: 'page', table: 'pages', visible: sql.fragment`s.status = 'published'` },
  { kind: 'element', table: 'content_elements', visible: sql.fragment`s.status = 'published'` },
  { kind: 'media', table: 'media_items', visible: sql.fragment`s.status = 'ready'` },
] as const;

/** Submits the site's reindex, or answers the one already waiting or running (which keeps its own webhook). */
export async function submitReindex(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  { webhook = null, priority }: { webhook?: JobWebhook | null; priority?: number | undefined } = {},
): Promise<{ job: Job; existing: boolean }> {
  return db.transaction(async (tx) => {
    // Two submits at once: the second waits here and then sees the first's job.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext(${`${reindexKind}:${access.site.id}`}))`);
    const pending = await tx.maybeOne(sql.type(jobRow)`
      select ${jobColumns} from jobs
      where site_id = ${access.site.id} and kind = ${reindexKind} and status in ('queued', 'running', 'waiting')
      order by created_at limit 1`);
    if (pending) return { job: toJob(pending), existing: true };
    return {
      job: await submitJob(tx, config, access, { kind: reindexKind, input: {}, estimatedUnits: 1, webhook, priority }),
      existing: false,
    };
  });
}

export type ReindexReport = { documents: number; refreshed: number; removed: number };

/** Rebuilds every document of the site; `progress` hears the fraction done. */
export async function reindexSite(
  db: DatabasePool,
  siteId: string,
  jobId: string | null,
  progress: (fraction: number, stage: string) => Promise<void>,
  signal: AbortSignal,
): Promise<ReindexReport> {
  let refreshed = 0;
  let removed = 0;
  for (const [index, source] of sources.entries()) {
    const table = sql.identifier([source.table]);
    let last = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      signal.throwIfAborted();
      const ids = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        select s.id from ${table} s where s.site_id = ${siteId} and s.id > ${last} order by s.id limit ${batchSize}`);
      if (ids.length === 0) break;
      await db.query(
        sql.typeAlias('void')`select from search_refresh(${source.kind}, ${sql.array(ids, 'uuid')}, true)`,
      );
      refreshed += ids.length;
      last = ids.at(-1) as string;
    }
    // Documents whose item went away without its trigger (an index restored from elsewhere, say).
    removed += (
      await db.query(sql.typeAlias('void')`
        delete from search_documents d where d.site_id = ${siteId} and d.kind = ${source.kind}
          and not exists (select 1 from ${table} s where s.id = d.item_id and s.site_id = ${siteId} and ${source.visible})`)
    ).rowCount;
    await progress((index + 1) / sources.length, `${source.kind} documents rebuilt`);
  }
  const documents = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
    insert into search_reindexes (site_id, job_id, documents)
    values (${siteId}, ${jobId}, (select count(*)::int from search_documents where site_id = ${siteId}))
    on conflict (site_id) do update set job_id = excluded.job_id, documents = excluded.documents, finished_at = now()
    returning documents as count`);
  return { documents, refreshed, removed };
}

/** Drops the site's documents (and with them its words); writes index items again as they change. */
export async function deleteSiteIndex(db: CommonQueryMethods, siteId: string): Promise<number> {
  return (await db.query(sql.typeAlias('void')`delete from search_documents where site_id = ${siteId}`)).rowCount;
}
