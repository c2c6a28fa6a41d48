// Subscriptions against a fake Stripe API on 127.0.0.1 driven by the real
// SDK: plans, moving to a paid plan through Checkout and verifying it,
// changing and cancelling, the customer portal, the plan's monthly credits
// (once per invoice, once per free period) and the subscription webhooks in
// any order.
import request from 'supertest';
import { z } from 'zod';
import { poolAccount, readBalance } from '../../../core/credits/accounts.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { signEvent, startFakeStripe, stripeEnv, type FakeStripe } from '../../helpers/fake-stripe.ts';
import { globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

const webhookSecret = 'whsec_test_subscriptions_0123';
let t: TestApp;
let stripe: FakeStripe;
let admin: Caller;
type Plan = { id: string; monthly_credits: number; stripe_price_id: string | null };
let pro: Plan;
let max: Plan;
let free: Plan;

beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await startTestApp({ env: stripeEnv(stripe, webhookSecret) });
  admin = await globalAdmin(t);
  pro = await newPlan('Pro', 1000, 1900);
  max = await newPlan('Max', 5000, 4900);
  const plans = await request(t.app).get('/admin/plans').set(admin.auth).expect(200);
  free = plans.body.items.find((plan: { is_free: boolean }) => plan.is_free);
});
afterAll(async () => {
  await expectLedgerHolds(t);
  await stopTestApp(t);
  await stripe.close();
});

async function newPlan(name: string, monthlyCredits: number, price: number): Promise<Plan> {
  const res = await request(t.app)
    .post('/admin/plans')
    .set(admin.auth)
    .send({
      name,
      monthly_credits: monthlyCredits,
      price,
      currency: 'USD',
      stripe_price_id: `price_${name}${unique()}`,
      storage_quota_bytes: 10 * 1024 ** 3,
    })
    .expect(201);
  return res.body;
}

const returns = {
  success_url: 'https://shop.example/done?session={CHECKOUT_SESSION_ID}',
  cancel_url: 'https://shop.example/',
};

/** Stripe delivering a signed event; `deliver` expects it taken. */
const send = (event: object) => {
  const { payload, header } = signEvent(event, webhookSecret);
  return request(t.app)
    .post('/payments/webhook')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', header)
    .send(payload);
};
const deliver = (event: object) => send(event).expect(200);

const current = async (caller: Caller, tenantId?: string) =>
  (
    await request(t.app)
      .get('/subscription/current')
      .query(tenantId ? { tenant_id: tenantId } : {})
      .set(caller.auth)
      .expect(200)
  ).body;

async function startUpgrade(staffed: Staffed, plan: Plan) {
  const res = await request(t.app)
    .post('/subscription/upgrade')
    .set(staffed.admin.auth)
    .send({ plan_id: plan.id, ...returns })
    .expect(200);
  expect(res.body.outcome).toBe('checkout');
  return res.body.checkout as { id: string; url: string };
}

/** A tenant subscribed to a plan: checkout, paid, verified. */
async function subscribed(plan: Plan = pro) {
  const staffed = await staffedTenant(t);
  const checkout = await startUpgrade(staffed, plan);
  const session = stripe.pay(checkout.id);
  await request(t.app)
    .get('/subscription/verify-upgrade')
    .query({ session_id: checkout.id })
    .set(staffed.admin.auth)
    .expect(200);
  return { staffed, session, subscriptionId: session['subscription'] as string };
}

const pool = async (tenantId: string) => readBalance(t.services.db, await poolAccount(t.services.db, tenantId));

