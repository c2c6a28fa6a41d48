// API keys: a tenant admin makes one for a service account or a member, the
// app sends it as a bearer with no refresh, and it never does more than the
// key names or its holder may do now. Revoking it, its expiry and removing
// its holder refuse it at once, in a second API process too.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { newSite, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { bearer, expectPaginates, staffedTenant, type Auth, type Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite } from '../../helpers/jobs.ts';
import { startCountedApp } from '../../helpers/counted-app.ts';
import { stopProcess, twoApiProcesses, type Started } from '../../helpers/processes.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let b: Staffed;
let admin: Caller;
let bot: Awaited<ReturnType<typeof serviceAccount>>;

const allScopes = ['sites:read', 'jobs:read', 'jobs:write', 'media:read', 'media:write'];

beforeAll(async () => {
  ({ t, a, b, admin } = suite);
  bot = await serviceAccount(t, a.tenant, allScopes, a.admin);
  await giveCredits(t, a.site, 1000);
  await giveCredits(t, a.site, 1000, a.editor.user.id);
});

const keysOf = (tenantId: string) => `/api/tenants/${tenantId}/api-keys`;

type Made = { id: string; key: string; hint: string; scopes: string[] };

async function makeKey(body: Record<string, unknown>, by: Auth = a.admin.auth, tenantId = a.tenant.id): Promise<Made> {
  const res = await request(t.app)
    .post(keysOf(tenantId))
    .set(by)
    .send({ name: 'app', ...body });
  expect(res.status).toBe(201);
  return res.body as Made;
}

const botKey = (scopes = allScopes, extra: Record<string, unknown> = {}) =>
  makeKey({ service_account_id: bot.account.id, scopes, ...extra }).then((made) => ({
    ...made,
    auth: bearer(made.key),
  }));

const speech = (auth: Auth, site = a.site) =>
  request(t.app).post(`/${site.slug}/media/tts`).set(auth).send({ text: 'Kept keys.' });

const listed = async (id: string) => {
  const res = await request(t.app).get(keysOf(a.tenant.id)).query({ limit: 200 }).set(a.admin.auth).expect(200);
  return res.body.items.find((item: { id: string }) => item.id === id);
};

