// The Transactions group on the credits ledger: grants, allocation from the
// tenant pool, balances, prices, usage; idempotency and concurrency.
import request from 'supertest';
import { applyEntry, userAccount } from '../../../core/credits/accounts.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';
import { staffedTenant as staffTenant, globalAdmin, type Staffed } from '../../helpers/identity.ts';
import { assignToSite, type Caller } from '../../helpers/factories.ts';

let t: TestApp;
let admin: Caller;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
});
afterAll(() => stopTestApp(t));

/** A tenant whose author is assigned to the site too, so every role can reach it. */
async function staffedTenant(t: TestApp): Promise<Staffed> {
  const staffed = await staffTenant(t);
  await assignToSite(t, staffed.site, staffed.author.user.id);
  return staffed;
}

const base = (staffed: Staffed) => `/${staffed.site.slug}/transactions`;

async function fundPool(staffed: Staffed, amount: number) {
  await request(t.app)
    .post('/admin/global-cost-settings/tenant-credits/allocate')
    .set(admin.auth)
    .send({ tenant_id: staffed.tenant.id, amount })
    .expect(201);
}

describe('POST .../credits/add (global admins)', () => {
  it('grants credits to a member, recorded in the ledger', async () => {
    const staffed = await staffedTenant(t);
    const res = await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.author.user.id, amount: 40, reason: 'welcome' })
      .expect(201);
    expect(res.body).toEqual({ balance: 40, reserved: 0, available: 40 });
    const list = await request(t.app)
      .get(`${base(staffed)}/`)
      .set(staffed.author.auth)
      .expect(200);
    expect(list.body.items).toEqual([
      expect.objectContaining({
        kind: 'grant',
        amount: 40,
        reserved_change: 0,
        user_id: staffed.author.user.id,
        actor_id: admin.user.id,
        reason: 'welcome',
      }),
    ]);
    await expectLedgerHolds(t);
  });

  it('refuses a user outside the tenant (404), a zero amount (422), and tenant admins (403)', async () => {
    const staffed = await staffedTenant(t);
    const outsider = await staffedTenant(t);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: outsider.author.user.id, amount: 5 })
      .expect(404);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.author.user.id, amount: 0 })
      .expect(422);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.author.user.id, amount: 5 })
      .expect(403);
  });

  it('replays the first answer for the same Idempotency-Key, once only in the ledger', async () => {
    const staffed = await staffedTenant(t);
    const send = (amount: number) =>
      request(t.app)
        .post(`${base(staffed)}/credits/add`)
        .set(admin.auth)
        .set('Idempotency-Key', 'grant-1')
        .send({ user_id: staffed.editor.user.id, amount });
    const first = await send(25).expect(201);
    const again = await send(25).expect(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const reused = await send(26).expect(422);
    expect(reused.body.type).toBe('/problems/idempotency-key-reused');
    const balance = await request(t.app)
      .get(`${base(staffed)}/credits/balance?user_id=${staffed.editor.user.id}`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(balance.body.balance).toBe(25);
  });
});

