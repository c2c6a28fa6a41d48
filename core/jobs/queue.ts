// How jobs reach graphile-worker. Each tenant's jobs are spread over a few
// named queues; graphile-worker runs one job per named queue at a time, so a
// tenant never holds more than JOB_TENANT_CONCURRENCY workers, and a tenant
// that queues thousands of jobs cannot starve another's single job: the next
// free worker skips the busy tenant's locked queues and takes it.
import type { CommonQueryMethods } from '../../db/pool.ts';
import { enqueue } from './enqueue.ts';

export const runTask = 'job__run';

export function queueName(tenantId: string, jobId: string, perTenant: number): string {
  const lane = Number.parseInt(jobId.slice(0, 8), 16) % perTenant;
  return `tenant:${tenantId}:${lane}`;
}

export type Runnable = { id: string; tenant_id: string; max_attempts: number };

/** Puts the job (back) on the queue, in the caller's transaction; `runAt` delays it. */
export async function schedule(
  db: CommonQueryMethods,
  job: Runnable,
  perTenant: number,
  options: { runAt?: Date; maxAttempts?: number } = {},
) {
  return enqueue(
    db,
    runTask,
    { job_id: job.id },
    {
      queueName: queueName(job.tenant_id, job.id, perTenant),
      jobKey: `job:${job.id}`,
      maxAttempts: options.maxAttempts ?? job.max_attempts,
      ...(options.runAt ? { runAt: options.runAt } : {}),
    },
  );
}
