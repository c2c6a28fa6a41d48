// Tenant management under /admin/tenants: global admins only, except
// /admin/tenants/current/info, which any signed-in user may read.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, newUser, serviceAccount, signedIn } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, idsOf, staffedTenant, unique } from '../../helpers/identity.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const missing = '00000000-0000-4000-8000-000000000000';

const tenantShape = (fields: Record<string, unknown> = {}) => ({
  id: expect.any(String),
  name: expect.any(String),
  slug: expect.any(String),
  status: 'active',
  monthly_credit_limit: null,
  test_mode: false,
  settings: {},
  created_at: expect.any(String),
  ...fields,
});

/** Every /admin/tenants route but current/info refuses anyone who is not a global admin. */
async function expectAdminOnly(send: (auth: { Authorization: string } | undefined) => request.Test) {
  const { admin, editor } = await staffedTenant(t);
  await send(undefined).expect(401);
  await send(admin.auth).expect(403);
  await send(editor.auth).expect(403);
}

const call =
  (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) =>
  (auth: { Authorization: string } | undefined) => {
    let req = request(t.app)[method](path);
    if (auth) req = req.set(auth);
    return body ? req.send(body) : req;
  };

describe('GET /admin/tenants/', () => {
  it('lists tenants for a global admin', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t, 'Listed Tenant');
    const res = await request(t.app).get('/admin/tenants/?limit=200').set(admin.auth).expect(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.items).toContainEqual(tenantShape({ id: tenant.id, name: 'Listed Tenant', slug: tenant.slug }));
  });

  it('pages with limit and cursor, counts with include_total, and rejects a garbage cursor', async () => {
    const admin = await globalAdmin(t);
    await newTenant(t);
    await newTenant(t);
    await expectPaginates(t, admin.auth, '/admin/tenants/');
  });

  it('is refused without a token (401) and to anyone but a global admin (403)', async () => {
    await expectAdminOnly(call('get', '/admin/tenants/'));
    const bot = await serviceAccount(t, await newTenant(t));
    await request(t.app).get('/admin/tenants/').set(bot.auth).expect(403);
  });

  it('rejects a limit above 200 with 422', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get('/admin/tenants/?limit=201').set(admin.auth).expect(422);
  });
});

describe('POST /admin/tenants/', () => {
  it('creates a tenant with the slug given', async () => {
    const admin = await globalAdmin(t);
    const slug = `given-${unique()}`;
    const res = await request(t.app)
      .post('/admin/tenants/')
      .set(admin.auth)
      .send({ name: 'Given Slug', slug, monthly_credit_limit: 500, settings: { theme: 'dark' } })
      .expect(201);
    expect(res.body).toEqual(
      tenantShape({ name: 'Given Slug', slug, monthly_credit_limit: 500, settings: { theme: 'dark' } }),
    );
    expect((await request(t.app).get(`/admin/tenants/${res.body.id}`).set(admin.auth).expect(200)).body).toEqual(
      res.body,
    );
  });

  it('derives the slug from the name when none is given, numbering it when taken', async () => {
    const admin = await globalAdmin(t);
    const marker = unique();
    const first = await request(t.app)
      .post('/admin/tenants/')
      .set(admin.auth)
      .send({ name: `Ácme ${marker} Corp.` })
      .expect(201);
    expect(first.body.slug).toBe(`acme-${marker}-corp`);
    const second = await request(t.app)
      .post('/admin/tenants/')
      .set(admin.auth)
      .send({ name: `Acme ${marker} Corp` })
      .expect(201);
    expect(second.body.slug).toBe(`acme-${marker}-corp-2`);
  });

  it('refuses a slug that is taken with 409', async () => {
    const admin = await globalAdmin(t);
    const existing = await newTenant(t);
    const res = await request(t.app)
      .post('/admin/tenants/')
      .set(admin.auth)
      .send({ name: 'Clash', slug: existing.slug })
      .expect(409);
    expect(res.body.detail).toContain(existing.slug);
  });

  it('is refused without a token (401) and to anyone but a global admin (403), creating nothing', async () => {
    const name = `Forbidden ${unique()}`;
    await expectAdminOnly(call('post', '/admin/tenants/', { name }));
    const admin = await globalAdmin(t);
    const all = await request(t.app).get('/admin/tenants/?limit=200').set(admin.auth).expect(200);
    expect(all.body.items.map((tenant: { name: string }) => tenant.name)).not.toContain(name);
  });

  it.each([
    ['no name', {}, 'body.name'],
    ['a slug with capitals and spaces', { name: 'X', slug: 'Not A Slug' }, 'body.slug'],
    ['a negative credit limit', { name: 'X', monthly_credit_limit: -1 }, 'body.monthly_credit_limit'],
    ['an unknown field', { name: 'X', status: 'blocked' }, 'body'],
  ])('rejects %s with 422', async (_name, body, path) => {
    const admin = await globalAdmin(t);
    const res = await request(t.app).post('/admin/tenants/').set(admin.auth).send(body).expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });
});