describe('making, listing and revoking', () => {
  it('answers the key once, prefixed, and lists it without its secret', async () => {
    const res = await request(t.app)
      .post(keysOf(a.tenant.id))
      .set(a.admin.auth)
      .send({ name: 'Nightly', service_account_id: bot.account.id, scopes: ['sites:read', 'jobs:read'] })
      .expect(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.key).toMatch(/^cap_live_[A-Za-z0-9_-]{40}$/);
    expect(res.body).toMatchObject({
      name: 'Nightly',
      tenant_id: a.tenant.id,
      holder: { kind: 'service_account', id: bot.account.id },
      scopes: ['sites:read', 'jobs:read'],
      site_ids: null,
      last_used_at: null,
      expires_at: null,
      hint: `cap_live_…${res.body.key.slice(-4)}`,
    });
    const item = await listed(res.body.id);
    expect(item).toMatchObject({ hint: res.body.hint, holder: res.body.holder, scopes: res.body.scopes });
    expect(JSON.stringify(item)).not.toContain(res.body.key);
    expect(item).not.toHaveProperty('key');
    // Only a hash is stored.
    const stored = await t.services.db.oneFirst(sql.type(z.object({ secret_hash: z.instanceof(Buffer) }))`
      select secret_hash from api_keys where id = ${res.body.id}`);
    expect(stored.toString('utf8')).not.toContain(res.body.key);
    expect(stored).toHaveLength(32);
  });

  it('prefixes a test-mode account’s key cap_test_, and pages the list', async () => {
    const tester = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read'], a.admin, { test_mode: true });
    const made = await makeKey({ service_account_id: tester.account.id, scopes: ['sites:read'] });
    expect(made.key).toMatch(/^cap_test_[A-Za-z0-9_-]{40}$/);
    await request(t.app).get(`/sites/${a.site.slug}`).set(bearer(made.key)).expect(200);
    await expectPaginates(t, a.admin.auth, keysOf(a.tenant.id));
  });

  it('lets a global admin make one, and a member be its holder', async () => {
    const made = await makeKey(
      { user_id: a.editor.user.id, scopes: ['sites:read'], site_ids: [a.site.id] },
      admin.auth,
    );
    expect(await listed(made.id)).toMatchObject({
      holder: { kind: 'user', id: a.editor.user.id },
      site_ids: [a.site.id],
    });
  });

  it('is 401 without a token, 403 for editors and keys, 404 for another tenant’s admin', async () => {
    const body = { name: 'x', service_account_id: bot.account.id, scopes: ['sites:read'] };
    await request(t.app).post(keysOf(a.tenant.id)).send(body).expect(401);
    await request(t.app).get(keysOf(a.tenant.id)).expect(401);
    await request(t.app).post(keysOf(a.tenant.id)).set(a.editor.auth).send(body).expect(403);
    await request(t.app).get(keysOf(a.tenant.id)).set(a.author.auth).expect(403);
    await request(t.app).post(keysOf(a.tenant.id)).set(b.admin.auth).send(body).expect(404);
    await request(t.app).get(keysOf(a.tenant.id)).set(b.admin.auth).expect(404);
    // A key cannot make keys, even one held by the tenant's admin.
    const adminKey = await makeKey({ user_id: a.admin.user.id, scopes: ['sites:read'] });
    await request(t.app).get(keysOf(a.tenant.id)).set(bearer(adminKey.key)).expect(403);
    await request(t.app).post(keysOf(a.tenant.id)).set(bearer(adminKey.key)).send(body).expect(403);
  });

  it.each([
    ['no holder', { scopes: ['sites:read'] }, 'body.service_account_id'],
    ['two holders', { scopes: ['sites:read'], user_id: 'USER', service_account_id: 'BOT' }, 'body.service_account_id'],
    ['an unknown scope', { service_account_id: 'BOT', scopes: ['everything'] }, 'body.scopes.0'],
    ['no scope', { service_account_id: 'BOT', scopes: [] }, 'body.scopes'],
    ['another tenant’s account', { service_account_id: 'B_BOT', scopes: ['sites:read'] }, 'body.service_account_id'],
    ['a scope the account lacks', { service_account_id: 'BOT', scopes: ['search:read'] }, 'body.scopes'],
    ['a user not a member', { user_id: 'B_USER', scopes: ['sites:read'] }, 'body.user_id'],
    ['a site of another tenant', { user_id: 'USER', scopes: ['sites:read'], site_ids: ['B_SITE'] }, 'body.site_ids'],
    [
      'a site the member does not reach',
      { user_id: 'AUTHOR', scopes: ['sites:read'], site_ids: ['SITE'] },
      'body.site_ids',
    ],
    [
      'an expiry in the past',
      { service_account_id: 'BOT', scopes: ['sites:read'], expires_at: '2001-01-01T00:00:00Z' },
      'body.expires_at',
    ],
    ['an unknown field', { service_account_id: 'BOT', scopes: ['sites:read'], secret: 'mine' }, 'body'],
  ])('is 422 for %s', async (_case, body, path) => {
    const bBot = await serviceAccount(t, b.tenant, ['sites:read'], b.admin);
    const ids: Record<string, string> = {
      USER: a.editor.user.id,
      AUTHOR: a.author.user.id,
      BOT: bot.account.id,
      B_BOT: bBot.account.id,
      B_USER: b.editor.user.id,
      SITE: a.site.id,
      B_SITE: b.site.id,
    };
    const resolved = JSON.parse(
      JSON.stringify(body),
      (_key, value) => (typeof value === 'string' && ids[value]) || value,
    );
    const res = await request(t.app)
      .post(keysOf(a.tenant.id))
      .set(a.admin.auth)
      .send({ name: 'bad', ...resolved })
      .expect(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining(path) })]),
    );
  });

  it('revokes a key (204), and is 404 for another tenant’s key or a key through another tenant', async () => {
    const made = await botKey();
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(made.auth).expect(200);
    await request(t.app)
      .delete(`${keysOf(a.tenant.id)}/${made.id}`)
      .set(b.admin.auth)
      .expect(404);
    await request(t.app)
      .delete(`${keysOf(b.tenant.id)}/${made.id}`)
      .set(b.admin.auth)
      .expect(404);
    await request(t.app)
      .delete(`${keysOf(a.tenant.id)}/${made.id}`)
      .set(a.editor.auth)
      .expect(403);
    await request(t.app)
      .delete(`${keysOf(a.tenant.id)}/${made.id}`)
      .expect(401);
    await request(t.app)
      .delete(`${keysOf(a.tenant.id)}/${made.id}`)
      .set(a.admin.auth)
      .expect(204);
    const refused = await request(t.app).get(`/${a.site.slug}/jobs/`).set(made.auth).expect(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer/);
    await request(t.app)
      .delete(`${keysOf(a.tenant.id)}/${made.id}`)
      .set(a.admin.auth)
      .expect(404);
    expect(await listed(made.id)).toBeUndefined();
  });
});

