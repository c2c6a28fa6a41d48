// A tenant's subscription as its members see it and its administrators change
// it: the plan in force, moving to a paid plan (Stripe Checkout, subscription
// mode) or between paid plans (a prorated change of the Stripe subscription),
// cancelling, and Stripe's customer portal. Stripe is asked first; then, in a
// transaction under the tenant's lock, the subscription is synced to what
// Stripe says now, exactly as a webhook event would (./subscription-events.ts),
// so the two may come in either order, or at once.
import type Stripe from 'stripe';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, conflict, notFound, problemType } from '../errors.ts';
import { timestamp } from '../timestamp.ts';
import { calendarPeriod } from './monthly-credits.ts';
import { effectivePlan, findPlan, planSchema } from './plans.ts';
import { checkReturnUrls } from './return-urls.ts';
import { usedBytes } from './storage.ts';
import { callStripe, idOf, stripeClient } from './stripe.ts';
import type { Subscriber } from './subscriber.ts';
import {
  creditsGrantedSince,
  invoicePaid,
  paidSubscriptionId,
  planChangeTopUp,
  readSubscription,
  subscriptionStatuses,
  syncSubscription,
} from './subscription-events.ts';

export const subscriptionStatusSchema = z
  .object({
    tenant_id: z.uuid(),
    plan: planSchema,
    status: z
      .enum(subscriptionStatuses)
      .describe(
        'The last Stripe subscription’s (canceled or incomplete: the free plan applies); active for a tenant that never had one',
      ),
    paid: z.boolean().describe('A Stripe subscription is behind the plan'),
    current_period_start: timestamp.describe('The free plan’s period is the calendar month (UTC)'),
    current_period_end: timestamp,
    cancel_at_period_end: z.boolean(),
    canceled_at: timestamp.nullable(),
    credits_granted_this_period: z.number().int().describe('The plan’s credits that reached the tenant’s pool'),
    storage: z.object({
      used_bytes: z.number().int(),
      quota_bytes: z.number().int().nullable().describe('null: no quota'),
    }),
  })
  .meta({ id: 'SubscriptionStatus' });

export type SubscriptionStatusView = z.infer<typeof subscriptionStatusSchema>;

export async function currentSubscription(db: CommonQueryMethods, tenantId: string): Promise<SubscriptionStatusView> {
  const [row, plan, used] = [
    await readSubscription(db, tenantId),
    await effectivePlan(db, tenantId),
    await usedBytes(db, tenantId),
  ];
  const month = calendarPeriod();
  const paid = paidSubscriptionId(row) !== null;
  const start = (paid && row?.current_period_start) || month.start;
  const end = (paid && row?.current_period_end) || month.end;
  return {
    tenant_id: tenantId,
    plan,
    status: row?.status ?? 'active',
    paid,
    current_period_start: start,
    current_period_end: end,
    cancel_at_period_end: paid && row ? row.cancel_at_period_end : false,
    canceled_at: row?.canceled_at ?? null,
    credits_granted_this_period: await creditsGrantedSince(db, tenantId, start),
    storage: { used_bytes: used, quota_bytes: plan.storage_quota_bytes },
  };
}

/** The domains of the tenant's sites: where Checkout and the portal may send its customers back. */
async function tenantDomains(db: CommonQueryMethods, tenantId: string): Promise<string[]> {
  const rows = await db.anyFirst(sql.type(z.object({ domain: z.string() }))`
    select domain from sites where tenant_id = ${tenantId} and domain is not null`);
  return [...rows];
}

const retrieveSubscription = (stripe: Stripe, id: string) =>
  callStripe('read the subscription', () => stripe.subscriptions.retrieve(id));

export type UpgradeRequest = { plan_id: string; success_url?: string | undefined; cancel_url?: string | undefined };

export type UpgradeResult =
  | { outcome: 'checkout'; checkout: { id: string; url: string } }
  | { outcome: 'changed' | 'resumed' | 'unchanged'; subscription: SubscriptionStatusView };

