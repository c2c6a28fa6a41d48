// Knowledge documents follow their posts: a change of a post's text (its
// title, excerpt, body, format or locale; not its tags or status) queues, in
// the transaction that makes it, the refresh of the documents taken from the
// post (worker/tasks/knowledge__refresh.ts, ./refresh.ts), which submits their
// rag_index jobs, paid from the tenant's pool.
//
// Why a task queued with the change, and not the rag_index job itself nor a
// sweep: the job reserves credits, and a post's edit must not fail (402) or
// wait on the pool's account row because of a knowledge base its author may
// not even see; nor should every autosave make a job. The task is keyed by
// the post and starts a moment later, keeping its time when the post changes
// again meanwhile, so a burst of edits makes one refresh; a sweep would have
// to scan every post document on a timer to find the few that changed, and
// would be late by its period. Queued with the change, the refresh is never
// lost: the change and the task commit together.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { addJob } from '../jobs/enqueue.ts';

export const refreshTask = 'knowledge__refresh';

/** How long a refresh waits for more changes of the same post. */
const settleMs = 2000;

/** What a post's snapshot is made of (./add.ts, postSnapshot), and so what a change of must refresh it. */
export type PostText = { title: string; excerpt: string; body: string; body_format: string; locale: string };

const textChanged = (before: PostText, after: PostText) =>
  before.title !== after.title ||
  before.excerpt !== after.excerpt ||
  before.body !== after.body ||
  before.body_format !== after.body_format ||
  before.locale !== after.locale;

/** In the transaction that changed the post: queues the refresh of the documents taken from it, if it has any. */
export async function followPostChange(
  tx: CommonQueryMethods,
  postId: string,
  before: PostText,
  after: PostText,
): Promise<void> {
  if (!textChanged(before, after)) return;
  const refresh = addJob(
    refreshTask,
    { post_id: postId },
    { jobKey: `knowledge-refresh:${postId}`, jobKeyMode: 'preserve_run_at', runAt: new Date(Date.now() + settleMs) },
  );
  // Once for the one row the post's documents make, none when it has none.
  await tx.query(sql.type(z.object({ queued: z.string() }))`
    select (${refresh}).id::text as queued
    from (select 1 from knowledge_documents where post_id = ${postId} limit 1) followed`);
}