describe('GET /admin/tenants/{tenant_id}', () => {
  it('shows a tenant to a global admin', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t, 'Shown');
    const res = await request(t.app).get(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(200);
    expect(res.body).toEqual(tenantShape({ id: tenant.id, name: 'Shown', slug: tenant.slug }));
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    await expectAdminOnly(call('get', `/admin/tenants/${tenant.id}`));
  });

  it('answers 404 for an unknown tenant and 422 for a malformed id', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get(`/admin/tenants/${missing}`).set(admin.auth).expect(404);
    await request(t.app).get('/admin/tenants/acme').set(admin.auth).expect(422);
  });
});

describe('PATCH /admin/tenants/{tenant_id}', () => {
  it('changes the fields sent and keeps the rest', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t, 'Before');
    const slug = `after-${unique()}`;
    const res = await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(admin.auth)
      .send({
        name: 'After',
        slug,
        status: 'suspended',
        monthly_credit_limit: 1000,
        test_mode: true,
        settings: { a: 1 },
      })
      .expect(200);
    expect(res.body).toEqual(
      tenantShape({
        id: tenant.id,
        name: 'After',
        slug,
        status: 'suspended',
        monthly_credit_limit: 1000,
        test_mode: true,
        settings: { a: 1 },
      }),
    );

    const renamed = await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(admin.auth)
      .send({ name: 'Again' })
      .expect(200);
    expect(renamed.body).toEqual({ ...res.body, name: 'Again' });
  });

  it('clears the credit limit with null', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(admin.auth)
      .send({ monthly_credit_limit: 10 })
      .expect(200);
    const res = await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(admin.auth)
      .send({ monthly_credit_limit: null })
      .expect(200);
    expect(res.body.monthly_credit_limit).toBeNull();
  });

  it('refuses another tenant’s slug with 409 and keeps its own', async () => {
    const admin = await globalAdmin(t);
    const [a, b] = [await newTenant(t), await newTenant(t)];
    await request(t.app).patch(`/admin/tenants/${a.id}`).set(admin.auth).send({ slug: b.slug }).expect(409);
    expect((await request(t.app).get(`/admin/tenants/${a.id}`).set(admin.auth).expect(200)).body.slug).toBe(a.slug);
  });

  it('is refused to the tenant’s own admin (403, nothing changes) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    await expectAdminOnly(call('patch', `/admin/tenants/${tenant.id}`, { monthly_credit_limit: 999999 }));
    const admin = await globalAdmin(t);
    expect(
      (await request(t.app).get(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(200)).body.monthly_credit_limit,
    ).toBeNull();
  });

  it('answers 404 for an unknown tenant', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).patch(`/admin/tenants/${missing}`).set(admin.auth).send({ name: 'Ghost' }).expect(404);
  });

  it.each([
    ['an unknown field', { id: missing }],
    ['an unknown status', { status: 'deleted' }],
    ['an empty name', { name: '' }],
  ])('rejects %s with 422', async (_name, body) => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    await request(t.app).patch(`/admin/tenants/${tenant.id}`).set(admin.auth).send(body).expect(422);
  });
});

