// Every quarter hour (see the worker's crontab): expired grants leave the
// ledger (core/credits/expiry.ts).
import { z } from 'zod';
import { expireDueCredits } from '../../core/credits/expiry.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({}).loose(),
  async run(_payload, { db, logger }) {
    const expired = await expireDueCredits(db);
    if (expired.lots > 0) logger.info(expired, 'expired credits taken away');
  },
});
