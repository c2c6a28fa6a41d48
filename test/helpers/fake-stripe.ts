// The parts of Stripe's API the platform calls, on 127.0.0.1, for the real
// `stripe` SDK (its host, port and protocol options): Checkout Sessions,
// subscriptions, invoices and billing-portal sessions, kept in memory. Tests
// move them along (pay, refund, renew) and build the signed webhook events
// Stripe would send, signed with the SDK's own generateTestHeaderString.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

type StripeObject = Record<string, unknown> & { id: string };

export type FakeStripe = {
  url: string;
  key: string;
  sessions: Map<string, StripeObject>;
  subscriptions: Map<string, StripeObject>;
  invoices: Map<string, StripeObject>;
  /** Every API request, in order. */
  requests: { method: string; path: string; body: Record<string, unknown> }[];
  /** The next API requests (the SDK's retries included) answer this status with a Stripe error. */
  failNext(status: number, times?: number): void;
  /** The customer paid the session (async: the payment is still processing). */
  pay(sessionId: string, options?: { async?: boolean }): StripeObject;
  /** A new period of the subscription, paid: its `subscription_cycle` invoice. */
  renew(subscriptionId: string): StripeObject;
  /** Stripe's event wrapping an object. */
  event(type: string, object: StripeObject, created?: number): StripeObject;
  close(): Promise<void>;
};

const id = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Stripe's form encoding (`a[b][0][c]=v`) back into nested objects (arrays stay objects keyed "0", "1"...). */
export function parseForm(body: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, '').split('[');
    let target = result;
    for (const [index, part] of path.entries()) {
      if (index === path.length - 1) target[part] = value;
      else target = (target[part] ??= {}) as Record<string, unknown>;
    }
  }
  return result;
}

/** The settings that point an app at the fake, with this webhook secret. */
export const stripeEnv = (stripe: FakeStripe, webhookSecret: string): Record<string, string> => ({
  STRIPE_SECRET_KEY: stripe.key,
  STRIPE_API_URL: stripe.url,
  STRIPE_WEBHOOK_SECRET: webhookSecret,
  PAYMENTS_RETURN_ORIGINS: 'https://shop.example',
});

/** Signs a webhook payload the way Stripe does. */
export function signEvent(event: object, secret: string, timestamp = now()) {
  const payload = JSON.stringify(event);
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  return { payload, header };
}

