// The user directory: /users/ and /users/{user_id} (global admins administer
// it; everyone reads and edits themselves, name and password only).
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp, accessChangeHeard } from '../../helpers/app.ts';
import { login, newTenant, newUser, password, serviceAccount, signedIn } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, idsOf, unique } from '../../helpers/identity.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const userShape = (fields: Record<string, unknown> = {}) => ({
  id: expect.any(String),
  email: expect.any(String),
  full_name: expect.any(String),
  is_global_admin: expect.any(Boolean),
  email_verified: expect.any(Boolean),
  status: expect.stringMatching(/^(active|blocked)$/),
  created_at: expect.any(String),
  ...fields,
});

/** The user as a global admin sees it: the ground truth for "nothing changed". */
async function stored(id: string) {
  const admin = await globalAdmin(t);
  return (await request(t.app).get(`/users/${id}`).set(admin.auth).expect(200)).body;
}

const anyServiceAccount = async () => serviceAccount(t, await newTenant(t), ['sites:read']);

describe('GET /users/', () => {
  it('lists users for a global admin, without password hashes, filtered by search on e-mail or name', async () => {
    const admin = await globalAdmin(t);
    const marker = `findme${unique()}`;
    const byEmail = await newUser(t, { email: `${marker}@example.com` });
    const byName = await newUser(t, { full_name: `Ms ${marker.toUpperCase()}` });
    await newUser(t);
    const res = await request(t.app).get(`/users/?search=${marker}`).set(admin.auth).expect(200);
    expect(res.body).toEqual({
      items: [
        userShape({ id: byEmail.id, email: byEmail.email }),
        userShape({ id: byName.id, full_name: `Ms ${marker.toUpperCase()}` }),
      ],
      next_cursor: null,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
  });

  it('searches literally: % and _ in the search are not wildcards', async () => {
    const admin = await globalAdmin(t);
    const marker = unique();
    const literal = await newUser(t, { full_name: `${marker}_100%` });
    await newUser(t, { full_name: `${marker}x100 and more` });
    for (const search of [`${marker}_`, `${marker}_100%`]) {
      const res = await request(t.app).get('/users/').query({ search }).set(admin.auth).expect(200);
      expect(idsOf(res.body)).toEqual([literal.id]);
    }
  });

  it('pages with limit and cursor, counts with include_total, and rejects a garbage cursor', async () => {
    const admin = await globalAdmin(t);
    const marker = `paged${unique()}`;
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await newUser(t, { full_name: `${marker} ${i}` })).id);
    const ids = await expectPaginates(t, admin.auth, `/users/?search=${marker}`);
    expect(ids).toEqual(made);
  });

  it('needs a token', async () => {
    await request(t.app).get('/users/').expect(401);
  });

  it('is for global admins only: a tenant admin and a service account get 403', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    await request(t.app).get('/users/').set(tenantAdmin.auth).expect(403);
    const bot = await serviceAccount(t, tenant);
    await request(t.app).get('/users/').set(bot.auth).expect(403);
  });

  it('rejects a bad query with 422', async () => {
    const admin = await globalAdmin(t);
    const res = await request(t.app).get('/users/?limit=lots').set(admin.auth).expect(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'query.limit' })]);
    await request(t.app)
      .get(`/users/?search=${'x'.repeat(201)}`)
      .set(admin.auth)
      .expect(422);
  });
});

