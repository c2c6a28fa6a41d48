// Global cost settings: the global price list (CRUD, bulk, public, in force),
// credits across tenants (overview, pools, sites, users), monthly limits,
// direct grants, and credits that expire — soonest first, once.
import request from 'supertest';
import { z } from 'zod';
import { expireDueCredits } from '../../../core/credits/expiry.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';
import { assignToSite, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let admin: Caller;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
});
afterAll(() => stopTestApp(t));

const base = '/admin/global-cost-settings';
const kind = () => `kind_${unique()}`;

const lotsOf = (accountOwner: { tenantId: string }) =>
  t.services.db.any(sql.type(z.object({ granted: z.number(), remaining: z.number() }))`
    select l.granted, l.remaining from credit_lots l join credit_accounts a on a.id = l.account_id
    where a.tenant_id = ${accountOwner.tenantId} and a.site_id is null order by l.expires_at`);

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe('the global price list', () => {
  it('creates, reads, changes and deletes a price, with Location', async () => {
    const k = kind();
    const created = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'second', credits_per_unit: 1.5, description: 'test' })
      .expect(201);
    const location = `${base}/${created.body.id}`;
    expect(location).toBe(location);
    expect(created.body).toMatchObject({ kind: k, unit: 'second', credits_per_unit: 1.5, active: true });
    const read = await request(t.app).get(location).set(admin.auth).expect(200);
    expect(read.body).toEqual(created.body);
    const changed = await request(t.app)
      .patch(location)
      .set(admin.auth)
      .send({ credits_per_unit: 2, description: 'changed' })
      .expect(200);
    expect(changed.body).toMatchObject({ credits_per_unit: 2, description: 'changed', kind: k });
    const listed = await request(t.app).get(`${base}/?kind=${k}`).set(admin.auth).expect(200);
    expect(listed.body.items).toEqual([changed.body]);
    await request(t.app).delete(location).set(admin.auth).expect(204);
    await request(t.app).get(location).set(admin.auth).expect(404);
    await request(t.app).delete(location).set(admin.auth).expect(404);
  });

  it('keeps one price per kind and unit, and one active price per kind (409)', async () => {
    const k = kind();
    await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'item', credits_per_unit: 1 })
      .expect(201);
    const same = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'item', credits_per_unit: 2, active: false })
      .expect(409);
    expect(same.body.detail).toMatch(/exists already/);
    const secondActive = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'second', credits_per_unit: 2 })
      .expect(409);
    expect(secondActive.body.detail).toMatch(/active price already/);
    const inactive = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'second', credits_per_unit: 2, active: false })
      .expect(201);
    await request(t.app).patch(`${base}/${inactive.body.id}`).set(admin.auth).send({ active: true }).expect(409);
  });

  it('answers 422 for bad bodies, 401 without a token, 403 to tenant admins and 404 for unknown ids', async () => {
    const staffed = await staffedTenant(t);
    for (const body of [
      { kind: 'Bad Kind', unit: 'item', credits_per_unit: 1 },
      { kind: 'fine', unit: 'lightyear', credits_per_unit: 1 },
      { kind: 'fine', unit: 'item', credits_per_unit: -1 },
      { kind: 'fine', unit: 'item', credits_per_unit: 1, extra: true },
    ])
      await request(t.app).post(`${base}/`).set(admin.auth).send(body).expect(422);
    await request(t.app).get(`${base}/`).expect(401);
    await request(t.app).get(`${base}/`).set(staffed.admin.auth).expect(403);
    await request(t.app).get(`${base}/${crypto.randomUUID()}`).set(admin.auth).expect(404);
    await request(t.app).get(`${base}/not-a-uuid`).set(admin.auth).expect(422);
  });

  it('a deactivated kind leaves the prices in force, site overrides included, and comes back when reactivated', async () => {
    const staffed = await staffedTenant(t);
    const k = kind();
    const price = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'item', credits_per_unit: 4, tenant_minimum: 2 })
      .expect(201);
    await request(t.app)
      .put(`/${staffed.site.slug}/transactions/cost-settings`)
      .set(staffed.admin.auth)
      .send({ settings: [{ kind: k, price: 3 }] })
      .expect(200);
    const current = await request(t.app)
      .get(`${base}/readonly/current?site_id=${staffed.site.id}`)
      .set(admin.auth)
      .expect(200);
    expect(current.body.items).toContainEqual(
      expect.objectContaining({ kind: k, credits_per_unit: 3, source: 'site' }),
    );
    const global = await request(t.app).get(`${base}/readonly/current`).set(admin.auth).expect(200);
    expect(global.body).toMatchObject({ site_id: null });
    expect(global.body.items).toContainEqual(
      expect.objectContaining({ kind: k, credits_per_unit: 4, source: 'global' }),
    );

    await request(t.app).patch(`${base}/${price.body.id}`).set(admin.auth).send({ active: false }).expect(200);
    const site = await request(t.app)
      .get(`/${staffed.site.slug}/transactions/cost-settings`)
      .set(staffed.admin.auth)
      .expect(200);
    expect(site.body.items.map((item: { kind: string }) => item.kind)).not.toContain(k);
    const offered = await request(t.app).get(`${base}/public`).set(staffed.author.auth).expect(200);
    expect(offered.body.items.map((item: { kind: string }) => item.kind)).not.toContain(k);
    await request(t.app)
      .post(`/${staffed.site.slug}/transactions/credits/check`)
      .set(staffed.admin.auth)
      .send({ kind: k, units: 1 })
      .expect(422);

    await request(t.app).patch(`${base}/${price.body.id}`).set(admin.auth).send({ active: true }).expect(200);
    const back = await request(t.app).get(`${base}/public`).set(staffed.author.auth).expect(200);
    expect(back.body.items).toContainEqual({ kind: k, unit: 'item', credits_per_unit: 4, description: '' });
  });

  it('bulk: reports every problem at once and changes nothing; then moves a kind’s active price to another unit in one change', async () => {
    const k = kind();
    const first = await request(t.app)
      .post(`${base}/`)
      .set(admin.auth)
      .send({ kind: k, unit: 'item', credits_per_unit: 1 })
      .expect(201);
    const bad = await request(t.app)
      .put(`${base}/bulk`)
      .set(admin.auth)
      .send({
        settings: [
          { kind: k, unit: 'second', credits_per_unit: 2 },
          { kind: 'other_one', unit: 'item', credits_per_unit: 1 },
          { kind: 'other_one', unit: 'item', credits_per_unit: 5 },
        ],
      })
      .expect(422);
    expect(bad.body.errors).toEqual([
      { path: 'body.settings.2', message: expect.stringMatching(/repeats other_one\/item/) },
      { path: 'body.settings.0', message: expect.stringMatching(/2 active prices/) },
    ]);
    const unchanged = await request(t.app).get(`${base}/?kind=other_one`).set(admin.auth).expect(200);
    expect(unchanged.body.items).toEqual([]);

    const moved = await request(t.app)
      .put(`${base}/bulk`)
      .set(admin.auth)
      .send({
        settings: [
          { kind: k, unit: 'item', credits_per_unit: 1, active: false },
          { kind: k, unit: 'second', credits_per_unit: 0.5 },
        ],
      })
      .expect(200);
    const mine = moved.body.items.filter((item: { kind: string }) => item.kind === k);
    expect(mine).toEqual([
      expect.objectContaining({ id: first.body.id, unit: 'item', active: false }),
      expect.objectContaining({ unit: 'second', credits_per_unit: 0.5, active: true }),
    ]);
    await request(t.app).put(`${base}/bulk`).set(admin.auth).send({ settings: [] }).expect(422);
  });
});

