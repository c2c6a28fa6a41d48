// Stripe's webhook: the signature is checked by the SDK on the raw bytes
// before anything reads them; then, in one transaction, the event id is
// recorded and its effect applied, so a repeat (or 20 concurrent copies)
// answers 200 and changes nothing. Unknown event types are acknowledged.
import Stripe from 'stripe';
import { z } from 'zod';
import { sql, type DatabasePool, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, problemType } from '../errors.ts';
import { chargeRefunded, sessionClosed, sessionPaid } from './payment-events.ts';
import { idOf, notConfigured, stripeClient } from './stripe.ts';
import { invoicePaid, subscriptionChanged, subscriptionCheckoutCompleted } from './subscription-events.ts';

export const stripeReceiptSchema = z
  .object({
    received: z.literal(true),
    event_id: z.string(),
    type: z.string(),
    outcome: z
      .enum(['accepted', 'pending', 'duplicate', 'stale', 'ignored'])
      .describe(
        'duplicate: this event (or what it reports) was applied before; stale: a newer state was applied already; ' +
          'ignored: not ours or not handled',
      ),
  })
  .meta({ id: 'StripeWebhookReceipt' });

export type StripeReceipt = z.infer<typeof stripeReceiptSchema>;

/** An event's effect; `stripe()` is the API client, for handlers that fetch what the event is about. */
type EventHandler = (db: CommonQueryMethods, event: Stripe.Event, stripe: () => Stripe) => Promise<string>;

const session = (event: Stripe.Event) => event.data.object as Stripe.Checkout.Session;
const invoice = (event: Stripe.Event) => event.data.object as Stripe.Invoice;

/** A subscription event: the tenant's subscription synced to what Stripe says now. */
const subscriptionEvent: EventHandler = (db, event, stripe) => {
  const subscription = event.data.object as Stripe.Subscription;
  return subscriptionChanged(db, stripe(), subscription.id, subscription.metadata, idOf(subscription.customer));
};

/** Event types whose effect is applied here; any other is acknowledged and ignored. */
const handlers = new Map<string, EventHandler>([
  [
    'checkout.session.completed',
    (db, event, stripe) =>
      session(event).mode === 'subscription'
        ? subscriptionCheckoutCompleted(db, stripe(), session(event))
        : sessionPaid(db, session(event)),
  ],
  ['checkout.session.async_payment_succeeded', (db, event) => sessionPaid(db, session(event))],
  ['checkout.session.async_payment_failed', (db, event) => sessionClosed(db, session(event), 'failed')],
  ['checkout.session.expired', (db, event) => sessionClosed(db, session(event), 'expired')],
  ['charge.refunded', (db, event) => chargeRefunded(db, event.data.object as Stripe.Charge)],
  ['customer.subscription.created', subscriptionEvent],
  ['customer.subscription.updated', subscriptionEvent],
  ['customer.subscription.deleted', subscriptionEvent],
  ['invoice.paid', (db, event) => invoicePaid(db, invoice(event))],
  [
    'invoice.payment_failed',
    (db, event, stripe) => {
      const details = invoice(event).parent?.subscription_details;
      return subscriptionChanged(
        db,
        stripe(),
        idOf(details?.subscription),
        details?.metadata,
        idOf(invoice(event).customer),
      );
    },
  ],
]);

const badSignature = (detail: string) =>
  new Problem(400, detail, { type: problemType('invalid-signature'), title: 'Invalid webhook signature' });

export function verifyStripeEvent(
  config: Config,
  raw: Buffer | undefined,
  signature: string | undefined,
): Stripe.Event {
  const secret = config.stripe.webhookSecret;
  if (!secret) throw notConfigured('STRIPE_WEBHOOK_SECRET');
  if (!signature) throw badSignature('Send the Stripe-Signature header.');
  if (!raw || raw.length === 0) throw badSignature('The body is empty.');
  try {
    return Stripe.webhooks.constructEvent(raw, signature, secret);
  } catch (error) {
    // The SDK's message says what was wrong (no matching signature, timestamp outside the tolerance).
    throw badSignature(error instanceof Error ? error.message : 'The signature does not verify.');
  }
}

export async function receiveStripeEvent(
  pool: DatabasePool | CommonQueryMethods,
  config: Config,
  raw: Buffer | undefined,
  signature: string | undefined,
): Promise<StripeReceipt> {
  const event = verifyStripeEvent(config, raw, signature);
  const outcome = await pool.transaction(async (tx) => {
    const fresh = await tx.maybeOneFirst(sql.type(z.object({ event_id: z.string() }))`
      insert into webhook_events (source, event_id) values ('stripe', ${event.id})
      on conflict do nothing returning event_id`);
    if (!fresh) return 'duplicate';
    const handler = handlers.get(event.type);
    return handler ? handler(tx, event, () => stripeClient(config)) : 'ignored';
  });
  return { received: true, event_id: event.id, type: event.type, outcome: outcome as StripeReceipt['outcome'] };
}
