// Jobs no run will ever finish, failed so their credits come back:
// - queued or running (or waiting with a delivered result) with no queue entry
//   left that can run — its attempts were spent by crashes, say;
// - waiting for a provider's webhook longer than JOB_WAITING_HOURS.
// A minute's grace keeps jobs whose transaction is just committing out of it.
// Checked on the workers' heartbeat (worker/liveness.ts), beside the
// deliveries nothing will send (core/webhooks/stranded.ts).
import { sql, type DatabasePool } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { countFinishedJob } from '../metrics/jobs.ts';
import { jobColumns, jobRow, type JobRow } from './model.ts';
import { entryCanRun } from './queue.ts';
import { fail } from './settle.ts';

export async function failStrandedJobs(db: DatabasePool, config: Config, logger: Logger): Promise<number> {
  const failed = await db.transaction(async (tx) => {
    const failed: { job: JobRow; code: string }[] = [];
    const stranded = await tx.any(sql.type(jobRow)`
      select ${jobColumns} from jobs
      where jobs.updated_at < now() - interval '1 minute'
        and (
          ((jobs.status in ('queued', 'running') or (jobs.status = 'waiting' and jobs.provider_result is not null))
            and not ${entryCanRun(sql.fragment`'job:' || jobs.id`)})
          or (jobs.status = 'waiting' and jobs.provider_result is null
              and jobs.waiting_at < now() - ${config.jobs.waitingHours} * interval '1 hour')
        )
      order by jobs.updated_at
      limit 100
      for update of jobs skip locked`);
    for (const job of stranded) {
      const waiting = job.status === 'waiting' && job.provider_result === null;
      const error = waiting
        ? { code: 'provider_timeout', message: `The provider sent no result within ${config.jobs.waitingHours} hours.` }
        : {
            code: 'attempts_exhausted',
            message: 'The job could not be run to its end (its worker stopped each time).',
          };
      await fail(tx, job, error, { attempt: 'lost' });
      logger.warn({ job_id: job.id, status: job.status }, 'failed a job that nothing would finish');
      failed.push({ job, code: error.code });
    }
    return failed;
  });
  // Counted once committed, as the worker counts the jobs it settles (core/metrics/jobs.ts).
  for (const { job, code } of failed) countFinishedJob(job, 'failed', code);
  return failed.length;
}