/**
 * To a paid plan: a Checkout Session when the tenant has no paid
 * subscription, else a change of its Stripe subscription's price, the
 * proration invoiced and paid at once (Stripe refuses the change if the
 * payment fails), with the pool topped up to the new plan's monthly credits
 * for this period. The current plan again resumes a subscription set to
 * cancel.
 */
export async function upgrade(
  db: CommonQueryMethods,
  config: Config,
  subscriber: Subscriber,
  input: UpgradeRequest,
): Promise<UpgradeResult> {
  const stripe = stripeClient(config);
  const plan = await findPlan(db, input.plan_id);
  if (!plan.active) throw notFound('No such plan.');
  if (plan.is_free || !plan.stripe_price_id)
    throw new Problem(422, 'The free plan is not bought: cancel the subscription to return to it.', {
      errors: [{ path: 'body.plan_id', message: 'the free plan' }],
    });
  const row = await readSubscription(db, subscriber.tenantId);
  if (row?.stripe_subscription_id && row.status === 'incomplete')
    throw conflict(
      'A subscription is waiting for its first payment: complete it, or let Stripe expire it (about a day).',
    );
  if (row?.status === 'past_due')
    throw conflict('The subscription has an unpaid invoice: settle it in the billing portal before changing plans.');
  const subscriptionId = paidSubscriptionId(row);
  if (!row || !subscriptionId) return startCheckout(db, config, stripe, subscriber, plan, input);
  const current = await retrieveSubscription(stripe, subscriptionId);
  const item = current.items.data[0];
  if (!item) throw new Problem(502, 'Stripe answered a subscription without items.');
  const samePlan = row.plan_id === plan.id;
  if (samePlan && !current.cancel_at_period_end)
    return { outcome: 'unchanged', subscription: await currentSubscription(db, subscriber.tenantId) };
  const priceId = plan.stripe_price_id;
  const updated = await callStripe('change the subscription', () =>
    stripe.subscriptions.update(current.id, {
      cancel_at_period_end: false,
      metadata: { tenant_id: subscriber.tenantId, plan_id: plan.id },
      ...(samePlan
        ? {}
        : {
            items: [{ id: item.id, price: priceId }],
            proration_behavior: 'always_invoice',
            payment_behavior: 'error_if_incomplete',
          }),
    }),
  );
  await db.transaction(async (tx) => {
    await syncSubscription(tx, stripe, subscriber.tenantId, updated.id);
    const period = updated.items.data[0];
    if (!samePlan && period)
      await planChangeTopUp(tx, subscriber.tenantId, plan, updated.id, {
        start: new Date(period.current_period_start * 1000).toISOString(),
        end: new Date(period.current_period_end * 1000).toISOString(),
      });
  });
  return {
    outcome: samePlan ? 'resumed' : 'changed',
    subscription: await currentSubscription(db, subscriber.tenantId),
  };
}

async function startCheckout(
  db: CommonQueryMethods,
  config: Config,
  stripe: Stripe,
  subscriber: Subscriber,
  plan: z.infer<typeof planSchema>,
  input: UpgradeRequest,
): Promise<UpgradeResult> {
  const missing = (['success_url', 'cancel_url'] as const).filter((field) => !input[field]);
  if (missing.length > 0)
    throw new Problem(422, 'A new subscription goes through Checkout: send success_url and cancel_url.', {
      errors: missing.map((field) => ({ path: `body.${field}`, message: 'required to start a subscription' })),
    });
  checkReturnUrls(config, await tenantDomains(db, subscriber.tenantId), {
    success_url: input.success_url,
    cancel_url: input.cancel_url,
  });
  const row = await readSubscription(db, subscriber.tenantId);
  const metadata = { tenant_id: subscriber.tenantId, plan_id: plan.id };
  const session = await callStripe('create the checkout session', () =>
    stripe.checkout.sessions.create({
      mode: 'subscription',
      client_reference_id: subscriber.tenantId,
      metadata,
      subscription_data: { metadata },
      line_items: [{ price: plan.stripe_price_id!, quantity: 1 }],
      ...(row?.stripe_customer_id ? { customer: row.stripe_customer_id } : {}),
      success_url: input.success_url!,
      cancel_url: input.cancel_url!,
    }),
  );
  if (!session.url) throw new Problem(502, 'Stripe answered a checkout session without a URL.');
  return { outcome: 'checkout', checkout: { id: session.id, url: session.url } };
}

