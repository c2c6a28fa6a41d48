// Submitting a job, in one transaction: the job row, the credits it may cost
// reserved on the payer's account, and the queue entry. A 402 (or any failure)
// leaves none of the three behind.
import { notFound } from '../errors.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorId, type Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { applyEntry, poolAccount, userAccount } from '../credits/accounts.ts';
import { priceOf } from '../credits/prices.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { jobColumns, jobRow, toJob, type Job, type JobRow } from './model.ts';
import { schedule } from './queue.ts';
import type { JobWebhook } from '../webhooks/request.ts';

export type Submission = {
  kind: string;
  input: Record<string, unknown>;
  /** The most units (seconds, images, ...) the job is expected to use: what is reserved. */
  estimatedUnits: number;
  /** Where its events go, if the request named a webhook (core/webhooks/request.ts). */
  webhook?: JobWebhook | null;
};

/** Users pay from their credits on the site; service accounts from the tenant's pool. */
async function payer(db: Parameters<typeof userAccount>[0], actor: Actor, site: Site): Promise<string> {
  return actor.kind === 'user' ? userAccount(db, site, actor.userId) : poolAccount(db, site.tenant_id);
}

/** A job made by a submit, or as part of another change (an upload's processing). */
export type NewJob = {
  site: Site;
  actor: Actor;
  kind: string;
  input: Record<string, unknown>;
  accountId: string | null;
  cost: number;
  webhook?: JobWebhook | null;
};

/** The job row, its queue entry and its reservation, in the caller's transaction. */
export async function insertJob(tx: CommonQueryMethods, config: Config, job: NewJob): Promise<JobRow> {
  const { site, actor } = job;
  // Only for a tenant still active: a block (core/fraud/block-tenant.ts) that committed after the
  // caller's access was checked is seen here, in the statement that would make the job.
  const row = await tx.maybeOne(sql.type(jobRow)`
    insert into jobs (tenant_id, site_id, user_id, actor_id, kind, input, max_attempts, account_id, credits_reserved,
                      webhook, webhook_events)
    select ${site.tenant_id}, ${site.id}, ${actor.kind === 'user' ? actor.userId : null}, ${actorId(actor)}, ${job.kind},
           ${sql.jsonb(job.input as never)}, ${config.jobs.maxAttempts}, ${job.accountId}, ${job.cost},
           ${job.webhook?.url ?? null}, ${sql.array(job.webhook?.events ?? [], 'text')}
    where exists (select 1 from tenants where id = ${site.tenant_id} and status = 'active')
    returning ${jobColumns}`);
  if (!row) throw notFound('No such site.');
  await schedule(tx, row, config.jobs.tenantConcurrency);
  // Last, so the payer's account row is locked only for the end of the transaction:
  // concurrent submits by one payer queue on that lock, and each holds it briefly.
  if (job.cost > 0 && job.accountId) {
    await applyEntry(tx, {
      accountId: job.accountId,
      tenantId: site.tenant_id,
      siteId: site.id,
      userId: actor.kind === 'user' ? actor.userId : null,
      kind: 'reservation',
      amount: 0,
      reservedChange: job.cost,
      jobId: row.id,
      operation: job.kind,
      actorId: actorId(actor),
      reason: `Reserved for ${job.kind} job`,
    });
  }
  return row;
}

/** Jobs are submitted by callers the route let in: service accounts with jobs:write and the kind's own scope. */
export async function submitJob(
  db: CommonQueryMethods,
  config: Config,
  { actor, site }: SiteAccess,
  submission: Submission,
): Promise<Job> {
  return db.transaction(async (tx) => {
    const { cost } = await priceOf(tx, site.id, submission.kind, submission.estimatedUnits);
    const accountId = await payer(tx, actor, site);
    const row = await insertJob(tx, config, {
      site,
      actor,
      kind: submission.kind,
      input: submission.input,
      accountId,
      cost,
      webhook: submission.webhook ?? null,
    });
    return toJob(row);
  });
}
