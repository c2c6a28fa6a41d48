// A tenant's subscription follows Stripe's: whenever Stripe reports a change
// (a webhook event, or an answer to one of our calls), the tenant's row is
// brought to what Stripe says *now* — the subscription fetched again under a
// per-tenant lock — rather than to what the event carried. Events may come in
// any order, several in the same second, concurrently; syncing to the latest
// state makes their order irrelevant (as Stripe advises). A paid plan's
// monthly credits come with paid invoices, within one budget per period:
// whatever reached the pool for the period (the invoice's grant, a top-up
// after an upgrade) counts against the plan's monthly credits.
import type Stripe from 'stripe';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, problemType } from '../errors.ts';
import { timestamp } from '../timestamp.ts';
import { grantPlanCredits } from './monthly-credits.ts';
import { findPlan, liveStatuses, planOfPrice, type Plan } from './plans.ts';
import { callStripe, idOf } from './stripe.ts';

export type Outcome = 'accepted' | 'duplicate' | 'ignored' | 'stale';

export const subscriptionStatuses = ['trialing', 'active', 'past_due', 'canceled', 'incomplete'] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];

/**
 * Stripe's statuses onto ours. An expired first payment ended the
 * subscription; an unpaid or paused one is not paying, so, like an incomplete
 * one, it leaves the tenant on the free plan until Stripe says otherwise.
 */
export function statusOf(stripeStatus: string): SubscriptionStatus {
  switch (stripeStatus) {
    case 'trialing':
    case 'active':
    case 'past_due':
    case 'canceled':
      return stripeStatus;
    case 'incomplete_expired':
      return 'canceled';
    default:
      return 'incomplete';
  }
}

const isUuid = (value: unknown): value is string => z.uuid().safeParse(value).success;

const rowSchema = z.object({
  plan_id: z.uuid(),
  status: z.enum(subscriptionStatuses),
  stripe_customer_id: z.string().nullable(),
  stripe_subscription_id: z.string().nullable(),
  current_period_start: timestamp.nullable(),
  current_period_end: timestamp.nullable(),
  cancel_at_period_end: z.boolean(),
  canceled_at: timestamp.nullable(),
});

export type SubscriptionRow = z.infer<typeof rowSchema>;

/** The Stripe subscription id of a row that is a live paid subscription; null on the free plan. */
export const paidSubscriptionId = (row: SubscriptionRow | null): string | null =>
  row && (liveStatuses as readonly string[]).includes(row.status) ? row.stripe_subscription_id : null;

