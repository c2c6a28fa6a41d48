// A plan's monthly credits reach the tenant's pool once per period: a paid
// plan's with each paid invoice (./subscription-events.ts), the free plan's
// from a scheduled job (worker/tasks/subscriptions__allocate.ts) or a global
// admin's request, once per tenant per calendar month (UTC). Every grant is
// named by a once-key on the ledger, so a repeat, a retry or a concurrent run
// grants nothing more. Plan credits expire at the end of the period they are
// for: what the pool has not spent or handed out lapses then.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { applyOnce, poolAccount } from '../credits/accounts.ts';
import { notFound } from '../errors.ts';
import { liveStatuses } from './plans.ts';

export type PlanGrant = {
  tenantId: string;
  credits: number;
  onceKey: string;
  expiresAt: string;
  reason: string;
  actorId?: string | null;
};

/** The grant, unless its once-key was used already: 'granted', or 'duplicate'. */
export async function grantPlanCredits(db: CommonQueryMethods, grant: PlanGrant): Promise<'granted' | 'duplicate'> {
  if (grant.credits <= 0) return 'duplicate';
  const granted = await applyOnce(db, {
    accountId: await poolAccount(db, grant.tenantId),
    tenantId: grant.tenantId,
    kind: 'subscription',
    amount: grant.credits,
    reason: grant.reason,
    actorId: grant.actorId ?? null,
    expiresAt: grant.expiresAt,
    onceKey: grant.onceKey,
  });
  return granted ? 'granted' : 'duplicate';
}

/** The calendar month (UTC) containing `at`: the free plan's period. */
export function calendarPeriod(at = new Date()) {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start: start.toISOString(), end: end.toISOString() };
}

export const allocationSchema = z
  .object({
    period: z.string().describe('The calendar month (UTC), YYYY-MM'),
    tenants: z.number().int().describe('Tenants on the free plan considered'),
    granted: z.number().int().describe('Tenants granted their credits now'),
    already_granted: z.number().int().describe('Tenants that had this period’s credits already'),
    credits: z.number().int().describe('Credits granted now, in total'),
    skipped: z
      .array(z.object({ tenant_id: z.uuid(), reason: z.string() }))
      .describe('A named tenant that was not allocated, and why'),
  })
  .meta({ id: 'MonthlyCreditAllocation' });

export type Allocation = z.infer<typeof allocationSchema>;

const candidate = z.object({
  id: z.uuid(),
  status: z.string(),
  live: z.boolean(),
  credits: z.number(),
  granted: z.boolean(),
});

/**
 * The free plan's credits for this period to every active tenant without a
 * live subscription (or to the one named). A paid tenant named here is
 * skipped: its credits come with its invoices.
 */
export async function allocateFreeCredits(
  db: CommonQueryMethods,
  options: { tenantId?: string | undefined; actorId?: string | null; at?: Date } = {},
): Promise<Allocation> {
  const period = calendarPeriod(options.at);
  const keyOf = (tenantId: string) => `plan:${tenantId}:${period.key}`;
  const rows = await db.any(sql.type(candidate)`
    select t.id, t.status,
           exists (select 1 from subscriptions s
                   where s.tenant_id = t.id and s.status = any(${sql.array([...liveStatuses], 'text')})) as live,
           (select monthly_credits from plans where is_free) as credits,
           exists (select 1 from credit_entries e where e.once_key = 'plan:' || t.id || ${`:${period.key}`}) as granted
    from tenants t
    where ${options.tenantId ? sql.fragment`t.id = ${options.tenantId}` : sql.fragment`t.status = 'active'`}
    order by t.id`);
  if (options.tenantId && rows.length === 0) throw notFound('No such tenant.');
  const result: Allocation = {
    period: period.key,
    tenants: 0,
    granted: 0,
    already_granted: 0,
    credits: 0,
    skipped: [],
  };
  for (const row of rows) {
    const skip = row.live
      ? 'on a paid plan: its credits come with its invoices'
      : row.status !== 'active'
        ? `tenant is ${row.status}`
        : null;
    if (skip) {
      // Across all tenants, paid ones are simply not this allocation's business.
      if (options.tenantId) result.skipped.push({ tenant_id: row.id, reason: skip });
      continue;
    }
    result.tenants += 1;
    const outcome = row.granted
      ? 'duplicate'
      : await grantPlanCredits(db, {
          tenantId: row.id,
          credits: row.credits,
          onceKey: keyOf(row.id),
          expiresAt: period.end,
          reason: `free plan credits for ${period.key}`,
          actorId: options.actorId ?? null,
        });
    if (outcome === 'granted') {
      result.granted += 1;
      result.credits += row.credits;
    } else result.already_granted += 1;
  }
  return result;
}
