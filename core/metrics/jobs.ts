// What the worker tells the process's metrics (./process.ts) when a job is
// settled for good: its outcome, and for a job that started, how long it
// waited and ran. Read from the claimed row and the clock, so no query is added.
// A job canceled while no worker ran it is counted by the process that
// canceled it (core/jobs/cancel.ts): the API's, mostly.
import type { JobRow } from '../jobs/model.ts';
import { processMetrics } from './process.ts';

export type FinalOutcome = 'succeeded' | 'failed' | 'canceled';

export function countFinishedJob(
  job: Pick<JobRow, 'kind' | 'created_at' | 'started_at'>,
  outcome: FinalOutcome,
  code?: string,
): void {
  const metrics = processMetrics();
  const kind = job.kind;
  metrics.jobsFinished.inc({ kind, outcome });
  if (outcome === 'failed') metrics.jobFailures.inc({ kind, code: code ?? 'unknown' });
  if (job.started_at === null) return;
  const started = Date.parse(job.started_at);
  metrics.jobWait.observe({ kind }, Math.max(0, (started - Date.parse(job.created_at)) / 1000));
  metrics.jobRun.observe({ kind }, Math.max(0, (Date.now() - started) / 1000));
}
