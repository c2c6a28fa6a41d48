// What Stripe tells us about subscriptions, applied inside the webhook's
// transaction (and by the endpoints that just asked Stripe). Events come in
// any order: a subscription's state is applied only when it is at least as
// new as the last one applied (the event's `created` against the row's
// stripe_event_at), and a canceled subscription stays canceled — a later
// subscription of the same tenant replaces it, an older one's news is
// dropped. Credits come with paid invoices, once per invoice.
import type Stripe from 'stripe';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { timestamp } from '../timestamp.ts';
import { grantPlanCredits } from './monthly-credits.ts';
import { findPlan, planOfPrice, type Plan } from './plans.ts';

export type Outcome = 'accepted' | 'duplicate' | 'ignored' | 'stale';

export const subscriptionStatuses = ['trialing', 'active', 'past_due', 'canceled', 'incomplete'] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];

/** Stripe's statuses onto ours: an unpaid or paused subscription is as good as past due; an expired checkout ended it. */
export function statusOf(stripeStatus: string): SubscriptionStatus {
  switch (stripeStatus) {
    case 'trialing':
    case 'active':
    case 'past_due':
    case 'canceled':
    case 'incomplete':
      return stripeStatus;
    case 'incomplete_expired':
      return 'canceled';
    default:
      return 'past_due';
  }
}

const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === 'string' ? value : (value?.id ?? null);

const isUuid = (value: unknown): value is string => z.uuid().safeParse(value).success;

const rowSchema = z.object({
  tenant_id: z.uuid(),
  plan_id: z.uuid(),
  status: z.enum(subscriptionStatuses),
  stripe_subscription_id: z.string().nullable(),
  stripe_event_at: timestamp.nullable(),
});

const lockRow = (db: CommonQueryMethods, tenantId: string) =>
  db.maybeOne(sql.type(rowSchema)`
    select tenant_id, plan_id, status, stripe_subscription_id, stripe_event_at
    from subscriptions where tenant_id = ${tenantId} for update`);

/** The tenant a Stripe object is for: the metadata we set, else what we recorded of the subscription or customer. */
async function tenantOf(
  db: CommonQueryMethods,
  metadata: Stripe.Metadata | null | undefined,
  subscriptionId: string | null,
  customerId: string | null,
): Promise<string | null> {
  const named = metadata?.['tenant_id'];
  if (isUuid(named) && (await db.exists(sql.type(z.object({}))`select 1 from tenants where id = ${named}`)))
    return named;
  return db.maybeOneFirst(sql.type(z.object({ tenant_id: z.uuid() }))`
    select tenant_id from subscriptions
    where stripe_subscription_id = ${subscriptionId ?? ''} or stripe_customer_id = ${customerId ?? ''}
    order by (stripe_subscription_id = ${subscriptionId ?? ''}) desc limit 1`);
}

/** The plan a price is, else the plan our metadata named. */
async function planOf(db: CommonQueryMethods, priceId: string | null, metadata: Stripe.Metadata | null | undefined) {
  const byPrice = priceId ? await planOfPrice(db, priceId) : null;
  if (byPrice) return byPrice;
  const named = metadata?.['plan_id'];
  return isUuid(named) ? findPlan(db, named).catch(() => null) : null;
}

const seconds = (value: number | null | undefined) => (value ? new Date(value * 1000).toISOString() : null);

/**
 * A subscription's state as of `at` (unix seconds: the event's creation, or
 * when we fetched it from Stripe).
 */