describe('plans', () => {
  it('global admins keep them; everyone signed in lists the active ones', async () => {
    const staffed = await staffedTenant(t);
    expect(pro).toMatchObject({ monthly_credits: 1000, currency: 'usd', is_free: false, active: true });
    expect(free).toMatchObject({ is_free: true, stripe_price_id: null, monthly_credits: 100 });
    const retired = await newPlan('Old', 10, 500);
    await request(t.app).patch(`/admin/plans/${retired.id}`).set(admin.auth).send({ active: false }).expect(200);
    const listed = await request(t.app).get('/subscription/plans').set(staffed.author.auth).expect(200);
    const ids = listed.body.items.map((plan: { id: string }) => plan.id);
    expect(ids).toEqual(expect.arrayContaining([free.id, pro.id, max.id]));
    expect(ids).not.toContain(retired.id);
    await request(t.app)
      .post('/admin/plans')
      .set(admin.auth)
      .send({ name: 'Twin', monthly_credits: 1, price: 100, currency: 'usd', stripe_price_id: pro.stripe_price_id })
      .expect(409);
    const bad = await request(t.app)
      .post('/admin/plans')
      .set(admin.auth)
      .send({ name: '', monthly_credits: -1, price: 100, currency: 'dollars', stripe_price_id: 'nope' })
      .expect(422);
    expect(bad.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      ['body.currency', 'body.monthly_credits', 'body.name', 'body.stripe_price_id'].sort(),
    );
    await request(t.app)
      .patch(`/admin/plans/${free.id}`)
      .set(admin.auth)
      .send({ stripe_price_id: 'price_free' })
      .expect(422);
    await request(t.app)
      .post('/admin/plans')
      .set(staffed.admin.auth)
      .send({ name: 'Mine', monthly_credits: 1, price: 100, currency: 'usd', stripe_price_id: 'price_mine' })
      .expect(403);
    await request(t.app).get('/admin/plans').expect(401);
    await request(t.app)
      .patch(`/admin/plans/${crypto.randomUUID()}`)
      .set(admin.auth)
      .send({ name: 'Gone' })
      .expect(404);
  });
});

describe('GET /subscription/current', () => {
  it('a tenant without a subscription is on the free plan, this calendar month', async () => {
    const staffed = await staffedTenant(t);
    const body = await current(staffed.author);
    const month = new Date();
    expect(body).toMatchObject({
      tenant_id: staffed.tenant.id,
      plan: { id: free.id },
      status: 'active',
      paid: false,
      cancel_at_period_end: false,
      credits_granted_this_period: 0,
      storage: { used_bytes: 0, quota_bytes: 1024 ** 3 },
    });
    expect(body.current_period_start).toBe(
      new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString(),
    );
    await request(t.app).get('/subscription/current').expect(401);
  });

  it('asks which tenant when the caller belongs to several, and hides the others', async () => {
    const first = await newTenant(t);
    const second = await newTenant(t);
    const member = await signedIn(t, { tenant: first, role: 'editor' });
    await t.services.db.query(sql.typeAlias('void')`
      insert into memberships (tenant_id, user_id, role) values (${second.id}, ${member.user.id}, 'author')`);
    const ambiguous = await request(t.app).get('/subscription/current').set(member.auth).expect(422);
    expect(ambiguous.body.errors).toEqual([{ path: 'query.tenant_id', message: 'required here' }]);
    expect(ambiguous.body.tenant_ids.sort()).toEqual([first.id, second.id].sort());
    expect((await current(member, second.id)).tenant_id).toBe(second.id);
    const stranger = await staffedTenant(t);
    await request(t.app)
      .get('/subscription/current')
      .query({ tenant_id: stranger.tenant.id })
      .set(member.auth)
      .expect(404);
    await request(t.app)
      .get('/subscription/current')
      .query({ tenant_id: crypto.randomUUID() })
      .set(admin.auth)
      .expect(404);
    const robot = await serviceAccount(t, stranger.tenant);
    const seen = await request(t.app).get('/subscription/current').set(robot.auth).expect(200);
    expect(seen.body.tenant_id).toBe(stranger.tenant.id);
  });
});

