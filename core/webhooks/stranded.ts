// Deliveries nothing will send: pending, their next attempt due more than a
// minute ago, and no queue entry left that can run it — the task failed each
// of its runs (the database away, say) and graphile-worker gave it up. Left
// alone they would stay pending for ever. Each such run of the queue counts
// as an attempt that sent nothing, recorded as the receiver's failures are:
// the delivery is tried again after the next wait of
// JOB_WEBHOOK_RETRY_SECONDS, and fails once they are spent. Checked on the
// workers' heartbeat, beside the jobs nothing will finish (core/jobs/stranded.ts).
import { sql, type DatabasePool } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { entryCanRun } from '../jobs/queue.ts';
import type { Logger } from '../logger.ts';
import { deliveryKey } from './announce.ts';
import { fanOutKey } from './content-events.ts';
import { pending, pendingColumns, recordAttempt } from './deliver.ts';

const notSent = {
  code: 'not_sent',
  message: 'Nothing was sent: the delivery task failed each time it ran, and its queue entry gave up.',
};

export async function retryStrandedDeliveries(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  return db.transaction(async (tx) => {
    const stranded = await tx.any(sql.type(pending)`
      select ${pendingColumns} from job_webhooks w
      where w.status = 'pending' and coalesce(w.next_attempt_at, w.created_at) < now() - interval '1 minute'
        and not ${entryCanRun(sql.fragment`${deliveryKey('')} || w.id::text`)}
        -- A content delivery not yet tried is sent by its tenant's run (./content-events.ts).
        and not (w.subscription_id is not null and w.attempts = 0 and w.next_attempt_at is null
                 and ${entryCanRun(sql.fragment`${fanOutKey('')} || w.tenant_id::text`)})
      order by coalesce(w.next_attempt_at, w.created_at)
      limit 100
      for update of w skip locked`);
    for (const delivery of stranded) {
      const attempt = delivery.attempts + 1;
      const outcome = { verdict: 'retry' as const, responseStatus: null, error: notSent };
      const status = await recordAttempt(tx, config, delivery, {
        attempt,
        startedAt: new Date(),
        durationMs: 0,
        outcome,
      });
      logger.warn(
        { webhook_id: delivery.id, attempt, status },
        'a job webhook delivery whose queue entry gave up was recorded as not sent',
      );
    }
    return stranded.length;
  });
}
