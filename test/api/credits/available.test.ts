// Which balance pays, said before and after: GET …/credits/available answers
// the balance that would pay for the caller's jobs on the site and how it is
// funded, for users, service accounts and API keys (issue 40 item 4); and a
// 402 names the balance that was short, so an editor refused while her
// tenant holds 5,000 learns it was her own credits and who can add some.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { bearer, globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';
import { giveCredits } from '../../helpers/jobs.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const available = (staffed: Staffed) => `/${staffed.site.slug}/transactions/credits/available`;

// 58 characters: a speech estimate of 6 seconds, 6 credits at the default price.
const sentence = 'The quick brown fox jumps over the lazy dog near the river.';

describe('GET /{site_identifier}/transactions/credits/available', () => {
  it('answers a member’s own credits on the site, and how a tenant admin funds them', async () => {
    const staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 5_000);
    await giveCredits(t, staffed.site, 40, staffed.editor.user.id);
    const res = await request(t.app).get(available(staffed)).set(staffed.editor.auth).expect(200);
    expect(res.body).toEqual({
      balance: 'user',
      site_id: staffed.site.id,
      user_id: staffed.editor.user.id,
      tenant_id: staffed.tenant.id,
      available: 40,
      reserved: 0,
      total: 40,
      test_mode: false,
      description: expect.stringContaining('your own credits'),
      funding: {
        description: expect.stringContaining('never the tenant’s pool'),
        grants: expect.arrayContaining([
          { endpoint: 'POST /{site_identifier}/transactions/credits/allocate-from-tenant', who: 'tenant admins' },
        ]),
      },
    });
    // A tenant admin's jobs are paid from her own credits too, not the pool she administers.
    const admin = await request(t.app).get(available(staffed)).set(staffed.admin.auth).expect(200);
    expect(admin.body).toMatchObject({ balance: 'user', user_id: staffed.admin.user.id, available: 0 });
  });

  it('answers the tenant’s pool to a service account, and to its API key', async () => {
    const staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 5_000);
    const bot = await serviceAccount(t, staffed.tenant, ['sites:read', 'jobs:read'], staffed.admin);
    const res = await request(t.app).get(available(staffed)).set(bot.auth).expect(200);
    expect(res.body).toMatchObject({
      balance: 'tenant',
      user_id: null,
      tenant_id: staffed.tenant.id,
      available: 5_000,
      total: 5_000,
      test_mode: false,
      funding: {
        grants: expect.arrayContaining([
          { endpoint: 'POST /admin/global-cost-settings/tenant-credits/allocate', who: 'global admins' },
        ]),
      },
    });
    const key = await request(t.app)
      .post(`/api/tenants/${staffed.tenant.id}/api-keys`)
      .set(staffed.admin.auth)
      .send({ name: 'app', service_account_id: bot.account.id, scopes: ['sites:read', 'jobs:read'] })
      .expect(201);
    const byKey = await request(t.app).get(available(staffed)).set(bearer(key.body.key)).expect(200);
    expect(byKey.body).toMatchObject({ balance: 'tenant', available: 5_000 });
  });

  it('answers a member’s API key with the member’s own credits', async () => {
    const staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 7, staffed.editor.user.id);
    const key = await request(t.app)
      .post(`/api/tenants/${staffed.tenant.id}/api-keys`)
      .set(staffed.admin.auth)
      .send({ name: 'editor app', user_id: staffed.editor.user.id, scopes: ['sites:read', 'jobs:read'] })
      .expect(201);
    const res = await request(t.app).get(available(staffed)).set(bearer(key.body.key)).expect(200);
    expect(res.body).toMatchObject({ balance: 'user', user_id: staffed.editor.user.id, available: 7 });
  });

  it('says jobs are free in test mode', async () => {
    const staffed = await staffedTenant(t);
    const bot = await serviceAccount(t, staffed.tenant, ['sites:read', 'jobs:read'], staffed.admin, {
      test_mode: true,
    });
    const res = await request(t.app).get(available(staffed)).set(bot.auth).expect(200);
    expect(res.body).toMatchObject({ balance: 'tenant', test_mode: true, available: 0 });
    expect(res.body.description).toMatch(/no charge/);
  });

  it('refuses without a token (401), a service account without jobs:read (403), another tenant’s site (404)', async () => {
    const staffed = await staffedTenant(t);
    const other = await staffedTenant(t);
    await request(t.app).get(available(staffed)).expect(401);
    const bot = await serviceAccount(t, staffed.tenant, ['sites:read'], staffed.admin);
    const refused = await request(t.app).get(available(staffed)).set(bot.auth).expect(403);
    expect(refused.body.detail).toMatch(/jobs:read/);
    await request(t.app).get(available(staffed)).set(other.admin.auth).expect(404);
    // An author not assigned to the site does not reach it.
    await request(t.app).get(available(staffed)).set(staffed.author.auth).expect(404);
    // A global admin reaches every site, and pays from her own credits there too.
    const admin = await globalAdmin(t);
    const res = await request(t.app).get(available(staffed)).set(admin.auth).expect(200);
    expect(res.body).toMatchObject({ balance: 'user', user_id: admin.user.id });
  });
});

describe('402 insufficient credits', () => {
  it('tells an editor with no credits of her own, while her tenant holds 5,000, that her own balance was short and how it is funded', async () => {
    const staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 5_000);
    const res = await request(t.app)
      .post(`/${staffed.site.slug}/media/tts`)
      .set(staffed.editor.auth)
      .send({ text: sentence })
      .expect(402);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({
      type: '/problems/insufficient-credits',
      status: 402,
      balance: 'user',
      required: 6,
      available: 0,
      funding: {
        description: expect.stringContaining('a tenant admin moves credits from the pool to you'),
        grants: expect.arrayContaining([
          { endpoint: 'POST /{site_identifier}/transactions/credits/allocate-from-tenant', who: 'tenant admins' },
        ]),
      },
    });
    expect(res.body.detail).toMatch(/^Not enough credits: Your own credits on this site had 0 available, 6 needed\./);
  });

  it('names the tenant’s pool when a service account’s job is short', async () => {
    const staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 100, staffed.editor.user.id);
    const bot = await serviceAccount(t, staffed.tenant, ['sites:read', 'jobs:write', 'media:write'], staffed.admin);
    const res = await request(t.app)
      .post(`/${staffed.site.slug}/media/tts`)
      .set(bot.auth)
      .send({ text: sentence })
      .expect(402);
    expect(res.body).toMatchObject({
      balance: 'tenant',
      required: 6,
      available: 0,
      funding: {
        grants: expect.arrayContaining([
          { endpoint: 'POST /admin/global-cost-settings/tenant-credits/allocate', who: 'global admins' },
        ]),
      },
    });
  });
});
