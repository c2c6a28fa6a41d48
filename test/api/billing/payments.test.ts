// Buying credit packages through Stripe Checkout, against a fake Stripe API on
// 127.0.0.1 driven by the real SDK, and Stripe's signed webhook: credits
// granted once whatever the order or the number of deliveries, refunds taken
// back as far as they are unspent, the rest owed.
import request from 'supertest';
import { applyEntry, userAccount } from '../../../core/credits/accounts.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';
import { assignToSite, serviceAccount, type Caller } from '../../helpers/factories.ts';
import { signEvent, startFakeStripe, stripeEnv, type FakeStripe } from '../../helpers/fake-stripe.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';

const webhookSecret = 'whsec_test_0123456789abcdef';
let t: TestApp;
let stripe: FakeStripe;
let admin: Caller;
beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await startTestApp({
    env: stripeEnv(stripe, webhookSecret),
  });
  admin = await globalAdmin(t);
});
afterAll(async () => {
  await stopTestApp(t);
  await stripe.close();
});

const returns = { success_url: 'https://shop.example/thanks', cancel_url: 'https://shop.example/cart' };

async function newPackage(credits = 100, price = 999) {
  const res = await request(t.app)
    .post('/admin/credit-packages')
    .set(admin.auth)
    .send({ name: `Pack of ${credits}`, credits, price, currency: 'EUR' })
    .expect(201);
  return res.body as { id: string; credits: number };
}

async function buyer(): Promise<Staffed> {
  const staffed = await staffedTenant(t);
  await assignToSite(t, staffed.site, staffed.author.user.id);
  return staffed;
}

async function checkout(staffed: Staffed, packageId: string) {
  const res = await request(t.app)
    .post(`/${staffed.site.slug}/payments/create-checkout-session`)
    .set(staffed.author.auth)
    .send({ package_id: packageId, ...returns })
    .expect(201);
  return res.body as { id: string; url: string; payment_id: string };
}

const deliver = (event: object, options: { secret?: string; timestamp?: number; tamper?: boolean } = {}) => {
  const { payload, header } = signEvent(event, options.secret ?? webhookSecret, options.timestamp);
  return request(t.app)
    .post('/payments/webhook')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', header)
    .send(options.tamper ? payload.replace('"livemode":false', '"livemode":true') : payload);
};

const completed = (sessionId: string, options?: { async?: boolean }) =>
  stripe.event('checkout.session.completed', stripe.pay(sessionId, options));

async function balanceOf(staffed: Staffed) {
  const res = await request(t.app)
    .get(`/${staffed.site.slug}/transactions/credits/balance`)
    .set(staffed.author.auth)
    .expect(200);
  return res.body as { balance: number; available: number };
}

const paymentOf = async (staffed: Staffed, id: string) =>
  (await request(t.app).get(`/${staffed.site.slug}/payments/transactions/${id}`).set(staffed.author.auth).expect(200))
    .body;

describe('credit packages', () => {
  it('global admins keep them; sites list the active ones; others may not manage them', async () => {
    const staffed = await buyer();
    const offer = await newPackage(250, 1999);
    expect(offer).toMatchObject({ credits: 250, price: 1999, currency: 'eur', active: true });
    const retired = await newPackage(5, 99);
    await request(t.app)
      .patch(`/admin/credit-packages/${retired.id}`)
      .set(admin.auth)
      .send({ active: false })
      .expect(200);
    // Renaming a retired package leaves it retired: a change sets only what it names.
    const renamed = await request(t.app)
      .patch(`/admin/credit-packages/${retired.id}`)
      .set(admin.auth)
      .send({ name: 'Retired pack' })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'Retired pack', active: false });
    const listed = await request(t.app)
      .get(`/${staffed.site.slug}/payments/credit-packages`)
      .set(staffed.author.auth)
      .expect(200);
    const ids = listed.body.items.map((item: { id: string }) => item.id);
    expect(ids).toContain(offer.id);
    expect(ids).not.toContain(retired.id);
    const all = await request(t.app).get('/admin/credit-packages').set(admin.auth).expect(200);
    expect(all.body.items.map((item: { id: string }) => item.id)).toContain(retired.id);
    await request(t.app)
      .post('/admin/credit-packages')
      .set(staffed.admin.auth)
      .send({ name: 'x', credits: 1, price: 100, currency: 'usd' })
      .expect(403);
    await request(t.app)
      .post('/admin/credit-packages')
      .set(admin.auth)
      .send({ name: 'x', credits: 0, price: 10, currency: 'euro' })
      .expect(422);
    await request(t.app)
      .patch(`/admin/credit-packages/${crypto.randomUUID()}`)
      .set(admin.auth)
      .send({ name: 'Gone' })
      .expect(404);
  });
});

