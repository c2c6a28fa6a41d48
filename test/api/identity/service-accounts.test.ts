// Service accounts: /api/service-accounts/ (managed by tenant admins, the
// secret shown once) and the client-credentials grant, POST /auth/token,
// whose tokens are limited to the account's tenant and scopes.
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { bearer, expectPaginates, globalAdmin, idsOf, staffedTenant } from '../../helpers/identity.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const missing = '00000000-0000-4000-8000-000000000000';

const accountShape = (fields: Record<string, unknown> = {}) => ({
  id: expect.any(String),
  tenant_id: expect.any(String),
  name: expect.any(String),
  description: '',
  scopes: expect.any(Array),
  client_id: expect.stringMatching(/^sa_[0-9a-f]{24}$/),
  status: 'active',
  test_mode: false,
  last_used_at: null,
  created_at: expect.any(String),
  ...fields,
});

type Account = { id: string; tenant_id: string; client_id: string; client_secret: string; test_mode: boolean };

async function create(admin: Caller, tenantId: string, body: Record<string, unknown> = {}): Promise<Account> {
  const res = await request(t.app)
    .post('/api/service-accounts/')
    .set(admin.auth)
    .send({ tenant_id: tenantId, name: 'bot', scopes: ['sites:read'], ...body })
    .expect(201);
  return res.body as Account;
}

const token = (fields: Record<string, string>) =>
  request(t.app)
    .post('/auth/token')
    .type('form')
    .send({ grant_type: 'client_credentials', ...fields });
const tokenFor = (account: Account, extra: Record<string, string> = {}) =>
  token({ client_id: account.client_id, client_secret: account.client_secret, ...extra });

/** The account as a global admin sees it: the ground truth for "nothing changed". */
async function stored(id: string) {
  const admin = await globalAdmin(t);
  return (await request(t.app).get(`/api/service-accounts/${id}`).set(admin.auth).expect(200)).body;
}

describe('GET /api/service-accounts/', () => {
  it('lists the accounts of the tenants the caller administers, never their secrets', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const mine = await create(a.admin, a.tenant.id, { name: 'mine', scopes: ['sites:read', 'content:read'] });
    const theirs = await create(b.admin, b.tenant.id);
    const res = await request(t.app).get('/api/service-accounts/').set(a.admin.auth).expect(200);
    expect(res.body).toEqual({
      items: [
        accountShape({
          id: mine.id,
          tenant_id: a.tenant.id,
          name: 'mine',
          scopes: ['sites:read', 'content:read'],
          client_id: mine.client_id,
        }),
      ],
      next_cursor: null,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/secret/);
    expect(idsOf(res.body)).not.toContain(theirs.id);
  });

  it('lists every tenant’s accounts for a global admin, filtered by tenant_id', async () => {
    const admin = await globalAdmin(t);
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const [one, two] = [await create(a.admin, a.tenant.id), await create(b.admin, b.tenant.id)];
    expect(
      idsOf((await request(t.app).get('/api/service-accounts/?limit=200').set(admin.auth).expect(200)).body),
    ).toEqual(expect.arrayContaining([one.id, two.id]));
    expect(
      idsOf(
        (await request(t.app).get(`/api/service-accounts/?tenant_id=${b.tenant.id}`).set(admin.auth).expect(200)).body,
      ),
    ).toEqual([two.id]);
  });

  it('gives a tenant admin nothing when filtering by another tenant', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await create(b.admin, b.tenant.id);
    expect(
      (await request(t.app).get(`/api/service-accounts/?tenant_id=${b.tenant.id}`).set(a.admin.auth).expect(200)).body
        .items,
    ).toEqual([]);
  });

  it('shows an editor of the tenant no accounts', async () => {
    const { tenant, admin, editor } = await staffedTenant(t);
    await create(admin, tenant.id);
    expect((await request(t.app).get('/api/service-accounts/').set(editor.auth).expect(200)).body.items).toEqual([]);
  });

  it('pages with limit and cursor, counts with include_total, and rejects a garbage cursor', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const made = [await create(admin, tenant.id), await create(admin, tenant.id), await create(admin, tenant.id)];
    expect(await expectPaginates(t, admin.auth, '/api/service-accounts/')).toEqual(made.map((m) => m.id));
  });

  it('needs a token (401), a user rather than a service account (403), and a valid query (422)', async () => {
    const { tenant, admin } = await staffedTenant(t);
    await request(t.app).get('/api/service-accounts/').expect(401);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).get('/api/service-accounts/').set(bot.auth).expect(403);
    await request(t.app).get('/api/service-accounts/?tenant_id=acme').set(admin.auth).expect(422);
  });
});

