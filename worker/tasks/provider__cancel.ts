// Tells a vendor to stop work it holds for a job that was canceled (queued by
// core/jobs/cancel.ts in the cancel's own transaction), so it stops
// rendering, and costing, upstream. Safe to run twice: the vendor answers a
// second cancel with the work as it stands. A vendor that cannot be reached
// is asked again (graphile-worker's backoff); one that refuses is logged and
// left, since the job is canceled here whatever it says.
import { z } from 'zod';
import { JobError } from '../../core/jobs/errors.ts';
import { cancelWork } from '../../core/providers/registry.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ provider: z.string(), ref: z.string().min(1), model: z.string().nullable().default(null) }),
  async run(work, { config, logger, signal }) {
    try {
      const told = await cancelWork(
        config,
        work,
        AbortSignal.any([signal, AbortSignal.timeout(config.providers.timeoutMs)]),
      );
      if (!told) logger.warn(work, 'a canceled job’s work is at a vendor that is no longer configured');
    } catch (error) {
      if (error instanceof JobError && !error.transient) {
        logger.warn({ err: error, ...work }, 'the vendor refused to cancel the work');
        return;
      }
      throw error;
    }
  },
});
