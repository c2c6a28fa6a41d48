// Runs one platform job (its id in the payload); see worker/jobs/run.ts.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { JobError } from '../../core/jobs/errors.ts';
import { runJob } from '../jobs/run.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ job_id: z.uuid() }),
  async run(payload, context) {
    try {
      await runJob(context, payload.job_id, {
        workerId: context.workerId,
        attempts: context.job.attempts,
        maxAttempts: context.job.maxAttempts,
        signal: context.signal,
      });
    } catch (error) {
      // A provider that said when to come back (Retry-After) is not asked
      // sooner: graphile-worker's backoff starts from the queue entry's
      // run_at, which no public function moves while the entry is locked.
      if (error instanceof JobError && error.retryAfterMs) {
        await context.db.query(sql.typeAlias('void')`
          update graphile_worker._private_jobs set run_at = now() + ${error.retryAfterMs} * interval '1 millisecond'
          where id = ${context.job.id} and locked_by = ${context.workerId}`);
      }
      throw error;
    }
  },
});
