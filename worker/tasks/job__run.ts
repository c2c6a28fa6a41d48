// Runs one platform job (its id in the payload); see worker/jobs/run.ts.
import { z } from 'zod';
import { JobError } from '../../core/jobs/errors.ts';
import { delayRetry } from '../../core/jobs/queue.ts';
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
      // A provider that said when to come back (Retry-After) is not asked sooner.
      if (error instanceof JobError && error.retryAfterMs)
        await delayRetry(context.db, context.job.id, context.workerId, error.retryAfterMs);
      throw error;
    }
  },
});
