// Finished jobs' rows past JOB_RETENTION_DAYS, removed by the hourly
// maintenance__cleanup task, a batch per statement: deleting a month of jobs
// at once held every row's lock, and its children's, for one long
// transaction, and a first run after a large backlog could outlast the task.
// What goes with a job, by the schema's foreign keys: its attempts, agent
// steps, provider calls and webhook deliveries (on delete cascade); media,
// knowledge documents and agent messages keep their rows, their job_id set to
// null. The credit ledger keeps every entry: credit_entries.job_id has no
// foreign key, so balances stay the sums of their entries (a finished job
// holds no reservation). Migration 0054 indexes the one set-null reference
// that had no index of its own, so each batch does not read agent_messages
// whole.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { finished } from './model.ts';

/** Jobs per statement: a few milliseconds of locks each, with their children's rows. */
const batchSize = 1000;

/**
 * Deletes finished jobs that finished more than `days` ago, oldest first, a
 * batch at a time until none is left (or `signal` asks the task to stop);
 * answers how many went. A row another session holds (a retry racing the
 * sweep) is skipped and left for the next run.
 */
export async function removeFinishedJobs(
  db: CommonQueryMethods,
  days: number,
  options: { batch?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const size = options.batch ?? batchSize;
  let removed = 0;
  while (!options.signal?.aborted) {
    const count = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
      with old as (
        select id from jobs
        where finished_at < now() - ${days} * interval '1 day' and status = any(${sql.array([...finished], 'text')})
        order by finished_at limit ${size} for update skip locked
      ), gone as (
        delete from jobs where id in (select id from old) returning 1
      )
      select count(*)::int as count from gone`);
    removed += count;
    if (count < size) break;
  }
  return removed;
}