describe('DELETE /admin/tenants/{tenant_id}', () => {
  it('refuses while the tenant has sites (409), then deletes it once they are gone', async () => {
    const admin = await globalAdmin(t);
    const { tenant, site, editor } = await staffedTenant(t);
    const refused = await request(t.app).delete(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(409);
    expect(refused.body.detail).toMatch(/1 site/);
    await request(t.app).get(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(200);

    await request(t.app).delete(`/sites/${site.id}`).set(admin.auth).expect(204);
    await request(t.app).delete(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(404);
    // Its memberships went with it.
    expect(
      (await request(t.app).get('/admin/tenants/current/info').set(editor.auth).expect(200)).body.memberships,
    ).toEqual([]);
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    await expectAdminOnly(call('delete', `/admin/tenants/${tenant.id}`));
    await request(t.app).get(`/admin/tenants/${tenant.id}`).set(admin.auth).expect(200);
  });

  it('answers 404 for an unknown tenant and 422 for a malformed id', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).delete(`/admin/tenants/${missing}`).set(admin.auth).expect(404);
    await request(t.app).delete('/admin/tenants/nope').set(admin.auth).expect(422);
  });
});

describe('GET /admin/tenants/{tenant_id}/available-users', () => {
  it('lists the users who are not members yet', async () => {
    const admin = await globalAdmin(t);
    const { tenant, editor } = await staffedTenant(t);
    const outsider = await newUser(t);
    const res = await request(t.app)
      .get(`/admin/tenants/${tenant.id}/available-users?limit=200`)
      .set(admin.auth)
      .expect(200);
    const ids = idsOf(res.body);
    expect(ids).toContain(outsider.id);
    expect(ids).not.toContain(editor.user.id);
    expect(res.body.items.find((u: { id: string }) => u.id === outsider.id)).toEqual({
      id: outsider.id,
      email: outsider.email,
      full_name: 'Test User',
      is_global_admin: false,
      email_verified: true,
      status: 'active',
      created_at: expect.any(String),
    });
  });

  it('pages with limit and cursor', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    await expectPaginates(t, admin.auth, `/admin/tenants/${tenant.id}/available-users`);
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    await expectAdminOnly(call('get', `/admin/tenants/${tenant.id}/available-users`));
  });

  it('answers 404 for an unknown tenant and 422 for a bad query', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get(`/admin/tenants/${missing}/available-users`).set(admin.auth).expect(404);
    const tenant = await newTenant(t);
    await request(t.app).get(`/admin/tenants/${tenant.id}/available-users?limit=0`).set(admin.auth).expect(422);
  });
});

