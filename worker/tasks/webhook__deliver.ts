// One attempt at a job webhook's delivery (its id in the payload); see core/webhooks/deliver.ts.
import { z } from 'zod';
import { deliver } from '../../core/webhooks/deliver.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ webhook_id: z.uuid() }),
  async run({ webhook_id }, context) {
    await deliver(context, webhook_id);
  },
});
