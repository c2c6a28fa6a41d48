// Scheduled posts publish themselves: one graphile-worker job per post, keyed
// by the post, run at its time. Scheduling again replaces the job; leaving the
// schedule removes it. The job publishes the post only if it is still
// scheduled and its time has come, so a job that outlived a change, or runs
// twice after a crash, does nothing the second time.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { enqueue } from '../jobs/enqueue.ts';

export const publishTask = 'posts__publish';

const jobKey = (postId: string) => `post-publish:${postId}`;

/** Plans (or, with null, cancels) the post's publication, in the caller's transaction. */
export async function schedulePublication(db: CommonQueryMethods, postId: string, at: string | null): Promise<void> {
  if (at) await enqueue(db, publishTask, { post_id: postId }, { runAt: new Date(at), jobKey: jobKey(postId) });
  else await db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${jobKey(postId)})`);
}

/** Publishes the post if it is scheduled and due; answers whether it did. */
export async function publishDuePost(db: CommonQueryMethods, postId: string): Promise<boolean> {
  const published = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    update posts set status = 'published', published_at = now(), scheduled_for = null, version = version + 1
    where id = ${postId} and status = 'scheduled' and scheduled_for <= now()
    returning id`);
  return published !== null;
}