export async function startFakeStripe(key = 'sk_test_fake_0123456789'): Promise<FakeStripe> {
  const sessions = new Map<string, StripeObject>();
  const subscriptions = new Map<string, StripeObject>();
  const invoices = new Map<string, StripeObject>();
  const requests: FakeStripe['requests'] = [];
  let failure: { status: number; left: number } | undefined;
  let base = '';

  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = parseForm(req.method === 'GET' ? url.search.slice(1) : raw);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': id('req') });
      res.end(JSON.stringify(value));
    };
    const missing = () =>
      json(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such object' } });
    if (req.headers.authorization !== `Bearer ${key}`)
      return json(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    if (failure && failure.left > 0) {
      failure.left -= 1;
      return json(failure.status, { error: { type: 'api_error', message: 'Something went wrong' } });
    }
    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const sessionId = id('cs_test');
      const session: StripeObject = {
        id: sessionId,
        object: 'checkout.session',
        mode: body['mode'],
        status: 'open',
        payment_status: 'unpaid',
        client_reference_id: body['client_reference_id'] ?? null,
        metadata: body['metadata'] ?? {},
        customer: body['customer'] ?? null,
        line_items_requested: body['line_items'],
        subscription_data: body['subscription_data'] ?? null,
        payment_intent: null,
        subscription: null,
        invoice: null,
        success_url: body['success_url'],
        cancel_url: body['cancel_url'],
        url: `${base}/pay/${sessionId}`,
        created: now(),
      };
      sessions.set(sessionId, session);
      return json(200, session);
    }
    if (req.method === 'GET' && parts[1] === 'checkout' && parts[2] === 'sessions' && parts[3]) {
      const session = sessions.get(parts[3]);
      return session ? json(200, session) : missing();
    }
    if (parts[1] === 'subscriptions' && parts[2]) {
      const subscription = subscriptions.get(parts[2]);
      if (!subscription) return missing();
      if (req.method === 'DELETE') Object.assign(subscription, { status: 'canceled', canceled_at: now() });
      if (req.method === 'POST') {
        if (body['cancel_at_period_end'] !== undefined)
          subscription['cancel_at_period_end'] = body['cancel_at_period_end'] === 'true';
        const items = body['items'] as Record<string, { id?: string; price?: string }> | undefined;
        const price = items?.['0']?.price;
        if (price) {
          const item = (subscription['items'] as { data: Record<string, unknown>[] }).data[0]!;
          item['price'] = { id: price, object: 'price' };
        }
        if (body['metadata'])
          subscription['metadata'] = { ...(subscription['metadata'] as object), ...body['metadata'] };
        // A price change invoiced at once: the prorations, paid.
        if (price && body['proration_behavior'] === 'always_invoice')
          subscription['latest_invoice'] = newInvoice(subscription, 'subscription_update', price, true).id;
      }
      return json(200, subscription);
    }
    if (req.method === 'GET' && parts[1] === 'invoices' && parts[2]) {
      const invoice = invoices.get(parts[2]);
      return invoice ? json(200, invoice) : missing();
    }
    if (req.method === 'POST' && url.pathname === '/v1/billing_portal/sessions') {
      return json(200, {
        id: id('bps'),
        object: 'billing_portal.session',
        customer: body['customer'],
        return_url: body['return_url'] ?? null,
        url: `${base}/portal/${randomBytes(12).toString('hex')}`,
      });
    }
    return missing();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function pay(sessionId: string, options: { async?: boolean } = {}): StripeObject {
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    session['status'] = 'complete';
    session['payment_status'] = options.async ? 'unpaid' : 'paid';
    if (session['mode'] === 'payment') session['payment_intent'] = session['payment_intent'] ?? id('pi');
    if (session['mode'] === 'subscription') {
      const customer = (session['customer'] as string | null) ?? id('cus');
      const start = now();
      const price = ((session['line_items_requested'] as Record<string, { price: string }>)['0'] ?? { price: '' })
        .price;
      const subscriptionId = id('sub');
      const subscriptionMetadata =
        (session['subscription_data'] as { metadata?: Record<string, string> } | null)?.metadata ?? {};
      const subscription: StripeObject = {
        id: subscriptionId,
        object: 'subscription',
        customer,
        status: 'active',
        cancel_at_period_end: false,
        canceled_at: null,
        metadata: subscriptionMetadata,
        items: {
          object: 'list',
          data: [
            {
              id: id('si'),
              object: 'subscription_item',
              price: { id: price, object: 'price' },
              current_period_start: start,
              current_period_end: start + 30 * 86_400,
            },
          ],
        },
        latest_invoice: null,
      };
      subscriptions.set(subscriptionId, subscription);
      const invoice = newInvoice(subscription, 'subscription_create', price);
      subscription['latest_invoice'] = invoice.id;
      Object.assign(session, { customer, subscription: subscriptionId, invoice: invoice.id });
    }
    return session;
  }

  function newInvoice(subscription: StripeObject, reason: string, price: string, proration = false): StripeObject {
    const invoice: StripeObject = {
      id: id('in'),
      object: 'invoice',
      customer: subscription['customer'],
      status: 'paid',
      billing_reason: reason,
      parent: {
        type: 'subscription_details',
        subscription_details: { subscription: subscription.id, metadata: subscription['metadata'] },
      },
      lines: {
        object: 'list',
        data: [
          {
            id: id('il'),
            object: 'line_item',
            pricing: { price_details: { price } },
            parent: { type: 'subscription_item_details', subscription_item_details: { proration } },
            period: {
              start: (subscription['items'] as { data: Record<string, unknown>[] }).data[0]!['current_period_start'],
              end: (subscription['items'] as { data: Record<string, unknown>[] }).data[0]!['current_period_end'],
            },
          },
        ],
      },
      created: now(),
    };
    invoices.set(invoice.id, invoice);
    return invoice;
  }

  function renew(subscriptionId: string): StripeObject {
    const subscription = subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
    const item = (subscription['items'] as { data: Record<string, unknown>[] }).data[0]!;
    const start = item['current_period_end'] as number;
    Object.assign(item, { current_period_start: start, current_period_end: start + 30 * 86_400 });
    const invoice = newInvoice(subscription, 'subscription_cycle', (item['price'] as { id: string }).id);
    subscription['latest_invoice'] = invoice.id;
    return invoice;
  }

  return {
    url: base,
    key,
    sessions,
    subscriptions,
    invoices,
    requests,
    failNext(status, times = 3) {
      failure = { status, left: times };
    },
    pay,
    renew,
    event(type, object, created = now()) {
      return {
        id: id('evt'),
        object: 'event',
        type,
        created,
        api_version: '2025-01-01',
        livemode: false,
        data: { object },
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
