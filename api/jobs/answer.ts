// How a job is answered: with `Location`, and — when the client sends
// `Prefer: wait=N` (RFC 7240) — after the job ends or N seconds pass, capped
// by the endpoint's timeout. The wait is woken by the job's notifications,
// never by polling.
import { sql } from '../../db/pool.ts';
import { isFinished, job as jobSchema, jobColumns, jobPath, jobRow, toJob, type Job } from '../../core/jobs/model.ts';
import type { Reply, RouteContext } from '../route.ts';
import { submitJob, type Submission } from '../../core/jobs/submit.ts';

/** The wait asked for in a Prefer header, in seconds; undefined when none. */
export function preferredWait(prefer: string | undefined): number | undefined {
  const match = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(prefer ?? '');
  return match ? Number(match[1]) : undefined;
}

async function readJob(context: RouteContext, jobId: string): Promise<Job> {
  return toJob(
    await context.db.connect((db) => db.one(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${jobId}`)),
  );
}

// Time kept back from the endpoint's timeout to read the job and answer.
const answerMarginMs = 1000;

export async function answerJob(
  context: RouteContext,
  prefer: string | undefined,
  siteIdentifier: string,
  job: Job,
  mode: 'submitted' | 'read',
): Promise<Reply> {
  const headers: Record<string, string> = { Location: jobPath(siteIdentifier, job.id) };
  let current = job;
  const wait = preferredWait(prefer);
  if (wait !== undefined && !isFinished(current.status)) {
    const ms = Math.max(0, Math.min(wait * 1000, context.deadline - Date.now() - answerMarginMs));
    await context.services.jobEvents.waitUntil(
      job.id,
      async () => {
        current = await readJob(context, job.id);
        return isFinished(current.status);
      },
      ms,
      context.signal,
    );
    headers['Preference-Applied'] = `wait=${Math.round(ms / 1000)}`;
  }
  const status = mode === 'submitted' && !isFinished(current.status) ? 202 : 200;
  return { status, body: current, headers };
}

export const jobResponses = {
  200: { description: 'The job, finished within the wait asked for', schema: jobSchema },
  202: { description: 'The job, accepted and not finished yet; poll Location or watch its events', schema: jobSchema },
};

/** Submits the job (one transaction: row, reservation, queue entry) and answers it as the endpoint that made it. */
export async function submitAndAnswer(
  context: RouteContext,
  prefer: string | undefined,
  identifier: string,
  submission: Submission,
): Promise<Reply> {
  const { job } = await submitJob(context.services.db, context.services.config, context.actor, identifier, submission);
  return answerJob(context, prefer, identifier, job, 'submitted');
}
