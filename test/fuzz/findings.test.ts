// What the OpenAPI fuzzer (./openapi-fuzz.test.ts) found, each pinned by the
// request that showed it, so that a fix cannot quietly come undone when the
// fuzzer's seed or catalogue changes.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { Tenant } from '../../core/tenancy/tenants.ts';
import { sql } from '../../db/pool.ts';

let t: TestApp;
let tenant: Tenant;
let site: Site;
let admin: Caller;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await newTenant(t);
  site = await newSite(t, tenant);
  admin = await signedIn(t, { globalAdmin: true });
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
});
afterAll(() => stopTestApp(t));

/** base64url of a forged cursor. */
const cursor = (value: unknown[]) => Buffer.from(JSON.stringify(value)).toString('base64url');
const id = '00000000-0000-0000-0000-000000000000';

it('refuses a value nested deeper than 100 levels with a 422 naming the field', async () => {
  // Sent as text: the test client's own stringify would run out of stack first.
  const settings = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  const res = await request(t.app)
    .patch(`/admin/tenants/${tenant.id}`)
    .set(admin.auth)
    .set('Content-Type', 'application/json')
    .send(`{"name":"Deep","settings":${settings}}`)
    .expect(422);
  expect(res.body.errors[0].path).toMatch(/^body\.settings(\.a)+$/);
  expect(res.body.errors[0].message).toBe('is nested more than 100 levels deep');
  // 100 levels are fine.
  const shallow = JSON.parse(`${'{"a":'.repeat(99)}1${'}'.repeat(99)}`);
  await request(t.app).patch(`/admin/tenants/${tenant.id}`).set(admin.auth).send({ settings: shallow }).expect(200);
});

it('ignores an unknown query parameter holding NUL', async () => {
  await request(t.app).get('/health/live?fuzz=%00').expect(200);
});

it('ignores a stray body on an endpoint that takes none, whatever it holds', async () => {
  for (const [type, body] of [
    ['application/json', 'not json'],
    ['application/json; charset=utf-16', '{}'],
    ['text/plain', 'x'],
  ] as const) {
    await request(t.app).get('/subscription/plans').set(admin.auth).set('Content-Type', type).send(body).expect(200);
  }
});

it.each([
  ['a date sort with a number too large for a date', '/posts/?sort=published_at', ['1e309', id]],
  ['a date sort with an empty value', '/posts/?sort=-updated_at', ['', id]],
  ['a date in the year 0000', '/media/folders/?', ['0000-01-01T00:00:00Z', id]],
])('answers a forged cursor (%s) with 400', async (_, path, value) => {
  await request(t.app)
    .get(`/${site.slug}${path}&cursor=${cursor(value)}`)
    .set(admin.auth)
    .expect(400);
});

it('answers a forged cursor with a count beyond int8 with 400', async () => {
  await request(t.app)
    .get(
      `/admin/global-cost-settings/tenant-credits?sort=spent_this_month&cursor=${cursor(['-9223372036854775809', id])}`,
    )
    .set(admin.auth)
    .expect(400);
});

it.each([
  ['a date in the year 0000', ['0000-01-01T00:00:00Z', 0.5, 'post', id, 'matrix']],
  ['a NUL in the query it carries', ['2026-01-01T00:00:00Z', 0.5, 'post', id, 'a\u0000b']],
])('answers a forged search cursor (%s) with 400', async (_, value) => {
  await request(t.app)
    .get(`/search/sites/${site.slug}?q=matrix&cursor=${cursor(value)}`)
    .expect(400);
});

it('refuses a threat threshold past int4 with 422', async () => {
  await request(t.app)
    .get('/admin/monitoring/threat-intelligence?min_unauthorized=2147483648')
    .set(admin.auth)
    .expect(422);
  await request(t.app)
    .get('/admin/monitoring/threat-intelligence?min_unauthorized=2147483647')
    .set(admin.auth)
    .expect(200);
});

it.each([
  ['media created after', (s: Site) => `/${s.slug}/media/count?created_after=0000-01-01T00:00:00Z`],
  ['statistics from a date', (s: Site) => `/${s.slug}/site-statistics/overview?to=0000-01-01`],
  ['statistics from an instant', (s: Site) => `/${s.slug}/site-statistics/overview?from=0000-01-01T00:00:00Z`],
  ['signups from', () => '/admin/fraud/suspicious-signups?from=0000-01-01T00:00:00Z'],
  ['credits from', () => '/admin/global-cost-settings/credit-overview?from=0000-01-01T00:00:00Z'],
])('refuses the year 0000 (%s) with 422', async (_, path) => {
  await request(t.app).get(path(site)).set(admin.auth).expect(422);
});

it('refuses an instant past the year 9999 in UTC with 422', async () => {
  await request(t.app)
    .get(`/${site.slug}/site-statistics/overview?to=${encodeURIComponent('9999-12-31T23:59:59-14:00')}`)
    .set(admin.auth)
    .expect(422);
});

it('refuses a post scheduled past the year 9999 in UTC with 422', async () => {
  await request(t.app)
    .post(`/${site.slug}/posts/`)
    .set(admin.auth)
    .send({ title: 'Far future', status: 'scheduled', scheduled_for: '9999-12-31T23:59:59-14:00' })
    .expect(422);
});

it('signs up a full name of 200 characters, its workspace’s name cut to the 200 a tenant’s name may have', async () => {
  const fullName = 'a'.repeat(200);
  const res = await request(t.app)
    .post('/auth/signup/')
    .send({
      email: `long-name-${Date.now()}@example.com`,
      password: 'correct horse battery staple',
      full_name: fullName,
    })
    .expect(201);
  expect(res.body.user.full_name).toBe(fullName);
  expect(res.body.tenant.name).toBe(`${'a'.repeat(188)}'s workspace`);
});
