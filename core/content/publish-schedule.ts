// Scheduled publication of elements and pages, as posts have it
// (core/posts/schedule.ts): `publish_at` on the row, and one graphile-worker
// job keyed by the row, run at that time. Planning again replaces the job;
// clearing the time removes it. The job publishes only if the row still has
// a time and it has come (the publication itself re-reads the row), so a job
// that outlived a change, or runs twice, does nothing the second time.
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { enqueue } from '../jobs/enqueue.ts';

export const contentPublishTask = 'content__publish';

export type ScheduledKind = 'element' | 'page';

const jobKey = (kind: ScheduledKind, id: string) => `content-publish:${kind}:${id}`;

/** Plans (or, with null, cancels) the publication, in the caller's transaction. */
export async function planPublication(
  db: CommonQueryMethods,
  kind: ScheduledKind,
  id: string,
  at: string | null,
): Promise<void> {
  if (at) await enqueue(db, contentPublishTask, { kind, id }, { runAt: new Date(at), jobKey: jobKey(kind, id) });
  else await db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${jobKey(kind, id)})`);
}

/** A time to publish at: in the future (422 at `path` otherwise), as posts' scheduled_for. */
export function futureTime(at: string, path: string): string {
  if (Date.parse(at) <= Date.now())
    throw new Problem(422, 'A scheduled publication is in the future.', {
      errors: [{ path, message: 'is not in the future' }],
    });
  return at;
}

export const nothingToPublish = (path: string) =>
  new Problem(422, 'Nothing to publish: the item is published and has no draft.', {
    errors: [{ path, message: 'needs a draft, or an unpublished item, to publish' }],
  });