describe('POST /admin/tenants/{tenant_id}/clone', () => {
  it('copies settings, sites with prefixed slugs, memberships and site assignments, but not service accounts', async () => {
    const admin = await globalAdmin(t);
    const source = await newTenant(t, 'Source');
    await request(t.app)
      .patch(`/admin/tenants/${source.id}`)
      .set(admin.auth)
      .send({ monthly_credit_limit: 70, settings: { plan: 'pro' } })
      .expect(200);
    const first = await newSite(t, source);
    const second = await newSite(t, source);
    const tenantAdmin = await signedIn(t, { tenant: source, role: 'admin' });
    const editor = await signedIn(t, { tenant: source, role: 'editor', sites: [first] });
    await serviceAccount(t, source, ['sites:read'], tenantAdmin);

    const slug = `copy-${unique()}`;
    const res = await request(t.app)
      .post(`/admin/tenants/${source.id}/clone`)
      .set(admin.auth)
      .send({ name: 'The Copy', slug })
      .expect(201);
    expect(res.body).toEqual({
      ...tenantShape({ name: 'The Copy', slug, monthly_credit_limit: 70, settings: { plan: 'pro' } }),
      // The content follows as a job on the first copied site (test/api/tenancy/tenant-clone.test.ts).
      copy_job_id: expect.any(String),
      copy_job_url: `/${slug}-${first.slug}/jobs/${res.body.copy_job_id}`,
    });
    const copy = res.body.id as string;
    expect(copy).not.toBe(source.id);

    const sites = await request(t.app).get(`/sites/by-tenant/${copy}`).set(admin.auth).expect(200);
    expect(sites.body.items.map((s: { slug: string }) => s.slug).sort()).toEqual(
      [`${slug}-${first.slug}`, `${slug}-${second.slug}`].sort(),
    );
    expect(sites.body.items.every((s: { tenant_id: string }) => s.tenant_id === copy)).toBe(true);

    const members = await request(t.app).get(`/admin/tenants/${copy}/users`).set(admin.auth).expect(200);
    expect(members.body.items.map((m: { id: string; role: string }) => [m.id, m.role])).toEqual([
      [tenantAdmin.user.id, 'admin'],
      [editor.user.id, 'editor'],
    ]);

    // The editor reaches the copy of their site, and not the other copy.
    await request(t.app).get(`/sites/${slug}-${first.slug}`).set(editor.auth).expect(200);
    await request(t.app).get(`/sites/${slug}-${second.slug}`).set(editor.auth).expect(404);

    const accounts = await request(t.app).get(`/api/service-accounts/?tenant_id=${copy}`).set(admin.auth).expect(200);
    expect(accounts.body.items).toEqual([]);
    // The source is untouched.
    expect(
      idsOf((await request(t.app).get(`/sites/by-tenant/${source.id}`).set(admin.auth).expect(200)).body).sort(),
    ).toEqual([first.id, second.id].sort());
  });

  it('derives the slug from the name when none is given', async () => {
    const admin = await globalAdmin(t);
    const source = await newTenant(t);
    const marker = unique();
    const res = await request(t.app)
      .post(`/admin/tenants/${source.id}/clone`)
      .set(admin.auth)
      .send({ name: `Clone ${marker}` })
      .expect(201);
    expect(res.body.slug).toBe(`clone-${marker}`);
  });

  it('copies a site whose prefixed slug must be cut to 63 characters into a valid slug', async () => {
    const admin = await globalAdmin(t);
    const source = await newTenant(t);
    // 63 characters: "copy-xxxxxxxx-" (14) and its first 49 characters, cut at 63, end in a hyphen.
    const long = `${'a'.repeat(48)}-${'b'.repeat(14)}`;
    await newSite(t, source, long);
    const slug = `copy-${unique()}`;
    const res = await request(t.app)
      .post(`/admin/tenants/${source.id}/clone`)
      .set(admin.auth)
      .send({ name: 'Long', slug })
      .expect(201);
    const sites = await request(t.app).get(`/sites/by-tenant/${res.body.id}`).set(admin.auth).expect(200);
    const [copied] = sites.body.items as { slug: string }[];
    expect(copied?.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(copied?.slug.length).toBeLessThanOrEqual(63);
    expect(copied?.slug.startsWith(`${slug}-`)).toBe(true);
  });

  it('refuses a taken slug with 409 and leaves no partial copy behind', async () => {
    const admin = await globalAdmin(t);
    const source = await newTenant(t);
    await newSite(t, source);
    const taken = await newTenant(t);
    const name = `Half Copy ${unique()}`;
    await request(t.app)
      .post(`/admin/tenants/${source.id}/clone`)
      .set(admin.auth)
      .send({ name, slug: taken.slug })
      .expect(409);
    const all = await request(t.app).get('/admin/tenants/?limit=200').set(admin.auth).expect(200);
    expect(all.body.items.map((tenant: { name: string }) => tenant.name)).not.toContain(name);
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    await expectAdminOnly(call('post', `/admin/tenants/${tenant.id}/clone`, { name: 'Mine Now' }));
  });

  it('answers 404 for an unknown tenant', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).post(`/admin/tenants/${missing}/clone`).set(admin.auth).send({ name: 'Ghost' }).expect(404);
  });

  it('rejects a body without a name, or with fields a clone does not take, with 422', async () => {
    const admin = await globalAdmin(t);
    const source = await newTenant(t);
    await request(t.app).post(`/admin/tenants/${source.id}/clone`).set(admin.auth).send({}).expect(422);
    await request(t.app)
      .post(`/admin/tenants/${source.id}/clone`)
      .set(admin.auth)
      .send({ name: 'X', settings: {} })
      .expect(422);
  });
});

