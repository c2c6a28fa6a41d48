// A scheduled post's time has come (core/posts/schedule.ts).
import { z } from 'zod';
import { publishDuePost } from '../../core/posts/schedule.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ post_id: z.uuid() }),
  async run({ post_id }, { db, logger }) {
    if (await publishDuePost(db, post_id)) logger.info({ post_id }, 'scheduled post published');
  },
});
