// Jobs of a site, as its users see them: editors, admins and service
// accounts see every job of the site; authors see the jobs they submitted.
// Anything else is "not found".
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, notFound } from '../errors.ts';
import { pageQuery } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { isFinished, jobColumns, jobRow, jobStatuses, toJob, type Job } from './model.ts';
import { cancel } from './cancel.ts';
import { lockJob } from './settle.ts';
import { jobSort, orderedJobPage } from './list-order.ts';

export const jobFilters = z.object({
  status: z.enum(jobStatuses).optional(),
  kind: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/)
    .max(50)
    .optional(),
});

export const jobListQuery = pageQuery.extend({ ...jobFilters.shape, sort: jobSort });
export type JobListQuery = z.output<typeof jobListQuery>;

/** The jobs of the site the caller may see, as a WHERE fragment. */
function visibleJobs({ actor, site, role }: SiteAccess) {
  const own =
    role === 'author' && actor.kind === 'user' ? sql.fragment`and jobs.user_id = ${actor.userId}` : sql.fragment``;
  return sql.fragment`jobs.site_id = ${site.id} ${own}`;
}

export function filters(query: z.infer<typeof jobFilters>) {
  return sql.fragment`${query.status ? sql.fragment`and jobs.status = ${query.status}` : sql.fragment``}
    ${query.kind ? sql.fragment`and jobs.kind = ${query.kind}` : sql.fragment``}`;
}

/** Whether the caller may see this job: the same rule as visibleJobs, for one row. */
function canSee({ actor, site, role }: SiteAccess, row: { site_id: string; user_id: string | null }): boolean {
  return row.site_id === site.id && !(role === 'author' && actor.kind === 'user' && row.user_id !== actor.userId);
}

export async function getJob(db: CommonQueryMethods, access: SiteAccess, jobId: string): Promise<Job> {
  // By primary key, the rule checked here: with the site in the WHERE, PostgreSQL may walk the site's
  // (site_id, created_at, id) index instead, reading every job of the site to find one.
  const row = await db.maybeOne(sql.type(jobRow)`select ${jobColumns} from jobs where jobs.id = ${jobId}`);
  if (!row || !canSee(access, row)) throw notFound('No such job.');
  return toJob(row);
}

export async function listJobs(db: CommonQueryMethods, access: SiteAccess, query: JobListQuery) {
  const where = visibleJobs(access);
  const matching = sql.fragment`select ${jobColumns} from jobs where ${where} ${filters(query)}`;
  const page = await orderedJobPage(db, jobRow, matching, query);
  return { ...page, items: page.items.map(toJob) };
}

export const alreadyFinished = (status: string) =>
  new Problem(
    409,
    `The job has already ${status === 'canceled' ? 'been canceled' : status}; only queued, running or waiting jobs can be canceled.`,
  );

export async function cancelJob(db: CommonQueryMethods, access: SiteAccess, jobId: string): Promise<Job> {
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, jobId);
    if (!job || !canSee(access, job)) throw notFound('No such job.');
    if (isFinished(job.status)) throw alreadyFinished(job.status);
    return toJob(await cancel(tx, job, 'Canceled on request'));
  });
}

/** A job the caller was already shown, read again after a change was heard. */
export async function rereadJob(db: CommonQueryMethods, jobId: string): Promise<Job> {
  return toJob(await db.one(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${jobId}`));
}
