// How a job is answered: with `Location`, and — when the client sends
// `Prefer: wait=N` (RFC 7240) — after the job ends or N seconds pass, capped
// by the endpoint's timeout. The wait is woken by the job's notifications,
// never by polling.
import { z } from 'zod';
import { isFinished, jobSchema as jobSchema, jobPath, type Job } from '../../core/jobs/model.ts';
import { rereadJob } from '../../core/jobs/queries.ts';
import { submitJob, type Submission } from '../../core/jobs/submit.ts';
import { withJobFileUrls } from '../../core/media/urls.ts';
import { fileLinks } from '../media/urls.ts';
import { insufficientCreditsResponse, locationHeader, problemResponse, retryAfterHeader } from '../responses.ts';
import type { ContextFor, Reply, ResponseSpec } from '../route.ts';
import type { SiteNeed } from '../../core/tenancy/site-access.ts';

/** The wait asked for in a Prefer header, in seconds; undefined when none. */
export function preferredWait(prefer: string | undefined): number | undefined {
  const match = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(prefer ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The request header that asks for a wait. */
export const preferHeader = z.object({
  prefer: z
    .string()
    .optional()
    .describe('`wait=N` (RFC 7240): answer when the job ends or after N seconds, at most the endpoint’s timeout'),
});

export const jobHeaders = {
  Location: { ...locationHeader, description: 'The job, to poll' },
  'Preference-Applied': { description: 'The wait that was applied, as `wait=N`, when Prefer asked for one' },
};

// Time kept back from the endpoint's timeout to read the job and answer.
const answerMarginMs = 1000;

// The job was read just before the wait (by its submit, or by the route): its
// first re-read, which only catches a change made before the wait listened,
// comes this much later, so that it is not one more statement for the
// database while a worker is starting the job (enqueue → start p50 fell by
// about 1 ms with it: docs/scaling.md). A change of the job wakes it sooner.
const firstRereadMs = 10;

type SiteContext = ContextFor<SiteNeed>;

/** What a wait needs of the request it is part of: the database, the job events, the deadline and the abort signal. */
export type WaitContext = Pick<SiteContext, 'services' | 'db' | 'deadline' | 'signal'>;

/**
 * Holds on to a job until it ends or `seconds` pass, capped by the request's
 * deadline; `seen` hears each state read on the way (a client's progress).
 * Answers the job as last read and the seconds the wait was allowed.
 */
export async function waitForJob(
  context: WaitContext,
  job: Job,
  seconds: number,
  seen?: (job: Job) => void,
): Promise<{ job: Job; allowedSeconds: number }> {
  let current = job;
  const ms = Math.max(0, Math.min(seconds * 1000, context.deadline - Date.now() - answerMarginMs));
  if (!isFinished(current.status)) {
    await context.services.jobEvents.waitUntil(
      job.id,
      async () => {
        current = await rereadJob(context.db, job.id);
        seen?.(current);
        return isFinished(current.status);
      },
      ms,
      context.signal,
      firstRereadMs,
      // Without anyone hearing each state, a running job's progress is no reason to read it again: only a
      // change of its status (or 'unknown', after the connection was lost) can end the wait.
      seen ? undefined : (event) => event.status !== 'running',
    );
  }
  return { job: current, allowedSeconds: Math.round(ms / 1000) };
}
/** What answering a job reads of the route's context: the site named in Location (a job's site, for routes without one in their path). */
type AnswerContext = Pick<SiteContext, 'site' | 'db' | 'deadline' | 'signal' | 'services' | 'baseUrl'>;

export async function answerJob(
  context: AnswerContext,
  prefer: string | undefined,
  job: Job,
  mode: 'submitted' | 'read',
): Promise<Reply> {
  const headers: Record<string, string> = { Location: jobPath(context.site.slug, job.id) };
  let current = job;
  const wait = preferredWait(prefer);
  if (wait !== undefined && !isFinished(current.status)) {
    const waited = await waitForJob(context, job, wait);
    current = waited.job;
    headers['Preference-Applied'] = `wait=${waited.allowedSeconds}`;
  }
  const status = mode === 'submitted' && !isFinished(current.status) ? 202 : 200;
  return { status, body: withJobFileUrls(fileLinks(context), context.site, current), headers };
}

/** What a job-creating endpoint answers, beside the errors every route has; such a route also takes the webhook fields (./webhook-fields.ts). */
export const jobResponses: Record<number, ResponseSpec> = {
  200: { description: 'The job, finished within the wait asked for', schema: jobSchema, headers: jobHeaders },
  202: {
    description:
      'The job, accepted and not finished yet; poll Location, watch its events, or name a `webhook` in the request to be told',
    schema: jobSchema,
    headers: jobHeaders,
  },
  402: insufficientCreditsResponse(
    'Not enough credits for the estimate: `balance` says which balance pays (the user’s own on the site, or the tenant’s pool), ' +
      '`available` and `required` how many, `funding` how that balance gets credits',
  ),
  429: problemResponse(
    'Too many requests with this token, or too many jobs submitted for this tenant in the window (the `per-tenant-jobs` policy)',
    { 'Retry-After': retryAfterHeader },
  ),
};

/** Submits the job (one transaction: row, reservation, queue entry) and answers it as the endpoint that made it. */
export async function submitAndAnswer(
  context: SiteContext,
  prefer: string | undefined,
  submission: Submission,
): Promise<Reply> {
  context.limitJobs(context.site.tenant_id);
  const job = await submitJob(context.db, context.services.config, context.access, {
    ...submission,
    webhook: context.webhook ?? null,
    priority: context.priority,
  });
  return answerJob(context, prefer, job, 'submitted');
}