export async function applySubscription(
  db: CommonQueryMethods,
  subscription: Stripe.Subscription,
  at: number,
): Promise<Outcome> {
  const customer = idOf(subscription.customer);
  const tenantId = await tenantOf(db, subscription.metadata, subscription.id, customer);
  if (!tenantId) return 'ignored';
  const item = subscription.items?.data?.[0];
  const plan = await planOf(db, idOf(item?.price), subscription.metadata);
  const row = await lockRow(db, tenantId);
  const status = statusOf(subscription.status);
  const when = new Date(at * 1000).toISOString();
  const newer = !row?.stripe_event_at || Date.parse(row.stripe_event_at) <= at * 1000;
  if (row && row.stripe_subscription_id === subscription.id) {
    // A canceled subscription never comes back; an older state than the one applied changes nothing.
    if (row.status === 'canceled' || !newer) return 'stale';
  } else if (row && row.status !== 'canceled' && (status === 'canceled' || !newer)) {
    // Another, live subscription is the tenant's now: news of an ended or older one is not.
    return 'stale';
  }
  const planId = plan?.id ?? row?.plan_id;
  if (!planId) return 'ignored';
  const period = {
    start: seconds(item?.current_period_start),
    end: seconds(item?.current_period_end),
  };
  await db.query(sql.typeAlias('void')`
    insert into subscriptions (tenant_id, plan_id, status, stripe_customer_id, stripe_subscription_id,
      current_period_start, current_period_end, cancel_at_period_end, canceled_at, stripe_event_at)
    values (${tenantId}, ${planId}, ${status}, ${customer}, ${subscription.id}, ${period.start}, ${period.end},
      ${subscription.cancel_at_period_end ?? false}, ${seconds(subscription.canceled_at)}, ${when})
    on conflict (tenant_id) do update set
      plan_id = excluded.plan_id, status = excluded.status,
      stripe_customer_id = coalesce(excluded.stripe_customer_id, subscriptions.stripe_customer_id),
      stripe_subscription_id = excluded.stripe_subscription_id,
      current_period_start = coalesce(excluded.current_period_start, subscriptions.current_period_start),
      current_period_end = coalesce(excluded.current_period_end, subscriptions.current_period_end),
      cancel_at_period_end = excluded.cancel_at_period_end, canceled_at = excluded.canceled_at,
      stripe_event_at = excluded.stripe_event_at`);
  return 'accepted';
}

/** customer.subscription.deleted: the subscription ended, whatever the object's status says. */
export function subscriptionDeleted(db: CommonQueryMethods, subscription: Stripe.Subscription, at: number) {
  return applySubscription(db, { ...subscription, status: 'canceled' }, at);
}

/**
 * checkout.session.completed in subscription mode: the customer and the
 * subscription become the tenant's (client_reference_id). The subscription's
 * own events bring its status; until then it is incomplete.
 */
export async function subscriptionCheckoutCompleted(
  db: CommonQueryMethods,
  session: Stripe.Checkout.Session,
): Promise<Outcome> {
  const tenantId = session.client_reference_id;
  const subscriptionId = idOf(session.subscription);
  if (!isUuid(tenantId) || !subscriptionId) return 'ignored';
  const plan = await planOf(db, null, session.metadata);
  const row = await lockRow(db, tenantId);
  if (row?.stripe_subscription_id === subscriptionId) {
    await db.query(sql.typeAlias('void')`
      update subscriptions set stripe_customer_id = coalesce(stripe_customer_id, ${idOf(session.customer)})
      where tenant_id = ${tenantId}`);
    return 'duplicate';
  }
  if (row && row.status !== 'canceled' && row.stripe_subscription_id) return 'stale';
  if (!plan || !(await db.exists(sql.type(z.object({}))`select 1 from tenants where id = ${tenantId}`)))
    return 'ignored';
  await db.query(sql.typeAlias('void')`
    insert into subscriptions (tenant_id, plan_id, status, stripe_customer_id, stripe_subscription_id, cancel_at_period_end)
    values (${tenantId}, ${plan.id}, 'incomplete', ${idOf(session.customer)}, ${subscriptionId}, false)
    on conflict (tenant_id) do update set plan_id = excluded.plan_id, status = 'incomplete',
      stripe_customer_id = excluded.stripe_customer_id, stripe_subscription_id = excluded.stripe_subscription_id,
      cancel_at_period_end = false, canceled_at = null, current_period_start = null, current_period_end = null,
      stripe_event_at = null`);
  return 'accepted';
}

