// A scheduled publication of an element or a page is due
// (core/content/publish-schedule.ts).
import { z } from 'zod';
import { publishDueElement } from '../../core/content/element-drafts.ts';
import { publishDuePage } from '../../core/content/page-drafts.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ kind: z.enum(['element', 'page']), id: z.uuid() }),
  async run({ kind, id }, { db, logger }) {
    const result = kind === 'element' ? await publishDueElement(db, id) : await publishDuePage(db, id);
    if (result.published) logger.info({ kind, id }, 'scheduled content published');
    else if (result.problem) logger.warn({ kind, id, problem: result.problem }, 'scheduled content not publishable');
  },
});
