// Submitting a job, in one statement: the job row, the credits it may cost
// reserved on the payer's account, and the queue entry. A 402 (or any failure)
// leaves none of the three behind.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { notFound } from '../errors.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorId, type Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import {
  accountOf,
  creditMoves,
  creditsShort,
  insufficientCredits,
  poolPayer,
  userPayer,
  type Payer,
} from '../credits/accounts.ts';
import { costAt, effectivePricesQuery, noPrice } from '../credits/prices.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { jobColumns, jobRow, toJob, type Job, type JobRow } from './model.ts';
import { runEntry } from './queue.ts';
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
const payerOf = (actor: Actor, site: Site): Payer =>
  actor.kind === 'user' ? userPayer(site, actor.userId) : poolPayer(site.tenant_id);

const quote = z.object({ price: z.number(), account_id: z.string().nullable() });

/** A job made by a submit, or as part of another change (an upload's processing). */
export type NewJob = {
  site: Site;
  actor: Actor;
  kind: string;
  input: Record<string, unknown>;
  accountId: string | null;
  cost: number;
  /** Credits per unit the cost was reckoned at: what the job's units are charged at when it settles. */
  unitPrice?: number | null;
  webhook?: JobWebhook | null;
};

/**
 * The job row, its queue entry and its reservation, in one statement (so in
 * the caller's transaction when there is one). One statement because the
 * reservation holds the payer's account row until the commit: with no round
 * trip to the client in between, many submits by one payer follow each other
 * closely instead of each waiting for the last one's client.
 */
export async function insertJob(db: CommonQueryMethods, config: Config, job: NewJob): Promise<JobRow> {
  const { site, actor } = job;
  const id = randomUUID();
  // Only for a tenant still active: a block (core/fraud/block-tenant.ts) that committed after the
  // caller's access was checked is seen here, in the statement that would make the job.
  const active = sql.fragment`exists (select 1 from tenants where id = ${site.tenant_id} and status = 'active')`;
  const reservation =
    job.cost > 0 && job.accountId
      ? creditMoves(
          {
            accountId: job.accountId,
            tenantId: site.tenant_id,
            siteId: site.id,
            userId: actor.kind === 'user' ? actor.userId : null,
            jobId: id,
            operation: job.kind,
            actorId: actorId(actor),
          },
          [{ kind: 'reservation', amount: 0, reservedChange: job.cost, reason: `Reserved for ${job.kind} job` }],
          { when: sql.fragment`exists (select from job)`, guarded: true },
        )
      : null;
  // The account row is taken last: read in the select list, after the job row and its queue entry are
  // written, and held from there to the commit. Too few credits undo the whole statement (credits_short).
  const short = reservation
    ? sql.fragment`, case when not exists (select from account)
        then credits_short((select balance - reserved from credit_accounts where id = ${job.accountId}), ${job.cost})
      end as short`
    : sql.fragment``;
  try {
    const row = await db.maybeOne(sql.type(jobRow)`
      with job as (
        insert into jobs (id, tenant_id, site_id, user_id, actor_id, kind, input, max_attempts, account_id, credits_reserved,
                          unit_price, webhook, webhook_events)
        select ${id}, ${site.tenant_id}, ${site.id}, ${actor.kind === 'user' ? actor.userId : null}, ${actorId(actor)}, ${job.kind},
               ${sql.jsonb(job.input as never)}, ${config.jobs.maxAttempts}, ${job.accountId}, ${job.cost},
               ${job.unitPrice ?? null}, ${job.webhook?.url ?? null}, ${sql.array(job.webhook?.events ?? [], 'text')}
        where ${active}
        returning *
      ), queued as (
        select ${runEntry({ id, tenant_id: site.tenant_id, max_attempts: config.jobs.maxAttempts })} from job
      ) ${reservation ? sql.fragment`, ${reservation}` : sql.fragment``}
      select ${jobColumns} ${short} from job as jobs, queued`);
    if (!row) throw notFound('No such site.');
    return row;
  } catch (error) {
    const shortOf = creditsShort(error);
    if (shortOf) throw insufficientCredits(shortOf.available, shortOf.required);
    throw error;
  }
}

/** Jobs are submitted by callers the route let in: service accounts with jobs:write and the kind's own scope. */
export async function submitJob(
  db: CommonQueryMethods,
  config: Config,
  { actor, site }: SiteAccess,
  submission: Submission,
): Promise<Job> {
  // One read (the kind's price on the site, the payer's account); then the job is made in one statement,
  // which needs no transaction of its own.
  const payer = payerOf(actor, site);
  const found = await db.maybeOne(sql.type(quote)`
    select prices.price, (select id from credit_accounts where ${payer.existing}) as account_id
    from (${effectivePricesQuery(site.id, submission.kind)}) as prices`);
  if (!found) throw noPrice(submission.kind);
  const row = await insertJob(db, config, {
    site,
    actor,
    kind: submission.kind,
    input: submission.input,
    accountId: found.account_id ?? (await accountOf(db, payer)),
    cost: costAt(found.price, submission.estimatedUnits),
    unitPrice: found.price,
    webhook: submission.webhook ?? null,
  });
  return toJob(row);
}