const grantingReasons = new Set(['subscription_create', 'subscription_cycle']);

function invoiceDetails(invoice: Stripe.Invoice) {
  const details = invoice.parent?.subscription_details;
  const line = invoice.lines?.data?.[0];
  return {
    subscriptionId: idOf(details?.subscription),
    metadata: details?.metadata,
    priceId: idOf(line?.pricing?.price_details?.price),
    periodEnd: line?.period?.end ?? null,
  };
}

/**
 * invoice.paid for a subscription's creation or renewal: the plan's monthly
 * credits to the tenant's pool, once per invoice, expiring at the end of the
 * period the invoice pays for.
 */
export async function invoicePaid(db: CommonQueryMethods, invoice: Stripe.Invoice): Promise<Outcome> {
  if (!grantingReasons.has(invoice.billing_reason ?? '')) return 'ignored';
  const details = invoiceDetails(invoice);
  if (!details.subscriptionId) return 'ignored';
  const tenantId = await tenantOf(db, details.metadata, details.subscriptionId, idOf(invoice.customer));
  const plan = await planOf(db, details.priceId, details.metadata);
  if (!tenantId || !plan) return 'ignored';
  const periodEnd = seconds(details.periodEnd) ?? new Date(Date.now() + 31 * 86_400_000).toISOString();
  const outcome = await grantPlanCredits(db, {
    tenantId,
    credits: plan.monthly_credits,
    onceKey: `invoice:${invoice.id}`,
    expiresAt: periodEnd,
    reason: `${plan.name} plan credits (invoice ${invoice.id})`,
  });
  return outcome === 'granted' ? 'accepted' : 'duplicate';
}

/** invoice.payment_failed: a live subscription is past due until Stripe says otherwise. */
export async function invoicePaymentFailed(
  db: CommonQueryMethods,
  invoice: Stripe.Invoice,
  at: number,
): Promise<Outcome> {
  const { subscriptionId } = invoiceDetails(invoice);
  if (!subscriptionId) return 'ignored';
  const updated = await db.maybeOneFirst(sql.type(z.object({ tenant_id: z.uuid() }))`
    update subscriptions set status = 'past_due', stripe_event_at = ${new Date(at * 1000).toISOString()}
    where stripe_subscription_id = ${subscriptionId} and status = any(${sql.array(['trialing', 'active'], 'text')})
      and (stripe_event_at is null or stripe_event_at <= ${new Date(at * 1000).toISOString()})
    returning tenant_id`);
  return updated ? 'accepted' : 'stale';
}

/** Credits of the plan's period already granted to the tenant's pool (invoices, top-ups, the free plan's). */
export async function creditsGrantedSince(db: CommonQueryMethods, tenantId: string, since: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ credits: z.number() }))`
    select coalesce(sum(e.amount), 0)::int8 as credits
    from credit_entries e join credit_accounts a on a.id = e.account_id
    where a.tenant_id = ${tenantId} and a.site_id is null and e.kind = 'subscription' and e.created_at >= ${since}`);
}

/**
 * After a plan change mid-period: the pool is topped up to the new plan's
 * monthly credits for this period (never beyond; a downgrade takes nothing
 * back), once per subscription, period and plan.
 */
export async function topUpAfterPlanChange(
  db: CommonQueryMethods,
  tenantId: string,
  plan: Plan,
  subscriptionId: string,
  period: { start: string; end: string },
): Promise<number> {
  const due = plan.monthly_credits - (await creditsGrantedSince(db, tenantId, period.start));
  if (due <= 0) return 0;
  const outcome = await grantPlanCredits(db, {
    tenantId,
    credits: due,
    onceKey: `plan-change:${subscriptionId}:${period.start}:${plan.id}`,
    expiresAt: period.end,
    reason: `${plan.name} plan credits for the rest of the period`,
  });
  return outcome === 'granted' ? due : 0;
}
