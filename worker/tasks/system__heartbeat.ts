// Runs every minute from the worker's crontab (and on demand). /health reads the
// row it writes to show whether any worker is taking jobs. Safe to run twice.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ name: z.string().min(1).max(100).default('queue') }).loose(),
  async run(payload, { db, workerId }) {
    await db.query(sql.typeAlias('void')`
      insert into worker_heartbeats (name, worker_id, ran_at) values (${payload.name}, ${workerId}, now())
      on conflict (name) do update set worker_id = excluded.worker_id, ran_at = excluded.ran_at`);
  },
});