describe('POST /subscription/upgrade and GET /subscription/verify-upgrade', () => {
  it('opens a Checkout Session in subscription mode, then applies it when the customer returns', async () => {
    const staffed = await staffedTenant(t);
    const checkout = await startUpgrade(staffed, pro);
    const sent = stripe.requests.filter((entry) => entry.path === '/v1/checkout/sessions').at(-1)!;
    expect(sent.body).toMatchObject({
      mode: 'subscription',
      client_reference_id: staffed.tenant.id,
      line_items: { '0': { price: pro.stripe_price_id, quantity: '1' } },
      subscription_data: { metadata: { tenant_id: staffed.tenant.id, plan_id: pro.id } },
      success_url: returns.success_url,
    });
    // Not paid yet: still free, and verifying says so.
    expect((await current(staffed.admin)).paid).toBe(false);
    const early = await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: checkout.id })
      .set(staffed.admin.auth)
      .expect(409);
    expect(early.body.checkout_status).toBe('open');

    stripe.pay(checkout.id);
    const verified = await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: checkout.id })
      .set(staffed.admin.auth)
      .expect(200);
    expect(verified.body).toMatchObject({
      plan: { id: pro.id },
      status: 'active',
      paid: true,
      credits_granted_this_period: 1000,
      storage: { quota_bytes: 10 * 1024 ** 3 },
    });
    expect((await pool(staffed.tenant.id)).balance).toBe(1000);
    // Verifying again, and the webhook's events after it, grant nothing more.
    await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: checkout.id })
      .set(staffed.admin.auth)
      .expect(200);
    const session = stripe.sessions.get(checkout.id)!;
    const subscription = stripe.subscriptions.get(session['subscription'] as string)!;
    const invoice = stripe.invoices.get(session['invoice'] as string)!;
    expect((await deliver(stripe.event('checkout.session.completed', session))).body.outcome).toBe('accepted');
    expect((await deliver(stripe.event('customer.subscription.created', subscription))).body.outcome).toBe('accepted');
    expect((await deliver(stripe.event('invoice.paid', invoice))).body.outcome).toBe('duplicate');
    expect((await pool(staffed.tenant.id)).balance).toBe(1000);
  });

  it('is idempotent with the webhook arriving first', async () => {
    const staffed = await staffedTenant(t);
    const checkout = await startUpgrade(staffed, pro);
    const session = stripe.pay(checkout.id);
    const subscription = stripe.subscriptions.get(session['subscription'] as string)!;
    const invoice = stripe.invoices.get(session['invoice'] as string)!;
    // The invoice first: the subscription's metadata names the tenant and the price names the plan.
    expect((await deliver(stripe.event('invoice.paid', invoice))).body.outcome).toBe('accepted');
    expect((await deliver(stripe.event('customer.subscription.created', subscription))).body.outcome).toBe('accepted');
    expect(await current(staffed.admin)).toMatchObject({ paid: true, status: 'active', plan: { id: pro.id } });
    expect((await deliver(stripe.event('checkout.session.completed', session))).body.outcome).toBe('accepted');
    await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: checkout.id })
      .set(staffed.admin.auth)
      .expect(200);
    expect((await pool(staffed.tenant.id)).balance).toBe(1000);
  });

  it('refuses what it should, with the right status', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .post('/subscription/upgrade')
      .send({ plan_id: pro.id, ...returns })
      .expect(401);
    await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.editor.auth)
      .send({ plan_id: pro.id, ...returns })
      .expect(403);
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: 'x' }).expect(422);
    const missing = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: pro.id })
      .expect(422);
    expect(missing.body.errors.map((error: { path: string }) => error.path)).toEqual([
      'body.success_url',
      'body.cancel_url',
    ]);
    const redirect = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: pro.id, success_url: 'https://evil.example/', cancel_url: returns.cancel_url })
      .expect(422);
    expect(redirect.body.errors).toEqual([expect.objectContaining({ path: 'body.success_url' })]);
    // A domain of one of the tenant's sites is a fine place to come back to.
    const own = await newSite(t, staffed.tenant);
    await t.services.db.query(
      sql.typeAlias('void')`update sites set domain = ${`${own.slug}.example.org`} where id = ${own.id}`,
    );
    await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({
        plan_id: pro.id,
        success_url: `https://${own.slug}.example.org/ok`,
        cancel_url: `https://${own.slug}.example.org/`,
      })
      .expect(200);
    await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: free.id, ...returns })
      .expect(422);
    await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: crypto.randomUUID(), ...returns })
      .expect(404);
    // Another tenant's checkout is not found.
    const other = await staffedTenant(t);
    const theirs = await startUpgrade(other, pro);
    stripe.pay(theirs.id);
    await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: theirs.id })
      .set(staffed.admin.auth)
      .expect(404);
    await request(t.app)
      .get('/subscription/verify-upgrade')
      .query({ session_id: 'cs_test_unknown' })
      .set(staffed.admin.auth)
      .expect(404);
    await request(t.app).get('/subscription/verify-upgrade').set(staffed.admin.auth).expect(422);
    // Stripe down: 502, and nothing changed.
    stripe.failNext(500);
    const down = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: pro.id, ...returns })
      .expect(502);
    expect(down.body.type).toBe('/problems/payment-provider-error');
    expect((await current(staffed.admin)).paid).toBe(false);
  });

  it('changes the plan of a live subscription, prorated, topping the pool up once', async () => {
    const { staffed, subscriptionId } = await subscribed(pro);
    const res = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: max.id })
      .expect(200);
    expect(res.body).toMatchObject({ outcome: 'changed', checkout: null, subscription: { plan: { id: max.id } } });
    const sent = stripe.requests
      .filter((entry) => entry.method === 'POST' && entry.path === `/v1/subscriptions/${subscriptionId}`)
      .at(-1)!;
    expect(sent.body).toMatchObject({
      items: { '0': { price: max.stripe_price_id } },
      proration_behavior: 'always_invoice',
      payment_behavior: 'error_if_incomplete',
    });
    // Topped up to Max's 5000 for this period: 1000 came with Pro's invoice.
    expect(res.body.subscription.credits_granted_this_period).toBe(5000);
    expect((await pool(staffed.tenant.id)).balance).toBe(5000);
    // The prorations' invoice, paid: the same top-up, not another.
    const prorations = stripe.invoices.get(stripe.subscriptions.get(subscriptionId)!['latest_invoice'] as string)!;
    expect(prorations['billing_reason']).toBe('subscription_update');
    expect((await deliver(stripe.event('invoice.paid', prorations))).body.outcome).toBe('duplicate');
    // Down and up again in the same period: nothing more.
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: pro.id }).expect(200);
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: max.id }).expect(200);
    expect((await pool(staffed.tenant.id)).balance).toBe(5000);
    const same = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: max.id })
      .expect(200);
    expect(same.body.outcome).toBe('unchanged');
  });

  it('keeps one budget per period when the first invoice comes after an upgrade', async () => {
    const staffed = await staffedTenant(t);
    const checkout = await startUpgrade(staffed, pro);
    const session = stripe.pay(checkout.id);
    // The customer never comes back; the checkout's event makes the subscription known.
    await deliver(stripe.event('checkout.session.completed', session));
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: max.id }).expect(200);
    expect((await pool(staffed.tenant.id)).balance).toBe(5000);
    // Pro's first invoice, late: the period has had Max's credits already.
    const first = stripe.invoices.get(session['invoice'] as string)!;
    expect((await deliver(stripe.event('invoice.paid', first))).body.outcome).toBe('duplicate');
    expect((await pool(staffed.tenant.id)).balance).toBe(5000);
  });
});

