// Submitting a job, in one statement: the job row, the credits it may cost
// reserved on the payer's account, and the queue entry. A 402 (or any failure)
// leaves none of the three behind.
import { randomUUID } from 'node:crypto';
import { notFound } from '../errors.ts';
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorId, type Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import {
  creditMoves,
  creditsShort,
  insufficientCredits,
  poolPayer,
  userPayer,
  type Payer,
} from '../credits/accounts.ts';
import { payingBalanceOf } from '../credits/funding.ts';
import { costIn, effectivePricesQuery, priceOf } from '../credits/prices.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import type { PlannedCall } from '../providers/plan.ts';
import { jobColumns, jobRow, toJob, type Job, type JobRow } from './model.ts';
import { pricePlan, type Estimate } from './pricing.ts';
import { inTestMode, testPlan } from './test-mode.ts';
import { pausedStage } from './pauses.ts';
import { runEntry } from './queue.ts';
import { allowedPriority } from './request-priority.ts';
import type { JobWebhook } from '../webhooks/request.ts';

export type Submission = {
  kind: string;
  input: Record<string, unknown>;
  /** The most units (seconds, images, ...) the job is expected to use: what is reserved. */
  estimatedUnits: number;
  /** Where its events go, if the request named a webhook (core/webhooks/request.ts). */
  webhook?: JobWebhook | null;
  /**
   * A generating job: the providers it will try (core/providers/plan.ts), priced
   * by their models and kept in its input as `providers`, and the units it is
   * expected to use in each unit they bill.
   */
  plan?: { calls: PlannedCall[]; estimate: Estimate };
  /** The most it may reserve, below what its plan would (an agent run held to its credit budget). */
  maxCost?: number | undefined;
  /** Its own priority, if the request asked for one (./request-priority.ts: who may ask for what). */
  priority?: number | undefined;
};

/** Users pay from their credits on the site; service accounts from the tenant's pool (core/credits/funding.ts). */
const payerOf = (actor: Actor, site: Site): Payer =>
  actor.kind === 'user' ? userPayer(site, actor.userId) : poolPayer(site.tenant_id);

/**
 * What a job costs and who pays: known to the caller (a job made as part of
 * another change, which prices it itself), or read in the job's own statement
 * from the kind's price on the site and the payer's account.
 */
export type Pricing =
  | { accountId: string | null; cost: number; unitPrice?: number | null }
  | { units: number; payer: Payer }
  | { cost: number; unitPrice: number; payer: Payer };

/** A job made by a submit, or as part of another change (an upload's processing). */
export type NewJob = {
  site: Site;
  actor: Actor;
  kind: string;
  input: Record<string, unknown>;
  pricing: Pricing;
  webhook?: JobWebhook | null;
  /** Whether it runs in test mode (core/jobs/test-mode.ts); read from the tenant and the actor when not said. */
  testMode?: boolean;
  /** Its own priority, already allowed (./request-priority.ts); 0 when not said. */
  priority?: number;
};

type Fragment = ReturnType<typeof sql.fragment>;

/** The price and payer as the statement's first CTEs, or as values; and the row the job's insert reads them from. */
function pricedBy(pricing: Pricing, siteId: string, kind: string) {
  if ('payer' in pricing && 'cost' in pricing) {
    return {
      ctes: sql.fragment`payer as (select id from credit_accounts where ${pricing.payer.existing}),`,
      from: sql.fragment``,
      accountId: sql.fragment`(select id from payer)`,
      cost: sql.fragment`${pricing.cost}::bigint`,
      unitPrice: sql.fragment`${pricing.unitPrice}::numeric`,
      reserves: pricing.cost > 0,
    };
  }
  if ('payer' in pricing) {
    return {
      ctes: sql.fragment`
        price as (select price from (${effectivePricesQuery(siteId, kind)}) as prices),
        payer as (select id from credit_accounts where ${pricing.payer.existing}),`,
      from: sql.fragment`from price`,
      accountId: sql.fragment`(select id from payer)`,
      cost: costIn(sql.fragment`price.price`, pricing.units),
      unitPrice: sql.fragment`price.price`,
      reserves: true,
    };
  }
  return {
    ctes: sql.fragment``,
    from: sql.fragment``,
    accountId: sql.fragment`${pricing.accountId}::uuid`,
    cost: sql.fragment`${pricing.cost}::bigint`,
    unitPrice: sql.fragment`${pricing.unitPrice ?? null}::numeric`,
    reserves: pricing.cost > 0 && pricing.accountId !== null,
  };
}

/**
 * The job row, its queue entry and its reservation, in one statement (so in
 * the caller's transaction when there is one), with what it costs read there
 * too. One statement because the reservation holds the payer's account row
 * until the commit: with no round trip to the client in between, many submits
 * by one payer follow each other closely instead of each waiting for the last
 * one's client. The account row is taken last, after the job row and its queue
 * entry are written; too few credits undo the whole statement (credits_short).
 */
