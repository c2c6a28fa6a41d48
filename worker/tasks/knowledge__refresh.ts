// A post's text changed (queued with the change: core/knowledge/follow-posts.ts):
// the knowledge documents taken from it are indexed again, paid from the
// tenant's pool (core/knowledge/refresh.ts).
import { z } from 'zod';
import { refreshPostDocuments } from '../../core/knowledge/refresh.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ post_id: z.uuid() }),
  async run({ post_id }, { db, config, logger }) {
    const refreshed = await refreshPostDocuments({ db, config }, post_id);
    logger.info({ post_id, ...refreshed }, 'knowledge documents of a changed post refreshed');
  },
});
