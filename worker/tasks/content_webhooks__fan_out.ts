// A tenant's content events made into deliveries and sent (their tenant in
// the payload), queued by the database's triggers; see
// core/webhooks/content-events.ts.
import { z } from 'zod';
import { runContentWebhooks } from '../../core/webhooks/content-events.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ tenant_id: z.uuid() }),
  async run({ tenant_id }, context) {
    await runContentWebhooks(context, tenant_id);
  },
});