describe('POST /api/service-accounts/', () => {
  it('creates an account and shows its secret this once', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({
        tenant_id: tenant.id,
        name: ' Importer ',
        description: 'nightly import',
        scopes: ['sites:read', 'content:write'],
      })
      .expect(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual(
      accountShape({
        tenant_id: tenant.id,
        name: 'Importer',
        description: 'nightly import',
        scopes: ['sites:read', 'content:write'],
        client_secret: expect.stringMatching(/^sas_[A-Za-z0-9_-]{43}$/),
      }),
    );
    const again = await request(t.app).get(`/api/service-accounts/${res.body.id}`).set(admin.auth).expect(200);
    const { client_secret: _secret, ...withoutSecret } = res.body;
    expect(again.body).toEqual(withoutSecret);

    // A test account, as Stripe's test keys: fixed for its life, so a PATCH cannot turn it live (or back).
    const tester = await create(admin, tenant.id, { test_mode: true });
    expect(tester).toMatchObject({ test_mode: true });
    const change = await request(t.app)
      .patch(`/api/service-accounts/${tester.id}`)
      .set(admin.auth)
      .send({ test_mode: false })
      .expect(422);
    expect(change.body.errors).toEqual([{ path: 'body', message: 'Unrecognized key: "test_mode"' }]);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'bot', test_mode: 'yes' })
      .expect(422);
  });

  it('puts the account in the caller’s only administered tenant when tenant_id is left out', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({ name: 'implicit' })
      .expect(201);
    expect(res.body).toMatchObject({ tenant_id: tenant.id, scopes: [] });
  });

  it('asks which tenant (422) when the caller administers several, or none', async () => {
    const a = await staffedTenant(t);
    const b = await newTenant(t);
    const global = await globalAdmin(t);
    await request(t.app)
      .post(`/admin/tenants/${b.id}/users/${a.admin.user.id}`)
      .set(global.auth)
      .send({ role: 'admin' })
      .expect(201);
    const res = await request(t.app)
      .post('/api/service-accounts/')
      .set(a.admin.auth)
      .send({ name: 'which' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.tenant_id', message: 'required' }]);
    await request(t.app).post('/api/service-accounts/').set(global.auth).send({ name: 'which' }).expect(422);
  });

  it('is refused to an editor (403) and to a service account (403)', async () => {
    const { tenant, admin, editor } = await staffedTenant(t);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(editor.auth)
      .send({ tenant_id: tenant.id, name: 'nope' })
      .expect(403);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(bot.auth)
      .send({ tenant_id: tenant.id, name: 'nope' })
      .expect(403);
    // Only the helper's own account exists.
    expect((await request(t.app).get('/api/service-accounts/').set(admin.auth).expect(200)).body.items).toHaveLength(1);
  });

  it('hides another tenant from a tenant admin: creating an account there is a 404', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(a.admin.auth)
      .send({ tenant_id: b.tenant.id, name: 'spy', scopes: ['sites:read'] })
      .expect(404);
    expect((await request(t.app).get('/api/service-accounts/').set(b.admin.auth).expect(200)).body.items).toEqual([]);
  });

  it('answers 404, not 500, when a global admin names a tenant that does not exist', async () => {
    const admin = await globalAdmin(t);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({ tenant_id: missing, name: 'orphan' })
      .expect(404);
  });

  it('needs a token', async () => {
    await request(t.app).post('/api/service-accounts/').send({ name: 'x' }).expect(401);
  });

  it.each([
    ['an unknown scope', { scopes: ['everything'] }, 'body.scopes.0'],
    ['an empty name', { name: '' }, 'body.name'],
    ['an unknown field', { client_id: 'sa_mine' }, 'body'],
    ['a chosen secret', { client_secret: 'my own secret' }, 'body'],
  ])('rejects %s with 422', async (_name, change, path) => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'bot', ...change })
      .expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect((await request(t.app).get('/api/service-accounts/').set(admin.auth).expect(200)).body.items).toEqual([]);
  });
});

