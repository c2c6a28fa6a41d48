// Hourly (see the worker's crontab): removes what has expired and can never
// be used again (core/cleanup.ts says what, and after how long), then
// finished jobs past JOB_RETENTION_DAYS, in batches (core/jobs/retention.ts).
import { z } from 'zod';
import { removeExpiredRows } from '../../core/cleanup.ts';
import { removeFinishedJobs } from '../../core/jobs/retention.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({}).loose(),
  async run(_payload, { db, logger, config, signal }) {
    const removed = await removeExpiredRows(db, config);
    const jobs = await removeFinishedJobs(db, config.jobs.retentionDays, { signal });
    logger.info({ ...removed, jobs }, 'expired rows removed');
  },
});
