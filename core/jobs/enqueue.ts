// Puts a graphile-worker job on the queue through the caller's connection, so
// it commits or rolls back with the caller's transaction: a request that fails
// after "enqueueing" leaves no job behind.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

export type EnqueueOptions = {
  queueName?: string;
  runAt?: Date;
  maxAttempts?: number;
  /** A job with the same key replaces the pending one instead of adding another. */
  jobKey?: string;
  /**
   * `preserve_run_at`: the pending one keeps its time, so changes meanwhile are folded into it.
   * `new`: the key was made for this entry (it names a row the same statement inserts), so no entry
   * can hold it yet. graphile-worker's `unsafe_dedupe` mode then does what `replace` would (insert,
   * notify) as one statement, where `replace` goes through add_jobs' four: 10–30× cheaper
   * (docs/scaling.md, "What one job waits for"). Never for a key that may already be queued:
   * `unsafe_dedupe` would leave that entry as it is and queue nothing.
   */
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'new';
  /** Lower runs first; a number, or an SQL value read in the statement (a kind's setting: ./queue.ts). */
  priority?: number | ReturnType<typeof sql.fragment>;
  /** Workers can be told to skip jobs with given flags (graphile-worker's forbiddenFlags). */
  flags?: string[];
};

/** The call of graphile-worker's add_job, for a statement that enqueues as part of a larger change. */
export function addJob(task: string, payload: Record<string, unknown>, options: EnqueueOptions = {}) {
  return sql.fragment`graphile_worker.add_job(
      identifier => ${task},
      payload => ${sql.json(payload)},
      queue_name => ${options.queueName ?? null},
      run_at => ${options.runAt?.toISOString() ?? null}::timestamptz,
      max_attempts => ${options.maxAttempts ?? null}::integer,
      job_key => ${options.jobKey ?? null},
      priority => ${options.priority ?? null}::integer,
      flags => ${options.flags ? sql.array(options.flags, 'text') : null}::text[],
      job_key_mode => ${options.jobKeyMode === 'new' ? 'unsafe_dedupe' : (options.jobKeyMode ?? 'replace')}
    )`;
}

const queued = z.object({ id: z.string() });

export async function enqueue(
  connection: CommonQueryMethods,
  task: string,
  payload: Record<string, unknown>,
  options: EnqueueOptions = {},
): Promise<{ id: string }> {
  return connection.one(sql.type(queued)`select id::text from ${addJob(task, payload, options)}`);
}
