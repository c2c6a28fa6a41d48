// What Stripe tells us about a payment, applied inside the webhook's
// transaction (beside the event id that makes a repeat a no-op). Events may
// arrive in any order: a payment moves forward only (pending → paid →
// partially refunded → refunded; pending → failed or expired), its credits
// are granted once (a once-key on the ledger), and a refund is applied from
// the charge's cumulative refunded amount, so a late or repeated refund
// event settles to the same state.
import type Stripe from 'stripe';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { applyEntry, readBalance, userAccount } from '../credits/accounts.ts';
import { Problem, problemType } from '../errors.ts';
import { timestamp } from '../timestamp.ts';
import { idOf } from './stripe.ts';

const paymentRow = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  site_id: z.uuid(),
  user_id: z.uuid(),
  credits: z.number(),
  amount: z.number(),
  status: z.string(),
  amount_refunded: z.number(),
  credits_granted: z.number(),
  credits_taken_back: z.number(),
  credits_owed: z.number(),
  paid_at: timestamp.nullable(),
});
type PaymentRow = z.infer<typeof paymentRow>;

const lockPayment = (db: CommonQueryMethods, where: ReturnType<typeof sql.fragment>) =>
  db.maybeOne(sql.type(paymentRow)`
    select id, tenant_id, site_id, user_id, credits, amount, status, amount_refunded, credits_granted, credits_taken_back,
           credits_owed, paid_at
    from payments where ${where} for update`);

/** A payment Stripe names that we do not know yet: answer non-2xx so Stripe delivers it again later. */
const notYetKnown = (what: string) =>
  new Problem(409, `${what} is not known yet; deliver the event again later.`, {
    type: problemType('event-out-of-order'),
    title: 'Event arrived before what it refers to',
    headers: { 'Retry-After': '60' },
  });

/** The payment a Checkout Session names (client_reference_id, set when we created it). */
async function paymentOfSession(db: CommonQueryMethods, session: Stripe.Checkout.Session): Promise<PaymentRow | null> {
  const reference = session.client_reference_id ?? session.metadata?.['payment_id'];
  if (!reference || !z.uuid().safeParse(reference).success) return null;
  return lockPayment(db, sql.fragment`id = ${reference}`);
}

/** checkout.session.completed (paid at once) and checkout.session.async_payment_succeeded: the credits, once. */
export async function sessionPaid(db: CommonQueryMethods, session: Stripe.Checkout.Session): Promise<string> {
  const payment = await paymentOfSession(db, session);
  if (!payment) return 'ignored';
  const intent = idOf(session.payment_intent);
  const paidNow =
    (session.payment_status === 'paid' || session.payment_status === 'no_payment_required') &&
    payment.credits_granted === 0;
  // One statement records what the session says and, when it pays, the payment as paid; the
  // buyer's account is locked last (by applyEntry), so it is held only until the commit.
  await db.query(sql.typeAlias('void')`
    update payments set stripe_payment_intent_id = coalesce(stripe_payment_intent_id, ${intent}),
                        stripe_session_id = coalesce(stripe_session_id, ${session.id})
                        ${paidNow ? sql.fragment`, status = 'paid', paid_at = coalesce(paid_at, now()), credits_granted = ${payment.credits}` : sql.fragment``}
    where id = ${payment.id}`);
  if (session.payment_status !== 'paid' && session.payment_status !== 'no_payment_required') return 'pending';
  if (!paidNow) return 'duplicate';
  const account = await userAccount(db, { id: payment.site_id, tenant_id: payment.tenant_id }, payment.user_id);
  await grantPurchase(db, payment, account);
  // A refund that arrived before the payment settled is applied now (nothing to do otherwise).
  await settleRefund(db, { ...payment, credits_granted: payment.credits, status: 'paid' });
  return 'accepted';
}

/** The package's credits to the buyer's account on the site, once (the once-key backs the payment row's check). */
function grantPurchase(db: CommonQueryMethods, payment: PaymentRow, account: string) {
  return applyEntry(db, {
    accountId: account,
    tenantId: payment.tenant_id,
    siteId: payment.site_id,
    userId: payment.user_id,
    kind: 'purchase',
    amount: payment.credits,
    paymentId: payment.id,
    reason: 'credit package',
    onceKey: `payment:${payment.id}`,
  });
}

/** checkout.session.async_payment_failed and checkout.session.expired: a pending payment ends without credits. */
export async function sessionClosed(
  db: CommonQueryMethods,
  session: Stripe.Checkout.Session,
  status: 'failed' | 'expired',
): Promise<string> {
  const payment = await paymentOfSession(db, session);
  if (!payment) return 'ignored';
  if (payment.status !== 'pending') return 'ignored';
  await db.query(sql.typeAlias('void')`update payments set status = ${status} where id = ${payment.id}`);
  return 'accepted';
}

/** charge.refunded: the charge's cumulative refunded amount is what the payment records. */
export async function chargeRefunded(db: CommonQueryMethods, charge: Stripe.Charge): Promise<string> {
  const intent = idOf(charge.payment_intent);
  const reference = charge.metadata?.['payment_id'];
  const payment = await lockPayment(
    db,
    reference && z.uuid().safeParse(reference).success
      ? sql.fragment`id = ${reference}`
      : sql.fragment`stripe_payment_intent_id = ${intent ?? ''}`,
  );
  if (!payment) {
    // A charge of ours always carries the payment's id (payment_intent_data.metadata); one without is someone else's.
    if (reference) throw notYetKnown(`The payment ${reference}`);
    return 'ignored';
  }
  const refunded = Math.min(payment.amount, Math.max(payment.amount_refunded, charge.amount_refunded));
  if (refunded === payment.amount_refunded) return 'duplicate';
  const updated = { ...payment, amount_refunded: refunded };
  await db.query(sql.typeAlias('void')`update payments set amount_refunded = ${refunded} where id = ${payment.id}`);
  await settleRefund(db, updated);
  return 'accepted';
}

/**
 * Takes back the refunded share of a paid payment's credits as far as the
 * buyer still holds them (not reserved), and records the rest as owed.
 */
async function settleRefund(db: CommonQueryMethods, payment: PaymentRow): Promise<void> {
  if (payment.amount_refunded === 0 || payment.credits_granted === 0) return;
  const due = Math.floor((payment.credits_granted * payment.amount_refunded) / payment.amount);
  const open = due - payment.credits_taken_back - payment.credits_owed;
  const status = payment.amount_refunded >= payment.amount ? 'refunded' : 'partially_refunded';
  let taken = 0;
  if (open > 0) {
    const account = await userAccount(db, { id: payment.site_id, tenant_id: payment.tenant_id }, payment.user_id);
    taken = Math.min(open, (await readBalance(db, account)).available);
    if (taken > 0)
      await applyEntry(db, {
        accountId: account,
        tenantId: payment.tenant_id,
        siteId: payment.site_id,
        userId: payment.user_id,
        kind: 'adjustment',
        amount: -taken,
        paymentId: payment.id,
        reason: 'payment refunded',
      });
  }
  await db.query(sql.typeAlias('void')`
    update payments set status = ${status},
      credits_taken_back = credits_taken_back + ${taken}, credits_owed = credits_owed + ${Math.max(0, open) - taken}
    where id = ${payment.id}`);
}