/**
 * After the customer returns from Checkout: Stripe's word on the session, its
 * subscription and first invoice, applied as their webhook events would be
 * (whichever comes first, the credits are granted once).
 */
export async function verifyUpgrade(
  db: CommonQueryMethods,
  config: Config,
  subscriber: Subscriber,
  sessionId: string,
): Promise<SubscriptionStatusView> {
  const stripe = stripeClient(config);
  const session = await callStripe('read the checkout session', () =>
    stripe.checkout.sessions
      .retrieve(sessionId)
      .catch((error: Error & { statusCode?: number }) => (error.statusCode === 404 ? null : Promise.reject(error))),
  );
  if (!session || session.mode !== 'subscription' || session.client_reference_id !== subscriber.tenantId)
    throw notFound('No such checkout session for this tenant.');
  const subscriptionId = idOf(session.subscription);
  if (session.status !== 'complete' || !subscriptionId)
    throw new Problem(409, 'The checkout is not complete yet.', {
      type: problemType('checkout-incomplete'),
      title: 'Checkout not complete',
      extensions: { checkout_status: session.status },
    });
  const invoiceId = idOf(session.invoice);
  const invoice = invoiceId ? await callStripe('read the invoice', () => stripe.invoices.retrieve(invoiceId)) : null;
  await db.transaction(async (tx) => {
    await syncSubscription(tx, stripe, subscriber.tenantId, subscriptionId);
    if (invoice?.status === 'paid') await invoicePaid(tx, invoice);
  });
  return currentSubscription(db, subscriber.tenantId);
}

async function requirePaidSubscription(db: CommonQueryMethods, tenantId: string): Promise<string> {
  const id = paidSubscriptionId(await readSubscription(db, tenantId));
  if (!id) throw conflict('The tenant has no paid subscription: it is on the free plan.');
  return id;
}

/** At the end of the period (default), or now: the tenant is then on the free plan. */
export async function cancel(
  db: CommonQueryMethods,
  config: Config,
  subscriber: Subscriber,
  immediately: boolean,
): Promise<SubscriptionStatusView> {
  const stripe = stripeClient(config);
  const id = await requirePaidSubscription(db, subscriber.tenantId);
  await callStripe('cancel the subscription', () =>
    immediately ? stripe.subscriptions.cancel(id) : stripe.subscriptions.update(id, { cancel_at_period_end: true }),
  );
  await db.transaction((tx) => syncSubscription(tx, stripe, subscriber.tenantId, id));
  return currentSubscription(db, subscriber.tenantId);
}

/** A Stripe Customer Portal session: a short-lived URL that signs the customer in, so it is answered and never logged. */
export async function portal(
  db: CommonQueryMethods,
  config: Config,
  subscriber: Subscriber,
  returnUrl: string,
): Promise<{ url: string }> {
  const stripe = stripeClient(config);
  const row = await readSubscription(db, subscriber.tenantId);
  if (!row?.stripe_customer_id) throw conflict('The tenant has no billing account at Stripe yet: subscribe first.');
  checkReturnUrls(config, await tenantDomains(db, subscriber.tenantId), { return_url: returnUrl });
  const session = await callStripe('open the billing portal', () =>
    stripe.billingPortal.sessions.create({ customer: row.stripe_customer_id!, return_url: returnUrl }),
  );
  return { url: session.url };
}