describe('POST /users/', () => {
  it('creates a verified user who can sign in with the password', async () => {
    const admin = await globalAdmin(t);
    const email = `new-${unique()}@example.com`;
    const res = await request(t.app)
      .post('/users/')
      .set(admin.auth)
      .send({ email, password, full_name: '  Nora New  ' })
      .expect(201);
    expect(res.body).toEqual(
      userShape({ email, full_name: 'Nora New', is_global_admin: false, email_verified: true, status: 'active' }),
    );
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
    await login(t, email);
  });

  it('keeps email_verified false when asked, so the user must verify before signing in', async () => {
    const admin = await globalAdmin(t);
    const email = `unverified-${unique()}@example.com`;
    const res = await request(t.app)
      .post('/users/')
      .set(admin.auth)
      .send({ email, password, full_name: 'Una', email_verified: false })
      .expect(201);
    expect(res.body.email_verified).toBe(false);
    const signIn = await request(t.app).post('/auth/login').send({ username: email, password }).expect(403);
    expect(signIn.body.type).toBe('/problems/email-not-verified');
  });

  it('refuses a taken e-mail address, in any case, with 409', async () => {
    const admin = await globalAdmin(t);
    const existing = await newUser(t);
    await request(t.app)
      .post('/users/')
      .set(admin.auth)
      .send({ email: existing.email.toUpperCase(), password, full_name: 'Copy' })
      .expect(409);
  });

  it('needs a token', async () => {
    await request(t.app).post('/users/').send({ email: 'x@example.com', password, full_name: 'X' }).expect(401);
  });

  it('is for global admins only: a tenant admin and a service account get 403 and nobody is created', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    const bot = await serviceAccount(t, tenant);
    const email = `forbidden-${unique()}@example.com`;
    await request(t.app).post('/users/').set(tenantAdmin.auth).send({ email, password, full_name: 'X' }).expect(403);
    await request(t.app).post('/users/').set(bot.auth).send({ email, password, full_name: 'X' }).expect(403);
    const admin = await globalAdmin(t);
    expect((await request(t.app).get(`/users/?search=${email}`).set(admin.auth).expect(200)).body.items).toEqual([]);
  });

  it.each([
    ['a short password', { password: 'short' }, 'body.password'],
    ['a bad e-mail address', { email: 'not-an-address' }, 'body.email'],
    ['an empty name', { full_name: '   ' }, 'body.full_name'],
    ['an unknown field', { is_global_admin: true }, 'body'],
  ])('rejects %s with 422 and creates nobody', async (_name, change, path) => {
    const admin = await globalAdmin(t);
    const email = `invalid-${unique()}@example.com`;
    const res = await request(t.app)
      .post('/users/')
      .set(admin.auth)
      .send({ email, password, full_name: 'Val Id', ...change })
      .expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect((await request(t.app).get(`/users/?search=${email}`).set(admin.auth).expect(200)).body.items).toEqual([]);
  });
});

describe('GET /users/{user_id}', () => {
  it('shows yourself', async () => {
    const me = await signedIn(t);
    const res = await request(t.app).get(`/users/${me.user.id}`).set(me.auth).expect(200);
    expect(res.body).toEqual(
      userShape({
        id: me.user.id,
        email: me.user.email,
        full_name: 'Test User',
        is_global_admin: false,
        email_verified: true,
        status: 'active',
      }),
    );
  });

  it('shows anyone to a global admin', async () => {
    const admin = await globalAdmin(t);
    const other = await newUser(t);
    const res = await request(t.app).get(`/users/${other.id}`).set(admin.auth).expect(200);
    expect(res.body).toEqual(userShape({ id: other.id, email: other.email }));
  });

  it('hides other users, even fellow members of a tenant, as 404', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    const colleague = await signedIn(t, { tenant, role: 'editor' });
    const res = await request(t.app).get(`/users/${colleague.user.id}`).set(tenantAdmin.auth).expect(404);
    expect(res.body).toMatchObject({ status: 404, detail: 'No such user.' });
  });

  it('answers 404 for an unknown id, 422 for a malformed one', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get('/users/00000000-0000-4000-8000-000000000000').set(admin.auth).expect(404);
    const res = await request(t.app).get('/users/not-a-uuid').set(admin.auth).expect(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'params.user_id' })]);
  });

  it('needs a token, and a user rather than a service account', async () => {
    const someone = await newUser(t);
    await request(t.app).get(`/users/${someone.id}`).expect(401);
    const bot = await anyServiceAccount();
    await request(t.app).get(`/users/${someone.id}`).set(bot.auth).expect(403);
  });
});