describe('POST .../credits/allocate-from-tenant (tenant admins)', () => {
  it('moves credits from the pool to a member', async () => {
    const staffed = await staffedTenant(t);
    await fundPool(staffed, 100);
    const res = await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 30 })
      .expect(201);
    expect(res.body).toEqual({
      user: { balance: 30, reserved: 0, available: 30 },
      tenant_pool: { balance: 70, reserved: 0, available: 70 },
    });
    await expectLedgerHolds(t);
  });

  it('is a 402 with the balance and the price when the pool cannot cover it, and changes nothing', async () => {
    const staffed = await staffedTenant(t);
    await fundPool(staffed, 10);
    const res = await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 11 })
      .expect(402);
    expect(res.body).toMatchObject({ type: '/problems/insufficient-credits', available: 10, required: 11 });
    const pool = await request(t.app)
      .get(`/admin/global-cost-settings/tenant-credits/${staffed.tenant.id}`)
      .set(admin.auth)
      .expect(200);
    expect(pool.body.pool).toEqual({ balance: 10, reserved: 0, available: 10 });
  });

  it('stops at the tenant’s monthly limit', async () => {
    const staffed = await staffedTenant(t);
    await fundPool(staffed, 1000);
    await request(t.app)
      .patch(`/admin/tenants/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ monthly_credit_limit: 50 })
      .expect(200);
    await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 40 })
      .expect(201);
    const res = await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 11 })
      .expect(402);
    expect(res.body).toMatchObject({
      type: '/problems/monthly-limit-exceeded',
      monthly_limit: 50,
      allocated_this_month: 40,
      requested: 11,
    });
    await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 10 })
      .expect(201);
  });

  it('lets exactly as many of 20 concurrent allocations through as the pool covers', async () => {
    const staffed = await staffedTenant(t);
    await fundPool(staffed, 95);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(t.app)
          .post(`${base(staffed)}/credits/allocate-from-tenant`)
          .set(staffed.admin.auth)
          .send({ user_id: staffed.editor.user.id, amount: 10 }),
      ),
    );
    const statuses = results.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(9);
    expect(statuses.filter((status) => status === 402)).toHaveLength(11);
    const pool = await request(t.app)
      .get(`/admin/global-cost-settings/tenant-credits/${staffed.tenant.id}`)
      .set(admin.auth)
      .expect(200);
    expect(pool.body.pool.balance).toBe(5);
    const mine = await request(t.app)
      .get(`${base(staffed)}/credits/balance`)
      .set(staffed.editor.auth)
      .expect(200);
    expect(mine.body.balance).toBe(90);
    await expectLedgerHolds(t);
  });

  it('is refused to editors (403) and to another tenant’s admin (404)', async () => {
    const staffed = await staffedTenant(t);
    const other = await staffedTenant(t);
    await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(staffed.editor.auth)
      .send({ user_id: staffed.editor.user.id, amount: 1 })
      .expect(403);
    await request(t.app)
      .post(`${base(staffed)}/credits/allocate-from-tenant`)
      .set(other.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 1 })
      .expect(404);
  });
});

describe('balances', () => {
  it('shows your own, and others’ only to tenant admins', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 7 })
      .expect(201);
    expect(
      (
        await request(t.app)
          .get(`${base(staffed)}/credits/balance`)
          .set(staffed.editor.auth)
          .expect(200)
      ).body,
    ).toEqual({
      user_id: staffed.editor.user.id,
      balance: 7,
      reserved: 0,
      available: 7,
    });
    await request(t.app)
      .get(`${base(staffed)}/credits/balance?user_id=${staffed.editor.user.id}`)
      .set(staffed.author.auth)
      .expect(403);
    await request(t.app)
      .get(`${base(staffed)}/credits/balance?user_id=not-a-uuid`)
      .set(staffed.admin.auth)
      .expect(422);
  });

  it('adds the tenant context, with the pool for admins only', async () => {
    const staffed = await staffedTenant(t);
    await fundPool(staffed, 60);
    const asAdmin = await request(t.app)
      .get(`${base(staffed)}/credits/balance-with-tenant`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(asAdmin.body.tenant).toMatchObject({
      id: staffed.tenant.id,
      monthly_limit: null,
      allocated_this_month: 0,
      pool: { balance: 60 },
    });
    const asEditor = await request(t.app)
      .get(`${base(staffed)}/credits/balance-with-tenant`)
      .set(staffed.editor.auth)
      .expect(200);
    expect(asEditor.body.tenant.pool).toBeNull();
  });

  it('lists the site’s users with their credits (admins)', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 3 })
      .expect(201);
    const res = await request(t.app)
      .get(`${base(staffed)}/credits/site-users`)
      .set(staffed.admin.auth)
      .expect(200);
    const byUser = Object.fromEntries(
      res.body.items.map((item: { user_id: string; balance: number }) => [item.user_id, item.balance]),
    );
    expect(byUser).toEqual({ [staffed.editor.user.id]: 3, [staffed.author.user.id]: 0, [staffed.admin.user.id]: 0 });
    await request(t.app)
      .get(`${base(staffed)}/credits/site-users`)
      .set(staffed.editor.auth)
      .expect(403);
  });
});

describe('prices', () => {
  it('shows the global prices and lets tenant admins override and reset them per site', async () => {
    const staffed = await staffedTenant(t);
    const before = await request(t.app)
      .get(`${base(staffed)}/cost-settings`)
      .set(staffed.author.auth)
      .expect(200);
    expect(before.body.items).toContainEqual({
      kind: 'speech',
      unit: 'second',
      price: 1,
      description: expect.any(String),
      source: 'global',
      tenant_minimum: 1,
    });
    const set = await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(staffed.admin.auth)
      .send({ settings: [{ kind: 'speech', price: 1.5 }] })
      .expect(200);
    expect(set.body.items).toContainEqual(expect.objectContaining({ kind: 'speech', price: 1.5, source: 'site' }));
    // Another site keeps the global price.
    const other = await staffedTenant(t);
    expect(
      (
        await request(t.app)
          .get(`${base(other)}/cost-settings`)
          .set(other.admin.auth)
          .expect(200)
      ).body.items,
    ).toContainEqual(expect.objectContaining({ kind: 'speech', price: 1, source: 'global' }));
    const reset = await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(staffed.admin.auth)
      .send({ settings: [{ kind: 'speech', price: null }] })
      .expect(200);
    expect(reset.body.items).toContainEqual(expect.objectContaining({ kind: 'speech', price: 1, source: 'global' }));
  });

  it('refuses unknown kinds (422), negative prices (422) and editors (403)', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(staffed.admin.auth)
      .send({ settings: [{ kind: 'teleport', price: 1 }] })
      .expect(422);
    await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(staffed.admin.auth)
      .send({ settings: [{ kind: 'speech', price: -1 }] })
      .expect(422);
    await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(staffed.editor.auth)
      .send({ settings: [{ kind: 'speech', price: 1 }] })
      .expect(403);
  });

  it('quotes a job and says whether you can afford it', async () => {
    const staffed = await staffedTenant(t);
    // Below the floor: a global admin's price.
    await request(t.app)
      .put(`${base(staffed)}/cost-settings`)
      .set(admin.auth)
      .send({ settings: [{ kind: 'speech', price: 0.3 }] })
      .expect(200);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 10 })
      .expect(201);
    const cheap = await request(t.app)
      .post(`${base(staffed)}/credits/check`)
      .set(staffed.editor.auth)
      .send({ kind: 'speech', units: 30 })
      .expect(200);
    expect(cheap.body).toEqual({
      affordable: true,
      available: 10,
      quote: { kind: 'speech', unit: 'second', unit_price: 0.3, units: 30, cost: 9 },
    });
    // 31 × 0.3 = 9.3 credits, rounded up to 10: still affordable with 10.
    const rounded = await request(t.app)
      .post(`${base(staffed)}/credits/check`)
      .set(staffed.editor.auth)
      .send({ kind: 'speech', units: 31 })
      .expect(200);
    expect(rounded.body).toMatchObject({ affordable: true, quote: { cost: 10 } });
    const dear = await request(t.app)
      .post(`${base(staffed)}/credits/check`)
      .set(staffed.editor.auth)
      .send({ kind: 'speech', units: 34 })
      .expect(200);
    expect(dear.body).toMatchObject({ affordable: false, quote: { cost: 11 } });
    await request(t.app)
      .post(`${base(staffed)}/credits/check`)
      .set(staffed.editor.auth)
      .send({ kind: 'speech', units: -1 })
      .expect(422);
  });
});

describe('usage and statistics', () => {
  async function spend(staffed: Staffed, userId: string, amount: number, operation: string) {
    const account = await userAccount(t.services.db, staffed.site, userId);
    await applyEntry(t.services.db, {
      accountId: account,
      tenantId: staffed.tenant.id,
      siteId: staffed.site.id,
      userId,
      kind: 'debit',
      amount: -amount,
      operation,
    });
  }

  it('sums spending by kind, user and day, for the month asked', async () => {
    const staffed = await staffedTenant(t);
    for (const caller of [staffed.editor, staffed.admin]) {
      await request(t.app)
        .post(`${base(staffed)}/credits/add`)
        .set(admin.auth)
        .send({ user_id: caller.user.id, amount: 100 })
        .expect(201);
    }
    await spend(staffed, staffed.editor.user.id, 12, 'speech');
    await spend(staffed, staffed.editor.user.id, 5, 'image');
    await spend(staffed, staffed.admin.user.id, 20, 'speech');
    const today = new Date().toISOString().slice(0, 10);
    const all = await request(t.app)
      .get(`${base(staffed)}/monthly-usage`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(all.body).toEqual({
      month: today.slice(0, 7),
      total: 37,
      by_kind: { image: 5, speech: 32 },
      by_user: { [staffed.editor.user.id]: 17, [staffed.admin.user.id]: 20 },
      by_day: { [today]: 37 },
    });
    const mine = await request(t.app)
      .get(`${base(staffed)}/monthly-usage`)
      .set(staffed.editor.auth)
      .expect(200);
    expect(mine.body.total).toBe(17);
    const empty = await request(t.app)
      .get(`${base(staffed)}/monthly-usage?month=2020-01`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(empty.body.total).toBe(0);
    await request(t.app)
      .get(`${base(staffed)}/monthly-usage?month=2020-13`)
      .set(staffed.admin.auth)
      .expect(422);
  });

  it('takes the months 0001-01 to 9999-12 and refuses the year 0000 with 422', async () => {
    const staffed = await staffedTenant(t);
    const usage = (month: string) =>
      request(t.app)
        .get(`${base(staffed)}/monthly-usage?month=${month}`)
        .set(staffed.admin.auth);
    const refused = await usage('0000-01').expect(422);
    expect(refused.body.errors).toEqual([{ path: 'query.month', message: expect.any(String) }]);
    expect((await usage('0001-01').expect(200)).body).toMatchObject({ month: '0001-01', total: 0 });
    expect((await usage('9999-12').expect(200)).body).toMatchObject({ month: '9999-12', total: 0 });
  });

  it('totals entries per kind and what the accounts hold', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .post(`${base(staffed)}/credits/add`)
      .set(admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 50 })
      .expect(201);
    await spend(staffed, staffed.editor.user.id, 8, 'text');
    const res = await request(t.app)
      .get(`${base(staffed)}/stats`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(res.body).toEqual({
      by_kind: { debit: { entries: 1, amount: -8 }, grant: { entries: 1, amount: 50 } },
      accounts: 1,
      balance: 42,
      reserved: 0,
      available: 42,
    });
  });
});

describe('GET .../transactions/', () => {
  it('shows others’ entries to admins only, filters by user and kind, and pages', async () => {
    const staffed = await staffedTenant(t);
    for (const caller of [staffed.editor, staffed.author, staffed.editor]) {
      await request(t.app)
        .post(`${base(staffed)}/credits/add`)
        .set(admin.auth)
        .send({ user_id: caller.user.id, amount: 1 })
        .expect(201);
    }
    expect(
      (
        await request(t.app)
          .get(`${base(staffed)}/`)
          .set(staffed.admin.auth)
          .expect(200)
      ).body.items,
    ).toHaveLength(3);
    expect(
      (
        await request(t.app)
          .get(`${base(staffed)}/`)
          .set(staffed.editor.auth)
          .expect(200)
      ).body.items,
    ).toHaveLength(2);
    await request(t.app)
      .get(`${base(staffed)}/?user_id=${staffed.editor.user.id}`)
      .set(staffed.author.auth)
      .expect(403);
    expect(
      (
        await request(t.app)
          .get(`${base(staffed)}/?user_id=${staffed.author.user.id}&kind=grant`)
          .set(staffed.admin.auth)
          .expect(200)
      ).body.items,
    ).toHaveLength(1);
    const first = await request(t.app)
      .get(`${base(staffed)}/?limit=2&include_total=true`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(first.body).toMatchObject({ total: 3, next_cursor: expect.any(String) });
    const second = await request(t.app)
      .get(`${base(staffed)}/?limit=2&cursor=${first.body.next_cursor}`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(second.body).toMatchObject({ items: [expect.any(Object)], next_cursor: null });
    await request(t.app)
      .get(`${base(staffed)}/?kind=gift`)
      .set(staffed.admin.auth)
      .expect(422);
  });
});

describe('tenant pools (global admins)', () => {
  it('adds to a pool and shows it; unknown tenants are 404', async () => {
    const staffed = await staffedTenant(t);
    const res = await request(t.app)
      .post('/admin/global-cost-settings/tenant-credits/allocate')
      .set(admin.auth)
      .send({ tenant_id: staffed.tenant.id, amount: 500, reason: 'launch' })
      .expect(201);
    expect(res.body).toEqual({
      tenant_id: staffed.tenant.id,
      pool: { balance: 500, reserved: 0, available: 500 },
      monthly_limit: null,
      allocated_this_month: 0,
      remaining_this_month: null,
    });
    await request(t.app)
      .post('/admin/global-cost-settings/tenant-credits/allocate')
      .set(admin.auth)
      .send({ tenant_id: '00000000-0000-4000-8000-000000000000', amount: 5 })
      .expect(404);
    await request(t.app)
      .get('/admin/global-cost-settings/tenant-credits/00000000-0000-4000-8000-000000000000')
      .set(admin.auth)
      .expect(404);
    await request(t.app)
      .post('/admin/global-cost-settings/tenant-credits/allocate')
      .set(staffed.admin.auth)
      .send({ tenant_id: staffed.tenant.id, amount: 5 })
      .expect(403);
    await request(t.app)
      .post('/admin/global-cost-settings/tenant-credits/allocate')
      .set(admin.auth)
      .send({ tenant_id: staffed.tenant.id, amount: -5 })
      .expect(422);
  });
});
