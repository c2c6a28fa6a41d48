// Every hour (see the worker's crontab): the free plan's credits for this
// calendar month to each tenant that has not had them (core/billing/
// monthly-credits.ts). Hourly rather than once on the 1st, so a month is
// not missed when no worker ran at midnight, and a new tenant gets its
// credits within the hour; the ledger's once-key makes every run after the
// first a no-op.
import { z } from 'zod';
import { allocateFreeCredits } from '../../core/billing/monthly-credits.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({}).loose(),
  async run(_payload, { db, logger }) {
    const allocation = await allocateFreeCredits(db);
    if (allocation.granted > 0) logger.info(allocation, 'free plan credits allocated');
  },
});