/** Everything that changes a tenant's subscription or its plan credits runs one at a time per tenant. */
export async function lockSubscription(db: CommonQueryMethods, tenantId: string): Promise<void> {
  await db.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext(${`subscription:${tenantId}`}))`);
}

/** The tenant's subscription row, if it ever had one. */
export const readSubscription = (db: CommonQueryMethods, tenantId: string) =>
  db.maybeOne(sql.type(rowSchema)`
    select plan_id, status, stripe_customer_id, stripe_subscription_id, current_period_start, current_period_end,
           cancel_at_period_end, canceled_at
    from subscriptions where tenant_id = ${tenantId}`);

const tenantExists = (db: CommonQueryMethods, id: unknown): Promise<boolean> =>
  isUuid(id) ? db.exists(sql.type(z.object({}))`select 1 from tenants where id = ${id}`) : Promise.resolve(false);

/** The tenant a Stripe object is for: the metadata we set, else what we recorded of the subscription or customer. */
async function tenantOf(
  db: CommonQueryMethods,
  metadata: Stripe.Metadata | null | undefined,
  subscriptionId: string | null,
  customerId: string | null,
): Promise<string | null> {
  const named = metadata?.['tenant_id'];
  if (await tenantExists(db, named)) return named as string;
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

const iso = (seconds: number | null | undefined) => (seconds ? new Date(seconds * 1000).toISOString() : null);

/**
 * The tenant's row brought to the subscription as Stripe has it now. Inside
 * the caller's transaction, under the tenant's lock, so that of two syncs
 * the later one also writes last. An ended subscription's news does not
 * replace another, live one of the same tenant.
 */
export async function syncSubscription(
  db: CommonQueryMethods,
  stripe: Stripe,
  tenantId: string,
  subscriptionId: string,
): Promise<Outcome> {
  await lockSubscription(db, tenantId);
  const subscription = await callStripe('read the subscription', () => stripe.subscriptions.retrieve(subscriptionId));
  const row = await readSubscription(db, tenantId);
  const status = statusOf(subscription.status);
  if (row?.stripe_subscription_id && row.stripe_subscription_id !== subscription.id) {
    if (row.status !== 'canceled' && status === 'canceled') return 'stale';
  }
  const item = subscription.items?.data?.[0];
  const plan = (await planOf(db, idOf(item?.price), subscription.metadata))?.id ?? row?.plan_id;
  if (!plan) throw unknownPlan(idOf(item?.price));
  const customer = idOf(subscription.customer);
  await db.query(sql.typeAlias('void')`
    insert into subscriptions (tenant_id, plan_id, status, stripe_customer_id, stripe_subscription_id,
      current_period_start, current_period_end, cancel_at_period_end, canceled_at, stripe_event_at)
    values (${tenantId}, ${plan}, ${status}, ${customer}, ${subscription.id}, ${iso(item?.current_period_start)},
      ${iso(item?.current_period_end)}, ${subscription.cancel_at_period_end ?? false}, ${iso(subscription.canceled_at)}, now())
    on conflict (tenant_id) do update set
      plan_id = excluded.plan_id, status = excluded.status,
      stripe_customer_id = coalesce(excluded.stripe_customer_id, subscriptions.stripe_customer_id),
      stripe_subscription_id = excluded.stripe_subscription_id,
      current_period_start = coalesce(excluded.current_period_start, subscriptions.current_period_start),
      current_period_end = coalesce(excluded.current_period_end, subscriptions.current_period_end),
      cancel_at_period_end = excluded.cancel_at_period_end, canceled_at = excluded.canceled_at,
      stripe_event_at = now()`);
  return 'accepted';
}

/**
 * A price no plan has: answered with a non-2xx so Stripe delivers the event
 * again later, when a global admin has given the plan its price.
 */
const unknownPlan = (priceId: string | null) =>
  new Problem(409, `No plan has the Stripe price ${priceId ?? '(none)'}; deliver the event again later.`, {
    type: problemType('event-out-of-order'),
    title: 'Event names an unknown plan',
    headers: { 'Retry-After': '3600' },
  });

/** customer.subscription.created, .updated and .deleted, and invoice.payment_failed: the subscription synced. */
export async function subscriptionChanged(
  db: CommonQueryMethods,
  stripe: Stripe,
  subscriptionId: string | null,
  metadata: Stripe.Metadata | null | undefined,
  customerId: string | null,
): Promise<Outcome> {
  if (!subscriptionId) return 'ignored';
  const tenantId = await tenantOf(db, metadata, subscriptionId, customerId);
  return tenantId ? syncSubscription(db, stripe, tenantId, subscriptionId) : 'ignored';
}

/** checkout.session.completed in subscription mode: the tenant named by client_reference_id takes the subscription. */
export async function subscriptionCheckoutCompleted(
  db: CommonQueryMethods,
  stripe: Stripe,
  session: Stripe.Checkout.Session,
): Promise<Outcome> {
  const subscriptionId = idOf(session.subscription);
  if (!subscriptionId || !(await tenantExists(db, session.client_reference_id))) return 'ignored';
  return syncSubscription(db, stripe, session.client_reference_id!, subscriptionId);
}

/** The line of the invoice that bills the plan's coming period (not a proration of the last one). */
function planLine(invoice: Stripe.Invoice) {
  const lines = invoice.lines?.data ?? [];
  return lines.find((line) => !line.parent?.subscription_item_details?.proration) ?? lines[0];
}

/** Plan credits that reached the tenant's pool since a period began: the budget a paid period's grants share. */
export async function creditsGrantedSince(
  db: CommonQueryMethods,
  tenantId: string,
  since: string,
  options: { paidOnly?: boolean } = {},
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ credits: z.number() }))`
    select coalesce(sum(e.amount), 0)::int8 as credits
    from credit_entries e join credit_accounts a on a.id = e.account_id
    where a.tenant_id = ${tenantId} and a.site_id is null and e.kind = 'subscription' and e.created_at >= ${since}
      and ${options.paidOnly ? sql.fragment`e.once_key not like 'plan:%'` : sql.fragment`true`}`);
}

/**
 * Up to the plan's monthly credits for the period, less what the period has
 * had already, once per key; expiring at the period's end.
 */
async function grantWithinBudget(
  db: CommonQueryMethods,
  tenantId: string,
  plan: Plan,
  period: { start: string; end: string },
  onceKey: string,
  reason: string,
): Promise<Outcome> {
  await lockSubscription(db, tenantId);
  if (await db.exists(sql.type(z.object({}))`select 1 from credit_entries where once_key = ${onceKey}`))
    return 'duplicate';
  const due = plan.monthly_credits - (await creditsGrantedSince(db, tenantId, period.start, { paidOnly: true }));
  if (due <= 0) return 'duplicate';
  const outcome = await grantPlanCredits(db, { tenantId, credits: due, onceKey, expiresAt: period.end, reason });
  return outcome === 'granted' ? 'accepted' : 'duplicate';
}

/**
 * invoice.paid: a subscription's creation or renewal brings the plan's
 * monthly credits for the period it pays for; a plan change invoiced at once
 * (an upgrade) tops the period up to the new plan's credits. Other invoices
 * grant nothing.
 */
export async function invoicePaid(db: CommonQueryMethods, invoice: Stripe.Invoice): Promise<Outcome> {
  const reason = invoice.billing_reason ?? '';
  const details = invoice.parent?.subscription_details;
  const subscriptionId = idOf(details?.subscription);
  if (!subscriptionId || !['subscription_create', 'subscription_cycle', 'subscription_update'].includes(reason))
    return 'ignored';
  const tenantId = await tenantOf(db, details?.metadata, subscriptionId, idOf(invoice.customer));
  if (!tenantId) return 'ignored';
  if (reason === 'subscription_update') {
    // Prorations only: the plan is the one our metadata names, the period the subscription's.
    const plan = await planOf(db, null, details?.metadata);
    const row = await readSubscription(db, tenantId);
    if (!plan || !row?.current_period_start || !row.current_period_end) return 'ignored';
    return planChangeTopUp(db, tenantId, plan, subscriptionId, {
      start: row.current_period_start,
      end: row.current_period_end,
    });
  }
  const line = planLine(invoice);
  const priceId = idOf(line?.pricing?.price_details?.price);
  const plan = await planOf(db, priceId, details?.metadata);
  if (!plan) throw unknownPlan(priceId);
  const start = iso(line?.period?.start) ?? new Date().toISOString();
  const end = iso(line?.period?.end) ?? new Date(Date.now() + 31 * 86_400_000).toISOString();
  return grantWithinBudget(db, tenantId, plan, { start, end }, `invoice:${invoice.id}`, `${plan.name} plan credits`);
}

/**
 * After a plan change paid at once: the period topped up to the new plan's
 * monthly credits (never beyond; a downgrade takes nothing back), once per
 * subscription, period and plan — whether the upgrade's answer or the
 * invoice's event comes first.
 */
export function planChangeTopUp(
  db: CommonQueryMethods,
  tenantId: string,
  plan: Plan,
  subscriptionId: string,
  period: { start: string; end: string },
): Promise<Outcome> {
  // One key whichever way the period's start was written (Stripe's seconds, or our row's timestamp).
  const start = new Date(period.start).toISOString();
  return grantWithinBudget(
    db,
    tenantId,
    plan,
    { start, end: period.end },
    `plan-change:${subscriptionId}:${start}:${plan.id}`,
    `${plan.name} plan credits for the rest of the period`,
  );
}
