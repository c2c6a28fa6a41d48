// Runs one platform job (its id in the payload); see worker/jobs/run.ts.
import { z } from 'zod';
import { runJob } from '../jobs/run.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ job_id: z.uuid() }),
  async run(payload, context) {
    await runJob(context, payload.job_id, {
      workerId: context.workerId,
      attempts: context.job.attempts,
      maxAttempts: context.job.maxAttempts,
      signal: context.signal,
    });
  },
});
