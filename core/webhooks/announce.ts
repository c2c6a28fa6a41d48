// Telling a job's webhook what happened to it. Called where the job's state
// changes (core/jobs/settle.ts, worker/jobs/run.ts), on the connection of the
// change, so the delivery and its queue entry commit or roll back with it: a
// job that has no webhook, or did not ask for this event, costs nothing — the
// row in hand says so, no query is made. The delivery itself is a queue task
// (worker/tasks/webhook__deliver.ts), never part of a request.
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { toJob, type JobRow, type WebhookEvent } from '../jobs/model.ts';

export const deliverTask = 'webhook__deliver';
export const progressTask = 'webhook__progress';

/** A job's progress is told at most once a second: changes meanwhile are folded into one delivery. */
const progressEveryMs = 1000;

/**
 * Each tenant's deliveries take their turn on one queue lane, so a tenant
 * whose receiver is slow (each attempt may take JOB_WEBHOOK_TIMEOUT_MS) holds
 * at most one worker, and its jobs' events arrive in order.
 */
export const deliveryLane = (tenantId: string) => `webhooks:${tenantId}`;

/**
 * A delivery's queue entry is keyed by the delivery, so it has at most one,
 * and the workers' sweep (./stranded.ts) can tell a delivery whose entry can
 * still run from one whose entry gave up.
 */
export const deliveryKey = (webhookId: string) => `webhook:${webhookId}`;

/** A failing task (the database away, say) is run again by the queue a few times; failed deliveries retry on their own schedule. */
export const taskAttempts = 5;

const eventTypes: Record<WebhookEvent, string> = {
  start: 'job.started',
  progress: 'job.progress',
  completed: 'job.completed',
};

export const wants = (job: Pick<JobRow, 'webhook' | 'webhook_events'>, event: WebhookEvent) =>
  job.webhook !== null && job.webhook_events.includes(event);

/**
 * Announces `event` of the job, as the row is after the change. Start and
 * completion are recorded once per run (by the time they happened): a run
 * claimed again after its worker was lost does not announce its start twice.
 * Progress is coalesced: the first change queues a delivery a second ahead,
 * and the job is read when it runs.
 */
export async function announce(db: CommonQueryMethods, job: JobRow, event: WebhookEvent): Promise<void> {
  if (!wants(job, event)) return;
  if (event === 'progress') {
    await enqueue(
      db,
      progressTask,
      { job_id: job.id },
      {
        jobKey: `webhook-progress:${job.id}`,
        jobKeyMode: 'preserve_run_at',
        runAt: new Date(Date.now() + progressEveryMs),
        maxAttempts: taskAttempts,
      },
    );
    return;
  }
  const occurredAt = (event === 'start' ? job.started_at : job.finished_at) ?? new Date().toISOString();
  await record(db, job, event, occurredAt);
}

/** The delivery of the job as it is now, and its queue entry, in one statement (atomic without a transaction). */
export async function record(db: CommonQueryMethods, job: JobRow, event: WebhookEvent, occurredAt: string) {
  const payload = JSON.stringify({ type: eventTypes[event], timestamp: occurredAt, data: toJob(job) });
  await db.query(sql.typeAlias('void')`
    with made as (
      insert into job_webhooks (tenant_id, job_id, event, url, payload, occurred_at)
      values (${job.tenant_id}, ${job.id}, ${event}, ${job.webhook}, ${payload}, ${occurredAt}::timestamptz)
      on conflict (job_id, event, occurred_at) where event <> 'progress' do nothing
      returning id
    )
    select from made, graphile_worker.add_job(
      identifier => ${deliverTask},
      payload => json_build_object('webhook_id', made.id),
      queue_name => ${deliveryLane(job.tenant_id)},
      max_attempts => ${taskAttempts},
      job_key => ${deliveryKey('')} || made.id::text
    )`);
}