describe('GET /api/service-accounts/{service_account_id}', () => {
  it('shows the account, without its secret, and when it was last used', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const before = await request(t.app).get(`/api/service-accounts/${account.id}`).set(admin.auth).expect(200);
    expect(before.body).toEqual(
      accountShape({
        id: account.id,
        tenant_id: tenant.id,
        name: 'bot',
        scopes: ['sites:read'],
        client_id: account.client_id,
      }),
    );
    await tokenFor(account).expect(200);
    const after = await request(t.app).get(`/api/service-accounts/${account.id}`).set(admin.auth).expect(200);
    expect(after.body.last_used_at).toEqual(expect.any(String));
  });

  it('hides another tenant’s account from a tenant admin as 404', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const theirs = await create(b.admin, b.tenant.id);
    const res = await request(t.app).get(`/api/service-accounts/${theirs.id}`).set(a.admin.auth).expect(404);
    expect(res.body.detail).toBe('No such service account.');
  });

  it('is refused to an editor of the tenant (403), and to the service account itself (403)', async () => {
    const { tenant, admin, editor } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).get(`/api/service-accounts/${bot.account.id}`).set(editor.auth).expect(403);
    await request(t.app).get(`/api/service-accounts/${bot.account.id}`).set(bot.auth).expect(403);
  });

  it('answers 404 for an unknown account, 422 for a malformed id, 401 without a token', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    await request(t.app).get(`/api/service-accounts/${missing}`).set(admin.auth).expect(404);
    await request(t.app).get('/api/service-accounts/bot').set(admin.auth).expect(422);
    await request(t.app).get(`/api/service-accounts/${account.id}`).expect(401);
  });
});

describe('PATCH /api/service-accounts/{service_account_id}', () => {
  it('changes name, description and scopes, without showing a secret', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const res = await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ name: 'renamed', description: 'now documented', scopes: ['media:read', 'jobs:write'] })
      .expect(200);
    expect(res.body).toEqual(
      accountShape({
        id: account.id,
        tenant_id: tenant.id,
        name: 'renamed',
        description: 'now documented',
        scopes: ['media:read', 'jobs:write'],
        client_id: account.client_id,
      }),
    );
    expect(await stored(account.id)).toEqual(res.body);
  });

  it('rotates the secret: the new one is shown once, the old one stops working', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const res = await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ rotate_secret: true })
      .expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual(
      accountShape({
        id: account.id,
        tenant_id: tenant.id,
        scopes: ['sites:read'],
        client_id: account.client_id,
        client_secret: expect.stringMatching(/^sas_/),
      }),
    );
    expect(res.body.client_secret).not.toBe(account.client_secret);

    const old = await tokenFor(account).expect(401);
    expect(old.body.error).toBe('invalid_client');
    await tokenFor({ ...account, client_secret: res.body.client_secret }).expect(200);
    expect(await stored(account.id)).not.toHaveProperty('client_secret');
  });

  it('rotating the secret ends the tokens issued with the old one at once', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    await request(t.app).get('/sites/').set(issued).expect(200);
    // Another change leaves the token alone.
    await request(t.app).patch(`/api/service-accounts/${account.id}`).set(admin.auth).send({ name: 'b' }).expect(200);
    await request(t.app).get('/sites/').set(issued).expect(200);
    const rotated = await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ rotate_secret: true })
      .expect(200);
    const refused = await request(t.app).get('/sites/').set(issued).expect(401);
    expect(refused.body.detail).toMatch(/secret/);
    const fresh = await tokenFor({ ...account, client_secret: rotated.body.client_secret }).expect(200);
    await request(t.app).get('/sites/').set(bearer(fresh.body.access_token)).expect(200);
  });

  it('disables an account: its tokens stop working at once and it gets no new ones, until enabled again', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const issued = (await tokenFor(account).expect(200)).body.access_token as string;
    const res = await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ status: 'disabled' })
      .expect(200);
    expect(res.body.status).toBe('disabled');
    await request(t.app).get('/sites/').set(bearer(issued)).expect(401);
    expect((await tokenFor(account).expect(401)).body.error).toBe('invalid_client');

    await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ status: 'active' })
      .expect(200);
    await request(t.app).get('/sites/').set(bearer(issued)).expect(200);
  });

  it('withdrawing a scope takes it away from tokens already issued', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id, { scopes: ['sites:read', 'content:read'] });
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    await request(t.app).get('/sites/').set(issued).expect(200);
    await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ scopes: ['content:read'] })
      .expect(200);
    await request(t.app).get('/sites/').set(issued).expect(403);
  });

  it('is refused to an editor (403) and hidden from another tenant’s admin (404), changing nothing', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const account = await create(a.admin, a.tenant.id);
    const before = await stored(account.id);
    await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(a.editor.auth)
      .send({ scopes: ['content:write'] })
      .expect(403);
    await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(b.admin.auth)
      .send({ rotate_secret: true })
      .expect(404);
    expect(await stored(account.id)).toEqual(before);
    await tokenFor(account).expect(200);
  });

  it('answers 404 for an unknown account and 401 without a token', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    await request(t.app).patch(`/api/service-accounts/${missing}`).set(admin.auth).send({ name: 'ghost' }).expect(404);
    await request(t.app).patch(`/api/service-accounts/${account.id}`).send({ name: 'x' }).expect(401);
  });

  it.each([
    ['a move to another tenant', { tenant_id: missing }, 'body'],
    ['a chosen client_id', { client_id: 'sa_mine' }, 'body'],
    ['an unknown scope', { scopes: ['root'] }, 'body.scopes.0'],
    ['an unknown status', { status: 'paused' }, 'body.status'],
  ])('rejects %s with 422, changing nothing', async (_name, body, path) => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const before = await stored(account.id);
    const res = await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send(body)
      .expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await stored(account.id)).toEqual(before);
  });
});