describe('credits across tenants', () => {
  async function fund(staffed: Staffed, amount: number, expiresAt?: string) {
    await request(t.app)
      .post(`${base}/tenant-credits/allocate`)
      .set(admin.auth)
      .send({ tenant_id: staffed.tenant.id, amount, ...(expiresAt ? { expires_at: expiresAt } : {}) })
      .expect(201);
  }

  it('lists every tenant’s pool, sorted and paged by balance', async () => {
    const tenants = [await staffedTenant(t), await staffedTenant(t), await staffedTenant(t)];
    await fund(tenants[0]!, 900_000_003);
    await fund(tenants[1]!, 900_000_001);
    await fund(tenants[2]!, 900_000_002);
    const first = await request(t.app)
      .get(`${base}/tenant-credits?sort=balance&order=desc&limit=2`)
      .set(admin.auth)
      .expect(200);
    expect(first.body.items.map((row: { id: string }) => row.id)).toEqual([
      tenants[0]!.tenant.id,
      tenants[2]!.tenant.id,
    ]);
    expect(first.body.items[0]).toMatchObject({
      balance: 900_000_003,
      available: 900_000_003,
      monthly_limit: null,
    });
    const second = await request(t.app)
      .get(`${base}/tenant-credits?sort=balance&order=desc&limit=2&cursor=${first.body.next_cursor}`)
      .set(admin.auth)
      .expect(200);
    expect(second.body.items[0].id).toBe(tenants[1]!.tenant.id);
    await request(t.app).get(`${base}/tenant-credits?sort=wealth`).set(admin.auth).expect(422);
    await request(t.app).get(`${base}/tenant-credits?cursor=garbage`).set(admin.auth).expect(400);
  });

  it('sets a monthly limit that tenant admins’ allocations then meet (402), and lifts it', async () => {
    const staffed = await staffedTenant(t);
    await fund(staffed, 100);
    const limited = await request(t.app)
      .patch(`${base}/tenant-credits/${staffed.tenant.id}/monthly-limit`)
      .set(admin.auth)
      .send({ monthly_limit: 30 })
      .expect(200);
    expect(limited.body).toMatchObject({ monthly_limit: 30, remaining_this_month: 30 });
    const allocate = (amount: number) =>
      request(t.app)
        .post(`/${staffed.site.slug}/transactions/credits/allocate-from-tenant`)
        .set(staffed.admin.auth)
        .send({ user_id: staffed.editor.user.id, amount });
    await allocate(20).expect(201);
    const over = await allocate(20).expect(402);
    expect(over.body).toMatchObject({ monthly_limit: 30, allocated_this_month: 20 });
    await request(t.app)
      .patch(`${base}/tenant-credits/${staffed.tenant.id}/monthly-limit`)
      .set(admin.auth)
      .send({ monthly_limit: null })
      .expect(200);
    await allocate(20).expect(201);
    await request(t.app)
      .patch(`${base}/tenant-credits/${crypto.randomUUID()}/monthly-limit`)
      .set(admin.auth)
      .send({ monthly_limit: 1 })
      .expect(404);
    await request(t.app)
      .patch(`${base}/tenant-credits/${staffed.tenant.id}/monthly-limit`)
      .set(admin.auth)
      .send({ monthly_limit: -1 })
      .expect(422);
  });

  it('grants to a user on a site directly, shows the site’s users and every user’s balances', async () => {
    const staffed = await staffedTenant(t);
    await assignToSite(t, staffed.site, staffed.author.user.id);
    const outsider = await staffedTenant(t);
    const granted = await request(t.app)
      .post(`${base}/user-credits/allocate`)
      .set(admin.auth)
      .send({ site_id: staffed.site.id, user_id: staffed.author.user.id, amount: 70, reason: 'contest prize' })
      .expect(201);
    expect(granted.body).toEqual({ balance: 70, reserved: 0, available: 70 });
    await request(t.app)
      .post(`${base}/user-credits/allocate`)
      .set(admin.auth)
      .send({ site_id: staffed.site.id, user_id: outsider.author.user.id, amount: 5 })
      .expect(404);
    await request(t.app)
      .post(`${base}/user-credits/allocate`)
      .set(admin.auth)
      .send({ site_id: crypto.randomUUID(), user_id: staffed.author.user.id, amount: 5 })
      .expect(404);
    await request(t.app)
      .post(`${base}/user-credits/allocate`)
      .set(admin.auth)
      .send({
        site_id: staffed.site.id,
        user_id: staffed.author.user.id,
        amount: 5,
        expires_at: '2001-01-01T00:00:00Z',
      })
      .expect(422);

    const site = await request(t.app).get(`${base}/sites/${staffed.site.id}/credits`).set(admin.auth).expect(200);
    expect(site.body.users).toEqual([
      expect.objectContaining({ user_id: staffed.author.user.id, balance: 70, available: 70, spent: 0 }),
    ]);
    expect(site.body.totals).toEqual({ balance: 70, reserved: 0, spent: 0 });
    await request(t.app).get(`${base}/sites/${crypto.randomUUID()}/credits`).set(admin.auth).expect(404);

    const users = await request(t.app)
      .get(`${base}/users/credits?email=${encodeURIComponent(staffed.author.user.email)}`)
      .set(admin.auth)
      .expect(200);
    expect(users.body.items).toEqual([
      expect.objectContaining({
        id: staffed.author.user.id,
        balance: 70,
        sites: [{ site_id: staffed.site.id, tenant_id: staffed.tenant.id, balance: 70, reserved: 0 }],
      }),
    ]);
    const entries = await request(t.app)
      .get(`/${staffed.site.slug}/transactions/`)
      .set(staffed.author.auth)
      .expect(200);
    expect(entries.body.items).toEqual([
      expect.objectContaining({ kind: 'grant', amount: 70, actor_id: admin.user.id, reason: 'contest prize' }),
    ]);
  });

  it('sums the period’s flows in total, per tenant and per kind', async () => {
    const staffed = await staffedTenant(t);
    const before = await request(t.app).get(`${base}/credit-overview`).set(admin.auth).expect(200);
    await fund(staffed, 500);
    const after = await request(t.app).get(`${base}/credit-overview?top=100`).set(admin.auth).expect(200);
    expect(after.body.totals.granted - before.body.totals.granted).toBe(500);
    expect(after.body.top_tenants).toContainEqual(
      expect.objectContaining({ tenant_id: staffed.tenant.id, granted: 500, spent: 0 }),
    );
    const past = await request(t.app)
      .get(`${base}/credit-overview?from=2001-01-01T00:00:00Z&to=2001-02-01T00:00:00Z`)
      .set(admin.auth)
      .expect(200);
    expect(past.body.totals).toMatchObject({ granted: 0, spent: 0, bought: 0, expired: 0 });
    await request(t.app).get(`${base}/credit-overview?from=yesterday`).set(admin.auth).expect(422);
  });
});

