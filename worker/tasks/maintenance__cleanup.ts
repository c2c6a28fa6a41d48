// Hourly (see the worker's crontab): removes what has expired and can never
// be used again (core/cleanup.ts says what, and after how long).
import { z } from 'zod';
import { removeExpiredRows } from '../../core/cleanup.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({}).loose(),
  async run(_payload, { db, logger, config }) {
    const removed = await removeExpiredRows(db, config);
    logger.info(removed, 'expired rows removed');
  },
});