describe('DELETE /api/service-accounts/{service_account_id}', () => {
  it('deletes the account: it is gone, its token is refused at once, and it gets no new one', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    await request(t.app).get('/sites/').set(issued).expect(200);
    await request(t.app).delete(`/api/service-accounts/${account.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/api/service-accounts/${account.id}`).set(admin.auth).expect(404);
    await request(t.app).get('/sites/').set(issued).expect(401);
    expect((await tokenFor(account).expect(401)).body.error).toBe('invalid_client');
  });

  it('is refused to an editor (403) and hidden from another tenant’s admin (404); the account stays', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const account = await create(a.admin, a.tenant.id);
    await request(t.app).delete(`/api/service-accounts/${account.id}`).set(a.editor.auth).expect(403);
    await request(t.app).delete(`/api/service-accounts/${account.id}`).set(b.admin.auth).expect(404);
    await tokenFor(account).expect(200);
  });

  it('answers 404 for an unknown account, 422 for a malformed id, 401 without a token', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    await request(t.app).delete(`/api/service-accounts/${missing}`).set(admin.auth).expect(404);
    await request(t.app).delete('/api/service-accounts/1').set(admin.auth).expect(422);
    await request(t.app).delete(`/api/service-accounts/${account.id}`).expect(401);
  });
});