describe('monthly credits', () => {
  it('each paid invoice grants the plan’s credits once, expiring at its period’s end', async () => {
    const { staffed, subscriptionId } = await subscribed(pro);
    const renewal = stripe.renew(subscriptionId);
    const event = stripe.event('invoice.paid', renewal);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => deliver(event)));
    expect(outcomes.map((res) => res.body.outcome).sort()).toEqual([
      'accepted',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    // The same invoice in another event (Stripe may send both) is still one grant.
    expect((await deliver(stripe.event('invoice.paid', renewal))).body.outcome).toBe('duplicate');
    expect((await pool(staffed.tenant.id)).balance).toBe(2000);
    const periodEnd = (renewal['lines'] as { data: { period: { end: number } }[] }).data[0]!.period.end;
    const expiry = await t.services.db.oneFirst(sql.type(z.object({ expires_at: z.string() }))`
      select expires_at from credit_entries where once_key = ${`invoice:${renewal.id}`}`);
    expect(Date.parse(expiry)).toBe(periodEnd * 1000);
    // An invoice for something else (a one-off) grants nothing.
    const oneOff = { ...renewal, id: `in_${unique()}`, billing_reason: 'manual' };
    expect((await deliver(stripe.event('invoice.paid', oneOff))).body.outcome).toBe('ignored');
  });

  it('a renewal after a plan change grants the new plan’s credits, whatever line comes first', async () => {
    const { staffed, subscriptionId } = await subscribed(pro);
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: max.id }).expect(200);
    const renewal = stripe.renew(subscriptionId);
    const lines = renewal['lines'] as { data: Record<string, unknown>[] };
    const now = Math.floor(Date.now() / 1000);
    // Stripe lists a proration of the old plan before the new period's line.
    lines.data.unshift({
      id: `il_${unique()}`,
      object: 'line_item',
      pricing: { price_details: { price: pro.stripe_price_id } },
      parent: { type: 'subscription_item_details', subscription_item_details: { proration: true } },
      period: { start: now - 60, end: now },
    });
    expect((await deliver(stripe.event('invoice.paid', renewal))).body.outcome).toBe('accepted');
    const entry = await t.services.db.one(sql.type(z.object({ amount: z.number(), expires_at: z.string() }))`
      select amount, expires_at from credit_entries where once_key = ${`invoice:${renewal.id}`}`);
    const planPeriodEnd = (lines.data[1] as { period: { end: number } }).period.end;
    expect(entry.amount).toBe(5000);
    expect(Date.parse(entry.expires_at)).toBe(planPeriodEnd * 1000);
    expect((await pool(staffed.tenant.id)).balance).toBe(10_000);
  });

  it('free plans get theirs once per month; global admins can run it now', async () => {
    const staffed = await staffedTenant(t);
    const paid = await subscribed(pro);
    const once = await request(t.app)
      .post('/subscription/allocate-monthly-credits')
      .set(admin.auth)
      .send({ tenant_id: staffed.tenant.id })
      .expect(200);
    expect(once.body).toMatchObject({ tenants: 1, granted: 1, already_granted: 0, credits: 100, skipped: [] });
    expect(once.body.period).toBe(new Date().toISOString().slice(0, 7));
    const again = await request(t.app)
      .post('/subscription/allocate-monthly-credits')
      .set(admin.auth)
      .send({ tenant_id: staffed.tenant.id })
      .expect(200);
    expect(again.body).toMatchObject({ granted: 0, already_granted: 1, credits: 0 });
    expect((await pool(staffed.tenant.id)).balance).toBe(100);
    expect((await current(staffed.admin)).credits_granted_this_period).toBe(100);
    const skipped = await request(t.app)
      .post('/subscription/allocate-monthly-credits')
      .set(admin.auth)
      .send({ tenant_id: paid.staffed.tenant.id })
      .expect(200);
    expect(skipped.body.skipped).toEqual([
      { tenant_id: paid.staffed.tenant.id, reason: expect.stringContaining('paid plan') },
    ]);
    // All tenants at once, twice, concurrently: every free tenant once.
    const [first, second] = await Promise.all([
      request(t.app).post('/subscription/allocate-monthly-credits').set(admin.auth).expect(200),
      request(t.app).post('/subscription/allocate-monthly-credits').set(admin.auth).expect(200),
    ]);
    // Every free tenant but the one granted above, by one run or the other.
    expect(first.body.granted + second.body.granted).toBe(first.body.tenants - 1);
    const grants = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from credit_entries where once_key like 'plan:%'
      group by once_key order by count(*) desc limit 1`);
    expect(grants).toBe(1);
    expect((await pool(paid.staffed.tenant.id)).balance).toBe(1000);
    await request(t.app).post('/subscription/allocate-monthly-credits').set(staffed.admin.auth).expect(403);
    await request(t.app).post('/subscription/allocate-monthly-credits').expect(401);
    await request(t.app)
      .post('/subscription/allocate-monthly-credits')
      .set(admin.auth)
      .send({ tenant_id: crypto.randomUUID() })
      .expect(404);
    await request(t.app)
      .post('/subscription/allocate-monthly-credits')
      .set(admin.auth)
      .send({ tenant_id: 'nope' })
      .expect(422);
  });
});

describe('POST /subscription/cancel', () => {
  it('at the period’s end by default, resumable; now with immediately=true', async () => {
    const { staffed } = await subscribed(pro);
    await request(t.app).post('/subscription/cancel').set(staffed.editor.auth).expect(403);
    const later = await request(t.app).post('/subscription/cancel').set(staffed.admin.auth).expect(200);
    expect(later.body).toMatchObject({
      paid: true,
      status: 'active',
      cancel_at_period_end: true,
      plan: { id: pro.id },
    });
    const resumed = await request(t.app)
      .post('/subscription/upgrade')
      .set(staffed.admin.auth)
      .send({ plan_id: pro.id })
      .expect(200);
    expect(resumed.body).toMatchObject({ outcome: 'resumed', subscription: { cancel_at_period_end: false } });
    const now = await request(t.app)
      .post('/subscription/cancel')
      .query({ immediately: 'true' })
      .set(staffed.admin.auth)
      .expect(200);
    expect(now.body).toMatchObject({ paid: false, plan: { id: free.id }, status: 'canceled' });
    expect(now.body.canceled_at).not.toBeNull();
    await request(t.app).post('/subscription/cancel').set(staffed.admin.auth).expect(409);
    await request(t.app)
      .post('/subscription/cancel')
      .query({ immediately: 'maybe' })
      .set(staffed.admin.auth)
      .expect(422);
    // Credits already granted stay.
    expect((await pool(staffed.tenant.id)).balance).toBe(1000);
  });
});

describe('POST /subscription/portal', () => {
  it('answers a portal URL for a Stripe customer, uncached', async () => {
    const fresh = await staffedTenant(t);
    await request(t.app)
      .post('/subscription/portal')
      .set(fresh.admin.auth)
      .send({ return_url: 'https://shop.example/account' })
      .expect(409);
    const { staffed, session } = await subscribed(pro);
    const res = await request(t.app)
      .post('/subscription/portal')
      .set(staffed.admin.auth)
      .send({ return_url: 'https://shop.example/account' })
      .expect(200);
    expect(res.body.url).toMatch(/\/portal\//);
    expect(res.headers['cache-control']).toBe('no-store');
    const sent = stripe.requests.filter((entry) => entry.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(sent.body).toMatchObject({ customer: session['customer'], return_url: 'https://shop.example/account' });
    await request(t.app)
      .post('/subscription/portal')
      .set(staffed.admin.auth)
      .send({ return_url: 'https://evil.example/' })
      .expect(422);
    await request(t.app).post('/subscription/portal').set(staffed.admin.auth).send({}).expect(422);
    await request(t.app)
      .post('/subscription/portal')
      .set(staffed.author.auth)
      .send({ return_url: 'https://shop.example/account' })
      .expect(403);
  });
});

describe('subscription webhooks', () => {
  it('end in Stripe’s state whatever order, or however stale, they arrive in', async () => {
    const { staffed, subscriptionId } = await subscribed(pro);
    const live = stripe.subscriptions.get(subscriptionId)!;
    const snapshot = (status: string) => ({ ...live, status });
    const at = Math.floor(Date.now() / 1000);
    // Stripe has it past due; events carrying older states, in the same second, in any order, change nothing of that.
    live['status'] = 'past_due';
    const events = [
      stripe.event('customer.subscription.updated', snapshot('active'), at),
      stripe.event('customer.subscription.created', snapshot('incomplete'), at),
      stripe.event('customer.subscription.updated', snapshot('past_due'), at),
    ];
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
    ]) {
      for (const index of order) await deliver({ ...events[index]!, id: `evt_${unique()}` });
      expect(await current(staffed.admin)).toMatchObject({ status: 'past_due', paid: true, plan: { id: pro.id } });
    }
    // Concurrently too.
    live['status'] = 'active';
    await Promise.all(events.map((event) => deliver({ ...event, id: `evt_${unique()}` })));
    expect((await current(staffed.admin)).status).toBe('active');
    // Ended at Stripe: a late "active" does not bring it back.
    Object.assign(live, { status: 'canceled', canceled_at: at });
    await deliver(stripe.event('customer.subscription.updated', snapshot('active'), at + 1));
    expect(await current(staffed.admin)).toMatchObject({ paid: false, status: 'canceled', plan: { id: free.id } });
    // A new subscription of the same tenant replaces the ended one; news of the old one is then stale.
    const again = await startUpgrade(staffed, max);
    const session = stripe.pay(again.id);
    const next = stripe.subscriptions.get(session['subscription'] as string)!;
    expect((await deliver(stripe.event('checkout.session.completed', session))).body.outcome).toBe('accepted');
    expect((await deliver(stripe.event('customer.subscription.deleted', snapshot('canceled')))).body.outcome).toBe(
      'stale',
    );
    expect(await current(staffed.admin)).toMatchObject({ paid: true, status: 'active', plan: { id: max.id } });
    // A failed renewal: Stripe has it past due, and so do we; no plan change meanwhile.
    const failed = stripe.renew(next.id);
    next['status'] = 'past_due';
    expect((await deliver(stripe.event('invoice.payment_failed', { ...failed, status: 'open' }))).body.outcome).toBe(
      'accepted',
    );
    expect((await current(staffed.admin)).status).toBe('past_due');
    await request(t.app).post('/subscription/upgrade').set(staffed.admin.auth).send({ plan_id: pro.id }).expect(409);
  });

  it('asks Stripe again later when it cannot be reached, or a price has no plan yet', async () => {
    const { subscriptionId } = await subscribed(pro);
    stripe.failNext(500);
    const down = stripe.event('customer.subscription.updated', stripe.subscriptions.get(subscriptionId)!);
    await send(down).expect(502);
    // Not recorded as received: the redelivery is applied.
    expect((await deliver(down)).body.outcome).toBe('accepted');
    const renewal = stripe.renew(subscriptionId);
    const lines = renewal['lines'] as { data: { pricing: { price_details: { price: string } } }[] };
    lines.data[0]!.pricing.price_details.price = 'price_nobody';
    const unpriced = {
      ...renewal,
      parent: { type: 'subscription_details', subscription_details: { subscription: subscriptionId, metadata: {} } },
    };
    const refused = await send(stripe.event('invoice.paid', unpriced)).expect(409);
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('ignores subscriptions that are not ours', async () => {
    const foreign = {
      id: `sub_${unique()}`,
      object: 'subscription',
      customer: `cus_${unique()}`,
      status: 'active',
      metadata: {},
      items: { object: 'list', data: [] },
    };
    expect((await deliver(stripe.event('customer.subscription.updated', foreign))).body.outcome).toBe('ignored');
  });
});
