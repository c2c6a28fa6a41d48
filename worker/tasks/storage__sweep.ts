// Daily (see the worker's crontab): removes stored files that no row refers
// to (core/media/orphans.ts) — left by a process killed between writing a
// file and committing its row, or by a removal that failed.
import { z } from 'zod';
import { sweepOrphans } from '../../core/media/orphans.ts';
import { defineTask } from '../task.ts';

// Only files last written this long ago are judged: an upload commits its row
// right after its last byte is stored, and a job settles seconds after storing
// its output, so an hour is far past any write still on its way to its row.
const defaultGraceMinutes = 60;

export default defineTask({
  payload: z.object({ grace_minutes: z.number().int().min(0).optional() }).loose(),
  async run(payload, { db, storage, logger }) {
    const grace = payload.grace_minutes ?? defaultGraceMinutes;
    const swept = await sweepOrphans({ db, storage, logger }, new Date(Date.now() - grace * 60_000));
    logger.info(swept, 'stored files without a row removed');
  },
});