describe('credits that expire', () => {
  it('spends the soonest-expiring credits first, expires the unspent rest once, and never what never expires', async () => {
    const staffed = await staffedTenant(t);
    const owner = { tenantId: staffed.tenant.id };
    const grant = (amount: number, expiresAt?: string) =>
      request(t.app)
        .post(`${base}/tenant-credits/allocate`)
        .set(admin.auth)
        .send({ tenant_id: staffed.tenant.id, amount, ...(expiresAt ? { expires_at: expiresAt } : {}) })
        .expect(201);
    await grant(100); // never expires
    await grant(50, inDays(30));
    await grant(40, inDays(10));
    // Moving 60 out of the pool takes the 40 expiring in 10 days, then 20 of the 50.
    await request(t.app)
      .post(`/${staffed.site.slug}/transactions/credits/allocate-from-tenant`)
      .set(staffed.admin.auth)
      .send({ user_id: staffed.editor.user.id, amount: 60 })
      .expect(201);
    expect(await lotsOf(owner)).toEqual([
      { granted: 40, remaining: 0 },
      { granted: 50, remaining: 30 },
    ]);

    // Both dates pass.
    await t.services.db.query(sql.typeAlias('void')`
      update credit_lots set expires_at = now() - interval '1 minute'
      where account_id = (select id from credit_accounts where tenant_id = ${staffed.tenant.id} and site_id is null)`);
    const [first, second] = await Promise.all([expireDueCredits(t.services.db), expireDueCredits(t.services.db)]);
    expect(first.credits + second.credits).toBe(30);
    const again = await expireDueCredits(t.services.db);
    expect(again.credits).toBe(0);
    const pool = await request(t.app).get(`${base}/tenant-credits/${staffed.tenant.id}`).set(admin.auth).expect(200);
    expect(pool.body.pool).toEqual({ balance: 100, reserved: 0, available: 100 });
    const overview = await request(t.app).get(`${base}/credit-overview?top=100`).set(admin.auth).expect(200);
    expect(overview.body.top_tenants).toContainEqual(
      expect.objectContaining({ tenant_id: staffed.tenant.id, expired: 30 }),
    );
    await expectLedgerHolds(t);
  });
});