describe('using a key', () => {
  it('submits a job and reads it, with no token and no refresh', async () => {
    const made = await botKey();
    const submitted = await speech(made.auth).expect(202);
    expect(submitted.headers.location).toBe(`/${a.site.slug}/jobs/${submitted.body.id}`);
    const read = await request(t.app).get(submitted.headers.location!).set(made.auth).expect(200);
    expect(read.body).toMatchObject({ id: submitted.body.id, kind: 'speech' });
    const info = await request(t.app).get('/auth/token-info').set(made.auth).expect(200);
    expect(info.body).toMatchObject({ actor: 'service', subject: bot.account.id, tenant_id: a.tenant.id });
  });

  it('is 401 for a key that never was, however it is shaped', async () => {
    await request(t.app)
      .get(`/${a.site.slug}/jobs/`)
      .set(bearer(`cap_live_${'x'.repeat(40)}`))
      .expect(401);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer('cap_live_short')).expect(401);
  });

  it('is 403 for a route needing a scope the key was not given, or the account no longer has', async () => {
    const reader = await botKey(['sites:read', 'jobs:read']);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(reader.auth).expect(200);
    const refused = await speech(reader.auth).expect(403);
    expect(refused.body.detail).toMatch(/jobs:write|media:write/);

    const writer = await botKey();
    const narrowed = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read'], a.admin);
    const other = await makeKey({ service_account_id: narrowed.account.id, scopes: ['sites:read', 'jobs:read'] });
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer(other.key)).expect(200);
    // The account loses jobs:read: its key, which names it, loses it too.
    await request(t.app)
      .patch(`/api/service-accounts/${narrowed.account.id}`)
      .set(a.admin.auth)
      .send({ scopes: ['sites:read'] })
      .expect(200);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer(other.key)).expect(403);
    await speech(writer.auth).expect(202);
  });

  it('acts as a member, narrowed to the key’s scopes and sites, and is 403 on a person’s routes', async () => {
    const second = await newSite(t, a.tenant);
    const editor = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site, second] });
    await giveCredits(t, a.site, 100, editor.user.id);
    const made = await makeKey({
      user_id: editor.user.id,
      scopes: ['sites:read', 'jobs:read', 'jobs:write', 'media:write'],
      site_ids: [a.site.id],
    });
    const auth = bearer(made.key);
    const job = await speech(auth).expect(202);
    expect(job.body).toMatchObject({ kind: 'speech' });
    await request(t.app).get(`/${second.slug}/jobs/`).set(editor.auth).expect(200);
    await request(t.app).get(`/${second.slug}/jobs/`).set(auth).expect(404);
    await request(t.app).get(`/${b.site.slug}/jobs/`).set(auth).expect(404);
    await request(t.app).get(`/${a.site.slug}/media/`).set(auth).expect(403);
    await request(t.app).get('/auth/currentuser').set(auth).expect(403);
    const info = await request(t.app).get('/auth/token-info').set(auth).expect(200);
    expect(info.body).toMatchObject({
      actor: 'user',
      subject: editor.user.id,
      tenant_id: a.tenant.id,
      scopes: made.scopes,
    });
    await request(t.app).get('/api/service-accounts/').set(auth).expect(403);
    const sites = await request(t.app).get('/sites/').set(auth).expect(200);
    expect(sites.body.items.map((site: { id: string }) => site.id)).toEqual([a.site.id]);
  });

  it('does not administer, even when its holder is the tenant’s admin', async () => {
    const made = await makeKey({ user_id: a.admin.user.id, scopes: ['sites:read', 'content:read', 'content:write'] });
    const auth = bearer(made.key);
    await request(t.app).get(`/api/tenants/${a.tenant.id}/webhook-secret`).set(a.admin.auth).expect(200);
    await request(t.app).get(`/api/tenants/${a.tenant.id}/webhook-secret`).set(auth).expect(403);
    await request(t.app).get(`/sites/${a.site.slug}`).set(auth).expect(200);
    await request(t.app).delete(`/sites/${a.site.slug}`).set(auth).expect(403);
  });

  it('stops working when its member is removed from the tenant', async () => {
    const member = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    const made = await makeKey({ user_id: member.user.id, scopes: ['sites:read', 'jobs:read'] });
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer(made.key)).expect(200);
    await request(t.app).delete(`/admin/tenants/${a.tenant.id}/users/${member.user.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer(made.key)).expect(401);
  });

  it('is refused once expired: at its time while kept in memory, and at once when its expiry is moved', async () => {
    const soon = await botKey(['sites:read', 'jobs:read'], { expires_at: new Date(Date.now() + 1500).toISOString() });
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(soon.auth).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(soon.auth).expect(401);

    const later = await botKey(['sites:read', 'jobs:read'], { expires_at: '2099-01-01T00:00:00Z' });
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(later.auth).expect(200);
    await t.services.db.query(sql.typeAlias('void')`
      update api_keys set expires_at = now() - interval '1 second' where id = ${later.id}`);
    await t.services.accessCache.settled();
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(later.auth).expect(401);
  });

  it('records its last use, at most once a minute', async () => {
    const made = await botKey(['sites:read', 'jobs:read']);
    expect((await listed(made.id)).last_used_at).toBeNull();
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(made.auth).expect(200);
    const first = (await listed(made.id)).last_used_at;
    expect(first).not.toBeNull();
    expect(Date.now() - Date.parse(first)).toBeLessThan(60_000);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(made.auth).expect(200);
    expect((await listed(made.id)).last_used_at).toBe(first);
  });
});

it('costs a warm request no more round trips than a service account’s token', async () => {
  const counted = await startCountedApp(t);
  try {
    const made = await botKey(['sites:read', 'jobs:read']);
    const trips = async (auth: Auth) => {
      // The first use writes the last use (once a minute); the third is measured.
      for (let i = 0; i < 2; i++) await request(counted.app).get(`/${a.site.slug}/jobs/`).set(auth).expect(200);
      counted.counter.reset();
      await request(counted.app).get(`/${a.site.slug}/jobs/`).set(auth).expect(200);
      return counted.counter.count();
    };
    expect(await trips(made.auth)).toBe(await trips(bot.auth));
  } finally {
    await counted.close();
  }
});

describe('two API processes', () => {
  let first: Started;
  let second: Started;
  beforeAll(async () => {
    [first, second] = await twoApiProcesses(t);
  });
  afterAll(async () => {
    await Promise.all([first, second].filter(Boolean).map((started) => stopProcess(started)));
  });

  const status = (base: string, method: string, path: string, auth: Auth) =>
    fetch(`${base}${path}`, { method, headers: auth }).then((res) => res.status);

  it('a key revoked through one is refused by the other at once', async () => {
    const made = await botKey(['sites:read', 'jobs:read']);
    const path = `/${a.site.slug}/jobs/`;
    for (let i = 0; i < 3; i++) {
      expect(await status(first.url, 'GET', path, made.auth)).toBe(200);
      expect(await status(second.url, 'GET', path, made.auth)).toBe(200);
    }
    expect(await status(first.url, 'DELETE', `${keysOf(a.tenant.id)}/${made.id}`, a.admin.auth)).toBe(204);
    // The second hears of it by notification, within a millisecond or so; on a loaded machine allow it a moment.
    const deadline = Date.now() + 5000;
    let after = await status(second.url, 'GET', path, made.auth);
    while (after === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      after = await status(second.url, 'GET', path, made.auth);
    }
    expect(after).toBe(401);
  });
});

it('keeps another tenant’s keys apart', async () => {
  const other = await staffedTenant(t);
  const bBot = await serviceAccount(t, other.tenant, ['sites:read', 'jobs:read'], other.admin);
  const made = await makeKey(
    { service_account_id: bBot.account.id, scopes: ['sites:read', 'jobs:read'] },
    other.admin.auth,
    other.tenant.id,
  );
  await request(t.app).get(`/${a.site.slug}/jobs/`).set(bearer(made.key)).expect(404);
  await request(t.app).get(`/${other.site.slug}/jobs/`).set(bearer(made.key)).expect(200);
  const mine = await request(t.app).get(keysOf(a.tenant.id)).query({ limit: 200 }).set(a.admin.auth).expect(200);
  expect(mine.body.items.map((item: { id: string }) => item.id)).not.toContain(made.id);
});