describe('POST .../payments/create-checkout-session', () => {
  it('records a pending payment and opens a Checkout Session naming it', async () => {
    const staffed = await buyer();
    const offer = await newPackage(100, 999);
    const session = await checkout(staffed, offer.id);
    expect(session.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_/);
    const sent = stripe.requests.filter((entry) => entry.path === '/v1/checkout/sessions').at(-1)!;
    expect(sent.body).toMatchObject({
      mode: 'payment',
      client_reference_id: session.payment_id,
      metadata: { payment_id: session.payment_id, site_id: staffed.site.id, user_id: staffed.author.user.id },
      line_items: { '0': { quantity: '1', price_data: { currency: 'eur', unit_amount: '999' } } },
      success_url: returns.success_url,
    });
    const payment = await paymentOf(staffed, session.payment_id);
    expect(payment).toMatchObject({
      status: 'pending',
      credits: 100,
      amount: 999,
      currency: 'eur',
      stripe_session_id: session.id,
    });
    const list = await request(t.app)
      .get(`/${staffed.site.slug}/payments/transactions`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(list.body.items.map((item: { id: string }) => item.id)).toEqual([session.payment_id]);
  });

  it('replays the first answer for a repeated Idempotency-Key', async () => {
    const staffed = await buyer();
    const offer = await newPackage();
    const send = () =>
      request(t.app)
        .post(`/${staffed.site.slug}/payments/create-checkout-session`)
        .set(staffed.author.auth)
        .set('Idempotency-Key', 'buy-once')
        .send({ package_id: offer.id, ...returns })
        .expect(201);
    const first = await send();
    const second = await send();
    expect(second.body).toEqual(first.body);
    const payments = await request(t.app).get(`/${staffed.site.slug}/payments/transactions`).set(staffed.author.auth);
    expect(payments.body.items).toHaveLength(1);
  });

  it('refuses return URLs off the site and the allowlist (no open redirect), accepting the site’s own domain', async () => {
    const staffed = await buyer();
    await t.services.db.query(
      sql.typeAlias('void')`update sites set domain = ${`${staffed.site.slug}.example`} where id = ${staffed.site.id}`,
    );
    const offer = await newPackage();
    const refused = await request(t.app)
      .post(`/${staffed.site.slug}/payments/create-checkout-session`)
      .set(staffed.author.auth)
      .send({
        package_id: offer.id,
        success_url: 'https://evil.example/x',
        cancel_url: 'http://shop.example.evil.example/',
      })
      .expect(422);
    expect(refused.body.errors.map((error: { path: string }) => error.path)).toEqual([
      'body.success_url',
      'body.cancel_url',
    ]);
    await request(t.app)
      .post(`/${staffed.site.slug}/payments/create-checkout-session`)
      .set(staffed.author.auth)
      .send({
        package_id: offer.id,
        success_url: `https://${staffed.site.slug}.example/ok`,
        cancel_url: 'https://shop.example/',
      })
      .expect(201);
  });

  it('answers 401, 403 to service accounts, 404 for another tenant’s site or a retired package, 422 for a bad body', async () => {
    const staffed = await buyer();
    const other = await buyer();
    const offer = await newPackage();
    const path = `/${staffed.site.slug}/payments/create-checkout-session`;
    await request(t.app)
      .post(path)
      .send({ package_id: offer.id, ...returns })
      .expect(401);
    const bot = await serviceAccount(t, staffed.tenant, ['sites:read'], staffed.admin);
    await request(t.app)
      .post(path)
      .set(bot.auth)
      .send({ package_id: offer.id, ...returns })
      .expect(403);
    await request(t.app)
      .post(path)
      .set(other.author.auth)
      .send({ package_id: offer.id, ...returns })
      .expect(404);
    await request(t.app)
      .patch(`/admin/credit-packages/${offer.id}`)
      .set(admin.auth)
      .send({ active: false })
      .expect(200);
    await request(t.app)
      .post(path)
      .set(staffed.author.auth)
      .send({ package_id: offer.id, ...returns })
      .expect(404);
    await request(t.app)
      .post(path)
      .set(staffed.author.auth)
      .send({ package_id: 'nope', ...returns })
      .expect(422);
    await request(t.app)
      .get(`/${staffed.site.slug}/payments/transactions/${crypto.randomUUID()}`)
      .set(staffed.author.auth)
      .expect(404);
  });

  it('answers 502 when Stripe fails, and marks the payment failed', async () => {
    const staffed = await buyer();
    const offer = await newPackage();
    stripe.failNext(500, 5);
    const res = await request(t.app)
      .post(`/${staffed.site.slug}/payments/create-checkout-session`)
      .set(staffed.author.auth)
      .send({ package_id: offer.id, ...returns })
      .expect(502);
    expect(res.body.type).toBe('/problems/payment-provider-error');
    const list = await request(t.app).get(`/${staffed.site.slug}/payments/transactions`).set(staffed.author.auth);
    expect(list.body.items).toEqual([expect.objectContaining({ status: 'failed' })]);
  });
});

describe('POST /payments/webhook', () => {
  it('grants the package’s credits to the buyer once, however often the event comes', async () => {
    const staffed = await buyer();
    const offer = await newPackage(100);
    const session = await checkout(staffed, offer.id);
    const event = completed(session.id);
    const first = await deliver(event).expect(200);
    expect(first.body).toEqual({
      received: true,
      event_id: event.id,
      type: 'checkout.session.completed',
      outcome: 'accepted',
    });
    const again = await deliver(event).expect(200);
    expect(again.body.outcome).toBe('duplicate');
    // The same session reported by a second event (async success) grants nothing more.
    await deliver(stripe.event('checkout.session.async_payment_succeeded', stripe.sessions.get(session.id)!)).expect(
      200,
    );
    expect(await balanceOf(staffed)).toMatchObject({ balance: 100 });
    expect(await paymentOf(staffed, session.payment_id)).toMatchObject({ status: 'paid', credits_granted: 100 });
    const entries = await request(t.app).get(`/${staffed.site.slug}/transactions/`).set(staffed.author.auth);
    expect(entries.body.items).toEqual([
      expect.objectContaining({ kind: 'purchase', amount: 100, payment_id: session.payment_id }),
    ]);
  });

  it('grants once when 20 copies of one event arrive at the same time', async () => {
    const staffed = await buyer();
    const offer = await newPackage(40);
    const session = await checkout(staffed, offer.id);
    const event = completed(session.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(event)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((answer) => answer.body.outcome === 'accepted')).toHaveLength(1);
    expect(await balanceOf(staffed)).toMatchObject({ balance: 40 });
  });

  it('refuses a tampered body, a stale timestamp, the wrong secret and a missing signature (400), changing nothing', async () => {
    const staffed = await buyer();
    const offer = await newPackage(10);
    const session = await checkout(staffed, offer.id);
    const event = completed(session.id);
    for (const answer of [
      await deliver(event, { tamper: true }),
      await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
      await deliver(event, { secret: 'whsec_someone_else_0000' }),
      await request(t.app)
        .post('/payments/webhook')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(event)),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.body.type).toBe('/problems/invalid-signature');
    }
    expect(await balanceOf(staffed)).toMatchObject({ balance: 0 });
    // The genuine delivery still works afterwards: nothing recorded its id.
    await deliver(event).expect(200);
    expect(await balanceOf(staffed)).toMatchObject({ balance: 10 });
  });

  it('follows an asynchronous payment to success, and ends failed and expired sessions without credits', async () => {
    const staffed = await buyer();
    const offer = await newPackage(30);
    const slow = await checkout(staffed, offer.id);
    const processing = await deliver(completed(slow.id, { async: true })).expect(200);
    expect(processing.body.outcome).toBe('pending');
    expect(await paymentOf(staffed, slow.payment_id)).toMatchObject({ status: 'pending', credits_granted: 0 });
    const succeeded = stripe.sessions.get(slow.id)!;
    succeeded['payment_status'] = 'paid';
    await deliver(stripe.event('checkout.session.async_payment_succeeded', succeeded)).expect(200);
    expect(await paymentOf(staffed, slow.payment_id)).toMatchObject({ status: 'paid', credits_granted: 30 });

    const failing = await checkout(staffed, offer.id);
    await deliver(
      stripe.event('checkout.session.async_payment_failed', stripe.pay(failing.id, { async: true })),
    ).expect(200);
    expect(await paymentOf(staffed, failing.payment_id)).toMatchObject({ status: 'failed', credits_granted: 0 });
    const abandoned = await checkout(staffed, offer.id);
    await deliver(stripe.event('checkout.session.expired', stripe.sessions.get(abandoned.id)!)).expect(200);
    expect(await paymentOf(staffed, abandoned.payment_id)).toMatchObject({ status: 'expired' });
    expect(await balanceOf(staffed)).toMatchObject({ balance: 30 });
  });

  it('takes back what is unspent after a refund and records the rest as owed; a repeated refund changes nothing', async () => {
    const staffed = await buyer();
    const offer = await newPackage(100, 1000);
    const session = await checkout(staffed, offer.id);
    await deliver(completed(session.id)).expect(200);
    // The buyer spends 70 of the 100 credits.
    const account = await userAccount(t.services.db, staffed.site, staffed.author.user.id);
    await applyEntry(t.services.db, {
      accountId: account,
      tenantId: staffed.tenant.id,
      siteId: staffed.site.id,
      userId: staffed.author.user.id,
      kind: 'debit',
      amount: -70,
      operation: 'speech',
    });
    const intent = stripe.sessions.get(session.id)!['payment_intent'] as string;
    const charge = (refunded: number) => ({
      id: 'ch_1',
      object: 'charge',
      amount: 1000,
      amount_refunded: refunded,
      payment_intent: intent,
      metadata: { payment_id: session.payment_id },
    });
    await deliver(stripe.event('charge.refunded', charge(200))).expect(200);
    expect(await paymentOf(staffed, session.payment_id)).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 200,
      credits_taken_back: 20,
      credits_owed: 0,
    });
    await deliver(stripe.event('charge.refunded', charge(1000))).expect(200);
    // A late copy of the first refund (a new event id) changes nothing.
    const late = await deliver(stripe.event('charge.refunded', charge(200))).expect(200);
    expect(late.body.outcome).toBe('duplicate');
    expect(await paymentOf(staffed, session.payment_id)).toMatchObject({
      status: 'refunded',
      amount_refunded: 1000,
      credits_taken_back: 30,
      credits_owed: 70,
    });
    expect(await balanceOf(staffed)).toMatchObject({ balance: 0 });
    await expectLedgerHolds(t);
  });

  it('asks for a refund of a payment not yet known to be delivered again later (409), then applies it', async () => {
    const staffed = await buyer();
    const offer = await newPackage(50, 500);
    const session = await checkout(staffed, offer.id);
    const refund = stripe.event('charge.refunded', {
      id: 'ch_2',
      object: 'charge',
      amount: 500,
      amount_refunded: 500,
      payment_intent: 'pi_unknown',
      metadata: { payment_id: crypto.randomUUID() },
    });
    const early = await deliver(refund).expect(409);
    expect(early.headers['retry-after']).toBe('60');
    // A refund arriving before the completion of a known payment waits on it, then settles.
    const before = stripe.event('charge.refunded', {
      id: 'ch_3',
      object: 'charge',
      amount: 500,
      amount_refunded: 500,
      payment_intent: 'pi_x',
      metadata: { payment_id: session.payment_id },
    });
    await deliver(before).expect(200);
    await deliver(completed(session.id)).expect(200);
    expect(await paymentOf(staffed, session.payment_id)).toMatchObject({ status: 'refunded', credits_taken_back: 50 });
    expect(await balanceOf(staffed)).toMatchObject({ balance: 0 });
  });

  it('acknowledges event types it does not handle', async () => {
    const res = await deliver(stripe.event('customer.created', { id: 'cus_1', object: 'customer' })).expect(200);
    expect(res.body.outcome).toBe('ignored');
  });

  it('the ledger still sums to every balance', async () => {
    await expectLedgerHolds(t);
  });
});

describe('without Stripe configured', () => {
  it('answers 503 naming the setting, and the rest of the service runs', async () => {
    const bare = await startTestApp();
    try {
      const caller = await globalAdmin(bare);
      const staffed = await staffedTenant(bare);
      const res = await request(bare.app)
        .post(`/${staffed.site.slug}/payments/create-checkout-session`)
        .set(staffed.admin.auth)
        .send({ package_id: crypto.randomUUID(), ...returns })
        .expect(503);
      expect(res.body).toMatchObject({ type: '/problems/payments-not-configured', setting: 'STRIPE_SECRET_KEY' });
      const hook = await request(bare.app)
        .post('/payments/webhook')
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', 't=1,v1=00')
        .send('{}')
        .expect(503);
      expect(hook.body.setting).toBe('STRIPE_WEBHOOK_SECRET');
      await request(bare.app).get('/admin/credit-packages').set(caller.auth).expect(200);
    } finally {
      await stopTestApp(bare);
    }
  });
});
