// Buying a credit package: a payment row (pending) and a Stripe Checkout
// Session that names it, and the site's payments as their buyers and its
// administrators see them. What happens after the customer pays arrives by
// webhook (./payment-events.ts).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, notFound } from '../errors.ts';
import { requireUser } from '../identity/access.ts';
import { after, toPage, type PageQuery } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';
import { findPackage } from './packages.ts';
import { checkReturnUrls } from './return-urls.ts';
import { callStripe, stripeClient } from './stripe.ts';

export const paymentStatuses = ['pending', 'paid', 'failed', 'expired', 'refunded', 'partially_refunded'] as const;

export const paymentSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    user_id: z.uuid().describe('The buyer; the credits go to their account on the site'),
    package_id: z.uuid().nullable(),
    package_name: z.string(),
    credits: z.number().int(),
    amount: z.number().int().describe('Charged, in the currency’s minor unit'),
    currency: z.string(),
    status: z.enum(paymentStatuses),
    amount_refunded: z.number().int(),
    credits_granted: z.number().int(),
    credits_taken_back: z.number().int().describe('Taken back after a refund'),
    credits_owed: z.number().int().describe('Refunded credits that had been spent already'),
    stripe_session_id: z.string().nullable(),
    paid_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PaymentTransaction' });

export type Payment = z.infer<typeof paymentSchema>;

export const paymentColumns = sql.fragment`
  id, site_id, user_id, package_id, package_name, credits, amount, currency, status, amount_refunded, credits_granted,
  credits_taken_back, credits_owed, stripe_session_id, paid_at, created_at, updated_at`;

export type CheckoutRequest = { package_id: string; success_url: string; cancel_url: string };

/**
 * The payment row first (committed, pending), then the Checkout Session
 * naming it in client_reference_id and metadata, with the row's id as
 * Stripe's idempotency key; a failure at Stripe marks the row failed.
 */
export async function createCheckout(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  input: CheckoutRequest,
) {
  const stripe = stripeClient(config);
  const buyer = requireUser(access.actor);
  const { site } = access;
  checkReturnUrls(config, site.domain ? [site.domain] : [], {
    success_url: input.success_url,
    cancel_url: input.cancel_url,
  });
  const offer = await findPackage(db, input.package_id);
  if (!offer.active) throw notFound('No such credit package.');
  const payment = await db.one(sql.type(z.object({ id: z.uuid() }))`
    insert into payments (tenant_id, site_id, user_id, package_id, package_name, credits, amount, currency)
    values (${site.tenant_id}, ${site.id}, ${buyer.userId}, ${offer.id}, ${offer.name}, ${offer.credits}, ${offer.price}, ${offer.currency})
    returning id`);
  const metadata = { payment_id: payment.id, site_id: site.id, tenant_id: site.tenant_id, user_id: buyer.userId };
  try {
    const session = await callStripe('create the checkout session', () =>
      stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: payment.id,
          metadata,
          payment_intent_data: { metadata },
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: offer.currency,
                unit_amount: offer.price,
                product_data: { name: offer.name, description: `${offer.credits} credits` },
              },
            },
          ],
          success_url: input.success_url,
          cancel_url: input.cancel_url,
        },
        { idempotencyKey: `checkout-${payment.id}` },
      ),
    );
    await db.query(
      sql.typeAlias('void')`update payments set stripe_session_id = ${session.id} where id = ${payment.id}`,
    );
    if (!session.url) throw new Problem(502, 'Stripe answered a checkout session without a URL.');
    return { id: session.id, url: session.url, payment_id: payment.id };
  } catch (error) {
    await db.query(
      sql.typeAlias('void')`update payments set status = 'failed' where id = ${payment.id} and status = 'pending'`,
    );
    throw error;
  }
}

/** Whose payments the caller reads: a tenant admin everyone's, anyone else their own. */
const buyerFilter = (access: SiteAccess) =>
  access.role === 'admin' ? sql.fragment`true` : sql.fragment`user_id = ${requireUser(access.actor).userId}`;

export type PaymentQuery = PageQuery & {
  status?: (typeof paymentStatuses)[number] | undefined;
  user_id?: string | undefined;
};

export async function listPayments(db: CommonQueryMethods, access: SiteAccess, query: PaymentQuery) {
  const rows = await db.any(sql.type(paymentSchema)`
    select ${paymentColumns} from payments
    where site_id = ${access.site.id} and ${buyerFilter(access)} and ${after(query, 'payments')}
      and ${query.status ? sql.fragment`status = ${query.status}` : sql.fragment`true`}
      and ${query.user_id ? sql.fragment`user_id = ${query.user_id}` : sql.fragment`true`}
    order by created_at, id limit ${query.limit + 1}`);
  return toPage(rows, query);
}

export async function findPayment(db: CommonQueryMethods, access: SiteAccess, id: string): Promise<Payment> {
  const row = await db.maybeOne(sql.type(paymentSchema)`
    select ${paymentColumns} from payments where id = ${id} and site_id = ${access.site.id} and ${buyerFilter(access)}`);
  if (!row) throw notFound('No such payment.');
  return row;
}