describe('PATCH /users/{user_id}', () => {
  it('lets you change your own name', async () => {
    const me = await signedIn(t);
    const res = await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ full_name: 'Renamed Me' })
      .expect(200);
    expect(res.body).toEqual(userShape({ id: me.user.id, email: me.user.email, full_name: 'Renamed Me' }));
    expect((await stored(me.user.id)).full_name).toBe('Renamed Me');
  });

  it('changes your own password given the current one, ending your other sessions but not this one', async () => {
    const me = await signedIn(t);
    const other = await login(t, me.user.email);
    const next = 'a brand new passphrase';
    await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ password: next, current_password: password })
      .expect(200);
    await request(t.app).get('/auth/currentuser').set(me.auth).expect(200);
    await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${other.access_token}` })
      .expect(401);
    await request(t.app).post('/auth/login').send({ username: me.user.email, password }).expect(401);
    await login(t, me.user.email, next);
  });

  it.each([
    ['without the current password', {}, false],
    ['with a wrong current password', { current_password: 'not my password' }, false],
    ['without the current password, even for a global admin', {}, true],
  ])('refuses a new password %s with 422 and keeps the old one', async (_name, extra, globalAdmin) => {
    const me = await signedIn(t, { globalAdmin });
    const res = await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ password: 'a brand new passphrase', ...extra })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.current_password', message: 'does not match' }]);
    await login(t, me.user.email);
  });

  it.each([
    ['email', { email: 'mine@example.com' }],
    ['status', { status: 'blocked' }],
    ['email_verified', { email_verified: false }],
  ])('refuses to let a normal user set their own %s (403) and changes nothing', async (field, change) => {
    const me = await signedIn(t);
    const before = await stored(me.user.id);
    const res = await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ full_name: 'Sneaky', ...change })
      .expect(403);
    expect(res.body.detail).toContain(field);
    expect(await stored(me.user.id)).toEqual(before);
  });

  it('rejects is_global_admin (not a field of this endpoint) with 422 and changes nothing', async () => {
    const me = await signedIn(t);
    const res = await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ is_global_admin: true })
      .expect(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'body' })]);
    expect((await stored(me.user.id)).is_global_admin).toBe(false);
    await request(t.app).get('/users/').set(me.auth).expect(403);
  });

  it('rejects a short password with 422', async () => {
    const me = await signedIn(t);
    const res = await request(t.app)
      .patch(`/users/${me.user.id}`)
      .set(me.auth)
      .send({ password: 'short', current_password: password })
      .expect(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'body.password' })]);
  });

  it('hides other users from a non-admin: 404, and nothing changes', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    const colleague = await signedIn(t, { tenant, role: 'author' });
    await request(t.app)
      .patch(`/users/${colleague.user.id}`)
      .set(tenantAdmin.auth)
      .send({ full_name: 'Hijacked' })
      .expect(404);
    expect((await stored(colleague.user.id)).full_name).toBe('Test User');
  });

  it('lets a global admin change e-mail, verification and status; blocking ends the user’s sessions', async () => {
    const admin = await globalAdmin(t);
    const target = await signedIn(t);
    const email = `changed-${unique()}@example.com`;
    const res = await request(t.app)
      .patch(`/users/${target.user.id}`)
      .set(admin.auth)
      .send({ email, email_verified: false, status: 'blocked' })
      .expect(200);
    expect(res.body).toEqual(userShape({ id: target.user.id, email, email_verified: false, status: 'blocked' }));
    await request(t.app).get('/auth/currentuser').set(target.auth).expect(401);
    const blocked = await request(t.app).post('/auth/login').send({ username: email, password }).expect(403);
    expect(blocked.body.type).toBe('/problems/account-blocked');

    await request(t.app)
      .patch(`/users/${target.user.id}`)
      .set(admin.auth)
      .send({ status: 'active', email_verified: true })
      .expect(200);
    await login(t, email);
  });

  it('lets a global admin set another user’s password without knowing the current one', async () => {
    const admin = await globalAdmin(t);
    const target = await newUser(t);
    await request(t.app)
      .patch(`/users/${target.id}`)
      .set(admin.auth)
      .send({ password: 'set by the admin' })
      .expect(200);
    await login(t, target.email, 'set by the admin');
  });

  it('refuses a global admin blocking themselves with 409', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).patch(`/users/${admin.user.id}`).set(admin.auth).send({ status: 'blocked' }).expect(409);
    await request(t.app).get('/auth/currentuser').set(admin.auth).expect(200);
  });

  it('refuses an e-mail address another user has with 409', async () => {
    const admin = await globalAdmin(t);
    const [a, b] = [await newUser(t), await newUser(t)];
    await request(t.app).patch(`/users/${a.id}`).set(admin.auth).send({ email: b.email.toUpperCase() }).expect(409);
    expect((await stored(a.id)).email).toBe(a.email);
  });

  it('answers 404 for an unknown user', async () => {
    const admin = await globalAdmin(t);
    await request(t.app)
      .patch('/users/00000000-0000-4000-8000-000000000000')
      .set(admin.auth)
      .send({ full_name: 'Ghost' })
      .expect(404);
  });

  it('needs a token, and a user rather than a service account', async () => {
    const someone = await newUser(t);
    await request(t.app).patch(`/users/${someone.id}`).send({ full_name: 'X' }).expect(401);
    const bot = await anyServiceAccount();
    await request(t.app).patch(`/users/${someone.id}`).set(bot.auth).send({ full_name: 'X' }).expect(403);
  });
});

describe('DELETE /users/{user_id}', () => {
  it('deletes a user: gone from the directory, their tokens stop working, their memberships go', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const target = await signedIn(t, { tenant, role: 'editor' });
    await request(t.app).delete(`/users/${target.user.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/users/${target.user.id}`).set(admin.auth).expect(404);
    await request(t.app).get('/auth/currentuser').set(target.auth).expect(401);
    const members = await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200);
    expect(members.body.items).toEqual([]);
  });

  it('takes a deleted user out of the list', async () => {
    const admin = await globalAdmin(t);
    const marker = `gone${unique()}`;
    const target = await newUser(t, { full_name: marker });
    expect(idsOf((await request(t.app).get(`/users/?search=${marker}`).set(admin.auth).expect(200)).body)).toEqual([
      target.id,
    ]);
    await request(t.app).delete(`/users/${target.id}`).set(admin.auth).expect(204);
    expect((await request(t.app).get(`/users/?search=${marker}`).set(admin.auth).expect(200)).body.items).toEqual([]);
  });

  it('refuses deleting yourself with 409', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).delete(`/users/${admin.user.id}`).set(admin.auth).expect(409);
    await request(t.app).get(`/users/${admin.user.id}`).set(admin.auth).expect(200);
  });

  it('is for global admins only: a tenant admin deleting a member gets 403 and the member stays', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    const member = await signedIn(t, { tenant, role: 'author' });
    await request(t.app).delete(`/users/${member.user.id}`).set(tenantAdmin.auth).expect(403);
    await request(t.app).get('/auth/currentuser').set(member.auth).expect(200);
  });

  it('answers 404 for an unknown user, 422 for a malformed id, 401 without a token', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).delete('/users/00000000-0000-4000-8000-000000000000').set(admin.auth).expect(404);
    await request(t.app).delete('/users/123').set(admin.auth).expect(422);
    await request(t.app).delete(`/users/${admin.user.id}`).expect(401);
  });
});

describe('PATCH /users/{user_id}/global-admin', () => {
  it('grants global admin status, which takes effect on the user’s current token', async () => {
    const admin = await globalAdmin(t);
    const target = await signedIn(t);
    await request(t.app).get('/users/').set(target.auth).expect(403);
    const res = await request(t.app)
      .patch(`/users/${target.user.id}/global-admin`)
      .set(admin.auth)
      .send({ is_global_admin: true })
      .expect(200);
    expect(res.body).toEqual(userShape({ id: target.user.id, is_global_admin: true }));
    await request(t.app).get('/users/').set(target.auth).expect(200);
  });

  it('withdraws it again', async () => {
    const admin = await globalAdmin(t);
    const other = await globalAdmin(t);
    const res = await request(t.app)
      .patch(`/users/${other.user.id}/global-admin`)
      .set(admin.auth)
      .send({ is_global_admin: false })
      .expect(200);
    expect(res.body.is_global_admin).toBe(false);
    await request(t.app).get('/users/').set(other.auth).expect(403);
  });

  it('refuses to withdraw the last active global admin with 409', async () => {
    const admin = await globalAdmin(t);
    // Leave this admin as the only one (other tests' admins are demoted).
    await t.services.db.query(
      sql.typeAlias('void')`update users set is_global_admin = false where id <> ${admin.user.id}`,
    );
    await accessChangeHeard(t);
    const res = await request(t.app)
      .patch(`/users/${admin.user.id}/global-admin`)
      .set(admin.auth)
      .send({ is_global_admin: false })
      .expect(409);
    expect(res.body.detail).toMatch(/no global administrator/);
    expect((await request(t.app).get(`/users/${admin.user.id}`).set(admin.auth).expect(200)).body.is_global_admin).toBe(
      true,
    );
  });

  it('is for global admins only: a tenant admin cannot promote themselves (403) and stays a normal user', async () => {
    const tenant = await newTenant(t);
    const tenantAdmin = await signedIn(t, { tenant, role: 'admin' });
    await request(t.app)
      .patch(`/users/${tenantAdmin.user.id}/global-admin`)
      .set(tenantAdmin.auth)
      .send({ is_global_admin: true })
      .expect(403);
    const flag = await t.services.db.oneFirst(
      sql.type(
        z.object({ is_global_admin: z.boolean() }),
      )`select is_global_admin from users where id = ${tenantAdmin.user.id}`,
    );
    expect(flag).toBe(false);
    const bot = await serviceAccount(t, tenant);
    await request(t.app)
      .patch(`/users/${tenantAdmin.user.id}/global-admin`)
      .set(bot.auth)
      .send({ is_global_admin: true })
      .expect(403);
  });

  it('answers 404 for an unknown user and 401 without a token', async () => {
    const admin = await globalAdmin(t);
    await request(t.app)
      .patch('/users/00000000-0000-4000-8000-000000000000/global-admin')
      .set(admin.auth)
      .send({ is_global_admin: true })
      .expect(404);
    await request(t.app).patch(`/users/${admin.user.id}/global-admin`).send({ is_global_admin: true }).expect(401);
  });

  it.each([
    ['no body', undefined],
    ['a string flag', { is_global_admin: 'yes' }],
    ['an extra field', { is_global_admin: true, status: 'active' }],
  ])('rejects %s with 422', async (_name, body) => {
    const admin = await globalAdmin(t);
    const target = await newUser(t);
    const req = request(t.app).patch(`/users/${target.id}/global-admin`).set(admin.auth);
    await (body === undefined ? req : req.send(body)).expect(422);
    expect((await stored(target.id)).is_global_admin).toBe(false);
  });
});