export async function insertJob(db: CommonQueryMethods, config: Config, job: NewJob): Promise<JobRow> {
  const { site, actor } = job;
  const id = randomUUID();
  const priority = job.priority ?? 0;
  const testMode = job.testMode ?? (await inTestMode(db, site.tenant_id, actor));
  // A test job is free, and its plan (if it has one) is the local stand-in's.
  const input = testMode && 'providers' in job.input ? { ...job.input, providers: testPlan } : job.input;
  const priced = pricedBy(testMode ? { accountId: null, cost: 0, unitPrice: 0 } : job.pricing, site.id, job.kind);
  // Only for a tenant still active: a block (core/fraud/block-tenant.ts) that committed after the
  // caller's access was checked is seen here, in the statement that would make the job.
  const active = sql.fragment`exists (select 1 from tenants where id = ${site.tenant_id} and status = 'active')`;
  const reserved: Fragment = sql.fragment`(select credits_reserved from job)`;
  const reservation = priced.reserves
    ? sql.fragment`, ${creditMoves(
        {
          accountId: sql.fragment`(select account_id from job)`,
          tenantId: site.tenant_id,
          siteId: site.id,
          userId: actor.kind === 'user' ? actor.userId : null,
          jobId: id,
          operation: job.kind,
          actorId: actorId(actor),
        },
        [{ kind: 'reservation', amount: 0, reservedChange: reserved, reason: `Reserved for ${job.kind} job` }],
        { when: sql.fragment`${reserved} > 0`, guarded: true },
      )}`
    : sql.fragment``;
  const short = priced.reserves
    ? sql.fragment`, case when jobs.credits_reserved > 0 and not exists (select from account)
        then credits_short(coalesce((select balance - reserved from credit_accounts where id = jobs.account_id), 0),
                           jobs.credits_reserved)
      end as short`
    : sql.fragment``;
  try {
    const row = await db.maybeOne(
      prepared(sql.type(jobRow)`
      with ${priced.ctes}
      job as (
        insert into jobs (id, tenant_id, site_id, user_id, actor_id, kind, input, max_attempts, account_id, credits_reserved,
                          unit_price, webhook, webhook_events, test_mode, stage, priority)
        select ${id}, ${site.tenant_id}, ${site.id}, ${actor.kind === 'user' ? actor.userId : null}, ${actorId(actor)}, ${job.kind},
               ${sql.jsonb(input as never)}, ${config.jobs.maxAttempts}, ${priced.accountId}, ${priced.cost},
               ${priced.unitPrice}, ${job.webhook?.url ?? null}, ${sql.array(job.webhook?.events ?? [], 'text')}, ${testMode},
               ${pausedStage(job.kind, site.tenant_id)}, ${priority}
        ${priced.from}
        where ${active}
        returning *
      ), queued as (
        select ${runEntry({ id, tenant_id: site.tenant_id, kind: job.kind, max_attempts: config.jobs.maxAttempts, priority }, { first: true })} from job
      ) ${reservation}
      select ${jobColumns} ${short} from job as jobs, queued`),
    );
    if (row) return row;
  } catch (error) {
    const shortOf = creditsShort(error);
    if (shortOf) {
      const balance = 'payer' in job.pricing ? job.pricing.payer.balance : payingBalanceOf(actor);
      throw insufficientCredits(balance, shortOf.available, shortOf.required);
    }
    throw error;
  }
  // Nothing made: the kind has no price on the site (a 422), or the tenant is no longer active.
  if ('units' in job.pricing && !testMode) await priceOf(db, site.id, job.kind, job.pricing.units);
  throw notFound('No such site.');
}

/**
 * Jobs are submitted by callers the route let in: service accounts with
 * jobs:write and the kind's own scope; an earlier turn than the default
 * takes more (./request-priority.ts).
 */
export async function submitJob(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  submission: Submission,
): Promise<Job> {
  const { actor, site } = access;
  const priority = allowedPriority(access, submission.priority);
  // Priced and paid in the job's own statement: a payer with no account yet has no credits (a 402 if it costs any).
  const payer = payerOf(actor, site);
  const { kind, plan, estimatedUnits } = submission;
  const testMode = await inTestMode(db, site.tenant_id, actor);
  const priced = plan && !testMode && (await pricePlan(db, site.id, kind, plan.calls, plan.estimate, estimatedUnits));
  const row = await insertJob(db, config, {
    site,
    actor,
    kind,
    input: priced ? { ...submission.input, providers: priced.calls } : submission.input,
    pricing: priced
      ? { cost: Math.min(priced.cost, submission.maxCost ?? Infinity), unitPrice: priced.calls[0]!.unit_price, payer }
      : { units: estimatedUnits, payer },
    webhook: submission.webhook ?? null,
    testMode,
    priority,
  });
  return toJob(row);
}