describe('GET /admin/tenants/{tenant_id}/users', () => {
  it('lists the members with their role and when they joined', async () => {
    const admin = await globalAdmin(t);
    const { tenant, admin: tenantAdmin, editor, author } = await staffedTenant(t);
    const res = await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.items).toEqual([
      expect.objectContaining({
        id: tenantAdmin.user.id,
        email: tenantAdmin.user.email,
        role: 'admin',
        joined_at: expect.any(String),
      }),
      expect.objectContaining({ id: editor.user.id, role: 'editor' }),
      expect.objectContaining({ id: author.user.id, role: 'author' }),
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
  });

  it('pages with limit and cursor', async () => {
    const admin = await globalAdmin(t);
    const { tenant, admin: a, editor: b, author: c } = await staffedTenant(t);
    expect(await expectPaginates(t, admin.auth, `/admin/tenants/${tenant.id}/users`)).toEqual([
      a.user.id,
      b.user.id,
      c.user.id,
    ]);
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    await expectAdminOnly(call('get', `/admin/tenants/${tenant.id}/users`));
  });

  it('answers 404 for an unknown tenant and 422 for a bad query', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get(`/admin/tenants/${missing}/users`).set(admin.auth).expect(404);
    const tenant = await newTenant(t);
    await request(t.app).get(`/admin/tenants/${tenant.id}/users?include_total=yes`).set(admin.auth).expect(422);
  });
});

describe('POST /admin/tenants/{tenant_id}/users/{user_id}', () => {
  it('adds a user as an author by default, and the user sees the membership', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const user = await signedIn(t);
    const res = await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${user.user.id}`)
      .set(admin.auth)
      .expect(201);
    expect(res.body).toEqual({
      tenant_id: tenant.id,
      user_id: user.user.id,
      role: 'author',
      created_at: expect.any(String),
    });
    const info = await request(t.app).get('/admin/tenants/current/info').set(user.auth).expect(200);
    expect(info.body.memberships).toEqual([
      { tenant: { id: tenant.id, name: tenant.name, slug: tenant.slug, status: 'active' }, role: 'author' },
    ]);
  });

  it('adds a user with the role given', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const user = await newUser(t);
    const res = await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${user.id}`)
      .set(admin.auth)
      .send({ role: 'editor' })
      .expect(201);
    expect(res.body.role).toBe('editor');
  });

  it('refuses a user who is already a member with 409, keeping the role', async () => {
    const admin = await globalAdmin(t);
    const { tenant, editor } = await staffedTenant(t);
    await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${editor.user.id}`)
      .set(admin.auth)
      .send({ role: 'admin' })
      .expect(409);
    const members = await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200);
    expect(members.body.items.find((m: { id: string }) => m.id === editor.user.id).role).toBe('editor');
  });

  it('answers 404 for an unknown user or tenant', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const user = await newUser(t);
    await request(t.app).post(`/admin/tenants/${tenant.id}/users/${missing}`).set(admin.auth).expect(404);
    await request(t.app).post(`/admin/tenants/${missing}/users/${user.id}`).set(admin.auth).expect(404);
  });

  it('is refused to the tenant’s own admin (403) and without a token (401)', async () => {
    const { tenant } = await staffedTenant(t);
    const outsider = await newUser(t);
    await expectAdminOnly(call('post', `/admin/tenants/${tenant.id}/users/${outsider.id}`, { role: 'editor' }));
    const admin = await globalAdmin(t);
    expect(
      idsOf((await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200)).body),
    ).not.toContain(outsider.id);
  });

  it('rejects an unknown role or field with 422', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const user = await newUser(t);
    await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${user.id}`)
      .set(admin.auth)
      .send({ role: 'owner' })
      .expect(422);
    await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${user.id}`)
      .set(admin.auth)
      .send({ role: 'admin', note: 'x' })
      .expect(422);
  });
});

describe('PATCH /admin/tenants/{tenant_id}/users/{user_id}', () => {
  it('changes a member’s role, with effect on what they may do', async () => {
    const admin = await globalAdmin(t);
    const { tenant, site, editor } = await staffedTenant(t);
    await request(t.app).patch(`/sites/${site.id}`).set(editor.auth).send({ name: 'Not yet' }).expect(403);
    const res = await request(t.app)
      .patch(`/admin/tenants/${tenant.id}/users/${editor.user.id}`)
      .set(admin.auth)
      .send({ role: 'admin' })
      .expect(200);
    expect(res.body).toEqual({
      tenant_id: tenant.id,
      user_id: editor.user.id,
      role: 'admin',
      created_at: expect.any(String),
    });
    await request(t.app).patch(`/sites/${site.id}`).set(editor.auth).send({ name: 'Now allowed' }).expect(200);
  });

  it('answers 404 for someone who is not a member', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const outsider = await newUser(t);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}/users/${outsider.id}`)
      .set(admin.auth)
      .send({ role: 'editor' })
      .expect(404);
  });

  it('is refused to the tenant’s own admin (403, the role stays) and without a token (401)', async () => {
    const { tenant, author } = await staffedTenant(t);
    await expectAdminOnly(call('patch', `/admin/tenants/${tenant.id}/users/${author.user.id}`, { role: 'admin' }));
    const admin = await globalAdmin(t);
    const members = await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200);
    expect(members.body.items.find((m: { id: string }) => m.id === author.user.id).role).toBe('author');
  });

  it('rejects a missing or unknown role with 422', async () => {
    const admin = await globalAdmin(t);
    const { tenant, author } = await staffedTenant(t);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}/users/${author.user.id}`)
      .set(admin.auth)
      .send({})
      .expect(422);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}/users/${author.user.id}`)
      .set(admin.auth)
      .send({ role: 'root' })
      .expect(422);
  });
});

