// Runs every minute from the worker's crontab (and on demand). /health reads the
// row it writes to show whether any worker is taking jobs. Safe to run twice.
import { z } from 'zod';
import { recordHeartbeat } from '../../core/health.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ name: z.string().min(1).max(100).default('queue') }).loose(),
  async run(payload, { db, workerId }) {
    await recordHeartbeat(db, payload.name, workerId);
  },
});