describe('POST /auth/token', () => {
  it('issues a token for client credentials sent as a form, with all the account’s scopes', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id, { scopes: ['sites:read', 'content:read'] });
    const res = await tokenFor(account).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 900,
      scope: 'sites:read content:read',
    });
    expect(jwt.decode(res.body.access_token)).toMatchObject({
      typ: 'access',
      sub: account.id,
      act: 'service',
      tenant_id: tenant.id,
      scopes: ['sites:read', 'content:read'],
    });
    const info = await request(t.app).get('/auth/token-info').set(bearer(res.body.access_token)).expect(200);
    expect(info.body).toMatchObject({
      actor: 'service',
      subject: account.id,
      session_id: null,
      tenant_id: tenant.id,
      scopes: ['sites:read', 'content:read'],
    });
  });

  it('accepts the credentials as JSON', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const res = await request(t.app)
      .post('/auth/token')
      .send({ grant_type: 'client_credentials', client_id: account.client_id, client_secret: account.client_secret })
      .expect(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', scope: 'sites:read' });
  });

  it('accepts the credentials as HTTP Basic', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const res = await request(t.app)
      .post('/auth/token')
      .auth(account.client_id, account.client_secret)
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    await request(t.app).get('/sites/').set(bearer(res.body.access_token)).expect(200);
  });

  it('answers malformed Basic credentials with 401 invalid_client, not a 500', async () => {
    const header = `Basic ${Buffer.from('sa_%:x').toString('base64')}`;
    const res = await request(t.app)
      .post('/auth/token')
      .set('Authorization', header)
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it('counts a scope listed twice once', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/api/service-accounts/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'twice', scopes: ['sites:read', 'sites:read'] })
      .expect(201);
    expect(res.body.scopes).toEqual(['sites:read']);
  });

  it('grants only the scopes asked for, when they are the account’s', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id, { scopes: ['sites:read', 'content:read', 'media:read'] });
    const res = await tokenFor(account, { scope: 'content:read media:read' }).expect(200);
    expect(res.body.scope).toBe('content:read media:read');
    await request(t.app).get('/sites/').set(bearer(res.body.access_token)).expect(403);
  });

  it('refuses a scope the account does not have with 400 invalid_scope', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id, { scopes: ['sites:read'] });
    const res = await tokenFor(account, { scope: 'sites:read content:write' }).expect(400);
    expect(res.body).toMatchObject({ status: 400, error: 'invalid_scope', type: '/problems/invalid-scope' });
    expect(res.body.detail).toContain('content:write');
  });

  it('refuses a wrong secret, an unknown client and missing credentials with 401 invalid_client', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    for (const attempt of [
      tokenFor({ ...account, client_secret: `${account.client_secret}x` }),
      token({ client_id: 'sa_000000000000000000000000', client_secret: account.client_secret }),
      token({ client_id: account.client_id }),
      request(t.app)
        .post('/auth/token')
        .auth(account.client_id, 'wrong')
        .type('form')
        .send({ grant_type: 'client_credentials' }),
    ]) {
      const res = await attempt.expect(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
      expect(res.body).not.toHaveProperty('access_token');
    }
  });

  it('refuses a disabled account with 401', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    await request(t.app)
      .patch(`/api/service-accounts/${account.id}`)
      .set(admin.auth)
      .send({ status: 'disabled' })
      .expect(200);
    expect((await tokenFor(account).expect(401)).body.error).toBe('invalid_client');
  });

  it('refuses the accounts of a suspended tenant, and their tokens stop working', async () => {
    const global = await globalAdmin(t);
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(global.auth)
      .send({ status: 'suspended' })
      .expect(200);
    await tokenFor(account).expect(401);
    await request(t.app).get('/sites/').set(issued).expect(401);
  });

  it('rejects another grant type, or none, with 422', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    await token({ grant_type: 'password', client_id: account.client_id, client_secret: account.client_secret }).expect(
      422,
    );
    await request(t.app)
      .post('/auth/token')
      .type('form')
      .send({ client_id: account.client_id, client_secret: account.client_secret })
      .expect(422);
  });

  it('gives a token limited to the account’s tenant: only its sites are listed or reachable', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const second = await newSite(t, a.tenant);
    const account = await create(a.admin, a.tenant.id);
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    expect(idsOf((await request(t.app).get('/sites/').set(issued).expect(200)).body)).toEqual([a.site.id, second.id]);
    await request(t.app).get(`/sites/${b.site.id}`).set(issued).expect(404);
    await request(t.app).get(`/sites/by-tenant/${b.tenant.id}`).set(issued).expect(404);
  });

  it('gives a token that is no user: user-only endpoints answer 403', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const account = await create(admin, tenant.id);
    const issued = bearer((await tokenFor(account).expect(200)).body.access_token);
    await request(t.app).get('/auth/currentuser').set(issued).expect(403);
    await request(t.app).get('/api/service-accounts/').set(issued).expect(403);
    await request(t.app).get(`/users/${admin.user.id}`).set(issued).expect(403);
  });
});

// A caller who is a member of no tenant at all.
describe('outsiders', () => {
  it('a signed-in user of no tenant sees no accounts and cannot create one', async () => {
    const loner = await signedIn(t);
    const tenant = await newTenant(t);
    expect((await request(t.app).get('/api/service-accounts/').set(loner.auth).expect(200)).body.items).toEqual([]);
    await request(t.app)
      .post('/api/service-accounts/')
      .set(loner.auth)
      .send({ tenant_id: tenant.id, name: 'x' })
      .expect(404);
    await request(t.app).post('/api/service-accounts/').set(loner.auth).send({ name: 'x' }).expect(422);
  });
});