describe('DELETE /admin/tenants/{tenant_id}/users/{user_id}', () => {
  it('removes the member from the tenant and from its sites', async () => {
    const admin = await globalAdmin(t);
    const { tenant, site, editor } = await staffedTenant(t);
    await request(t.app).get(`/sites/${site.id}`).set(editor.auth).expect(200);
    await request(t.app).delete(`/admin/tenants/${tenant.id}/users/${editor.user.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/sites/${site.id}`).set(editor.auth).expect(404);
    expect(
      idsOf((await request(t.app).get(`/admin/tenants/${tenant.id}/users`).set(admin.auth).expect(200)).body),
    ).not.toContain(editor.user.id);
    // Added back, the user starts without the old site assignment.
    await request(t.app)
      .post(`/admin/tenants/${tenant.id}/users/${editor.user.id}`)
      .set(admin.auth)
      .send({ role: 'editor' })
      .expect(201);
    await request(t.app).get(`/sites/${site.id}`).set(editor.auth).expect(404);
  });

  it('answers 404 for someone who is not a member', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    const outsider = await newUser(t);
    await request(t.app).delete(`/admin/tenants/${tenant.id}/users/${outsider.id}`).set(admin.auth).expect(404);
  });

  it('is refused to the tenant’s own admin (403, the member stays) and without a token (401)', async () => {
    const { tenant, site, editor } = await staffedTenant(t);
    await expectAdminOnly(call('delete', `/admin/tenants/${tenant.id}/users/${editor.user.id}`));
    await request(t.app).get(`/sites/${site.id}`).set(editor.auth).expect(200);
  });

  it('rejects a malformed user id with 422', async () => {
    const admin = await globalAdmin(t);
    const tenant = await newTenant(t);
    await request(t.app).delete(`/admin/tenants/${tenant.id}/users/someone`).set(admin.auth).expect(422);
  });
});

describe('GET /admin/tenants/current/info', () => {
  it('tells any signed-in user their tenants, roles and reachable sites', async () => {
    const { tenant, site, editor } = await staffedTenant(t);
    await newSite(t, tenant); // not assigned to the editor
    const res = await request(t.app).get('/admin/tenants/current/info').set(editor.auth).expect(200);
    expect(res.body).toEqual({
      id: editor.user.id,
      email: editor.user.email,
      full_name: 'Test User',
      is_global_admin: false,
      email_verified: true,
      status: 'active',
      created_at: expect.any(String),
      memberships: [
        { tenant: { id: tenant.id, name: tenant.name, slug: tenant.slug, status: 'active' }, role: 'editor' },
      ],
      sites: [{ id: site.id, tenant_id: tenant.id, slug: site.slug, name: site.name, role: 'editor' }],
    });
  });

  it('answers empty lists for a user without tenants', async () => {
    const loner = await signedIn(t);
    const res = await request(t.app).get('/admin/tenants/current/info').set(loner.auth).expect(200);
    expect(res.body).toMatchObject({ id: loner.user.id, memberships: [], sites: [] });
  });

  it('needs a token, and a user rather than a service account', async () => {
    await request(t.app).get('/admin/tenants/current/info').expect(401);
    const bot = await serviceAccount(t, await newTenant(t));
    await request(t.app).get('/admin/tenants/current/info').set(bot.auth).expect(403);
  });
});
