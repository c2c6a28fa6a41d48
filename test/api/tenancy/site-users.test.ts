// Who works on which site: /sites/{site_identifier}/users, available-users,
// assigning and removing, and /users/{user_id}/sites. Managed by the tenant's
// admins; another tenant's sites and users are 404.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newUser, serviceAccount, signedIn } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, idsOf, staffedTenant } from '../../helpers/identity.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const missing = '00000000-0000-4000-8000-000000000000';

describe('GET /sites/{site_identifier}/users', () => {
  it('lists the users assigned to the site with their tenant role, by id and by slug', async () => {
    const { site, admin, editor, author } = await staffedTenant(t);
    const res = await request(t.app).get(`/sites/${site.id}/users`).set(admin.auth).expect(200);
    expect(res.body).toEqual({
      items: [
        {
          id: editor.user.id,
          email: editor.user.email,
          full_name: 'Test User',
          is_global_admin: false,
          email_verified: true,
          status: 'active',
          created_at: expect.any(String),
          role: 'editor',
          assigned_at: expect.any(String),
        },
      ],
      next_cursor: null,
    });
    expect(idsOf(res.body)).not.toContain(author.user.id);
    expect((await request(t.app).get(`/sites/${site.slug}/users`).set(admin.auth).expect(200)).body).toEqual(res.body);
  });

  it('pages with limit and cursor, counts with include_total, and rejects a garbage cursor', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const more = [
      await signedIn(t, { tenant, role: 'author', sites: [site] }),
      await signedIn(t, { tenant, role: 'editor', sites: [site] }),
    ];
    expect(await expectPaginates(t, admin.auth, `/sites/${site.id}/users`)).toEqual([
      editor.user.id,
      ...more.map((m) => m.user.id),
    ]);
  });

  it('is refused to an assigned editor and to a service account with 403', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).get(`/sites/${site.id}/users`).set(editor.auth).expect(403);
    await request(t.app).get(`/sites/${site.id}/users`).set(bot.auth).expect(403);
  });

  it('hides another tenant’s site (404) from its admin, and a site from an unassigned author', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).get(`/sites/${b.site.id}/users`).set(a.admin.auth).expect(404);
    await request(t.app).get(`/sites/${b.site.slug}/users`).set(a.admin.auth).expect(404);
    await request(t.app).get(`/sites/${a.site.id}/users`).set(a.author.auth).expect(404);
  });

  it('needs a token (401) and a valid query (422)', async () => {
    const { site, admin } = await staffedTenant(t);
    await request(t.app).get(`/sites/${site.id}/users`).expect(401);
    await request(t.app).get(`/sites/${site.id}/users?limit=1000`).set(admin.auth).expect(422);
  });
});

describe('GET /sites/{site_identifier}/available-users', () => {
  it('lists the members of the site’s tenant not assigned to it yet, and nobody from outside', async () => {
    const { site, admin, editor, author } = await staffedTenant(t);
    const outsider = await newUser(t);
    const res = await request(t.app).get(`/sites/${site.slug}/available-users`).set(admin.auth).expect(200);
    expect(res.body).toEqual({
      items: [
        expect.objectContaining({ id: admin.user.id, email: admin.user.email }),
        expect.objectContaining({ id: author.user.id, status: 'active' }),
      ],
      next_cursor: null,
    });
    expect(idsOf(res.body)).not.toContain(editor.user.id);
    expect(idsOf(res.body)).not.toContain(outsider.id);
  });

  it('pages with limit and cursor', async () => {
    const { site, admin } = await staffedTenant(t);
    await expectPaginates(t, admin.auth, `/sites/${site.id}/available-users`);
  });

  it('is refused to an assigned editor (403), hidden from another tenant’s admin (404), and needs a token (401)', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).get(`/sites/${a.site.id}/available-users`).set(a.editor.auth).expect(403);
    await request(t.app).get(`/sites/${a.site.id}/available-users`).set(b.admin.auth).expect(404);
    await request(t.app).get(`/sites/${a.site.id}/available-users`).expect(401);
  });

  it('rejects a bad query with 422', async () => {
    const { site, admin } = await staffedTenant(t);
    await request(t.app).get(`/sites/${site.id}/available-users?include_total=1`).set(admin.auth).expect(422);
  });
});

describe('POST /sites/{site_identifier}/users/{user_id}', () => {
  it('gives a member of the tenant access to the site', async () => {
    const { site, admin, author } = await staffedTenant(t);
    await request(t.app).get(`/sites/${site.id}`).set(author.auth).expect(404);
    const res = await request(t.app).post(`/sites/${site.id}/users/${author.user.id}`).set(admin.auth).expect(201);
    expect(res.body).toEqual({ site_id: site.id, user_id: author.user.id, created_at: expect.any(String) });
    await request(t.app).get(`/sites/${site.id}`).set(author.auth).expect(200);
    expect(idsOf((await request(t.app).get(`/sites/${site.id}/users`).set(admin.auth).expect(200)).body)).toContain(
      author.user.id,
    );
    expect(
      idsOf((await request(t.app).get(`/sites/${site.id}/available-users`).set(admin.auth).expect(200)).body),
    ).not.toContain(author.user.id);
  });

  it('assigns by slug too, and refuses a second assignment with 409', async () => {
    const { site, admin, author } = await staffedTenant(t);
    await request(t.app).post(`/sites/${site.slug}/users/${author.user.id}`).set(admin.auth).expect(201);
    await request(t.app).post(`/sites/${site.slug}/users/${author.user.id}`).set(admin.auth).expect(409);
  });

  it('treats a user outside the site’s tenant as not existing (404), and grants nothing', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const res = await request(t.app)
      .post(`/sites/${a.site.id}/users/${b.editor.user.id}`)
      .set(a.admin.auth)
      .expect(404);
    expect(res.body.detail).toMatch(/No such user/);
    await request(t.app).get(`/sites/${a.site.id}`).set(b.editor.auth).expect(404);
    await request(t.app).post(`/sites/${a.site.id}/users/${missing}`).set(a.admin.auth).expect(404);
  });

  it('hides another tenant’s site from a tenant admin (404): they cannot assign even their own member there', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).post(`/sites/${b.site.id}/users/${a.author.user.id}`).set(a.admin.auth).expect(404);
    await request(t.app).post(`/sites/${b.site.id}/users/${b.author.user.id}`).set(a.admin.auth).expect(404);
    await request(t.app).get(`/sites/${b.site.id}`).set(b.author.auth).expect(404);
  });

  it('is refused to an assigned editor and to a service account with 403', async () => {
    const { tenant, site, admin, editor, author } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).post(`/sites/${site.id}/users/${author.user.id}`).set(editor.auth).expect(403);
    await request(t.app).post(`/sites/${site.id}/users/${author.user.id}`).set(bot.auth).expect(403);
    await request(t.app).get(`/sites/${site.id}`).set(author.auth).expect(404);
  });

  it('needs a token (401) and a well-formed user id (422)', async () => {
    const { site, admin, author } = await staffedTenant(t);
    await request(t.app).post(`/sites/${site.id}/users/${author.user.id}`).expect(401);
    const res = await request(t.app).post(`/sites/${site.id}/users/someone`).set(admin.auth).expect(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'params.user_id' })]);
  });
});

describe('DELETE /sites/{site_identifier}/users/{user_id}', () => {
  it('takes the user’s access to the site away, by id or by slug', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}/users/${editor.user.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/sites/${site.id}`).set(editor.auth).expect(404);
    expect((await request(t.app).get(`/sites/${site.id}/users`).set(admin.auth).expect(200)).body.items).toEqual([]);

    const other = await signedIn(t, { tenant, role: 'author', sites: [site] });
    await request(t.app).delete(`/sites/${site.slug}/users/${other.user.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/sites/${site.slug}`).set(other.auth).expect(404);
  });

  it('answers 404 for a user who is not assigned', async () => {
    const { site, admin, author } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}/users/${author.user.id}`).set(admin.auth).expect(404);
  });

  it('is refused to an assigned editor (403), and the assignment stays', async () => {
    const { tenant, site, editor } = await staffedTenant(t);
    const colleague = await signedIn(t, { tenant, role: 'author', sites: [site] });
    await request(t.app).delete(`/sites/${site.id}/users/${colleague.user.id}`).set(editor.auth).expect(403);
    await request(t.app).get(`/sites/${site.id}`).set(colleague.auth).expect(200);
  });

  it('hides another tenant’s site from a tenant admin (404), and the assignment stays', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).delete(`/sites/${b.site.id}/users/${b.editor.user.id}`).set(a.admin.auth).expect(404);
    await request(t.app).get(`/sites/${b.site.id}`).set(b.editor.auth).expect(200);
  });

  it('needs a token (401) and a well-formed user id (422)', async () => {
    const { site, admin, editor } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}/users/${editor.user.id}`).expect(401);
    await request(t.app).delete(`/sites/${site.id}/users/42`).set(admin.auth).expect(422);
  });
});

describe('GET /users/{user_id}/sites', () => {
  it('lists your own sites: the assigned ones for an editor, all of the tenant’s for its admin', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const other = await newSite(t, tenant);
    const mine = await request(t.app).get(`/users/${editor.user.id}/sites`).set(editor.auth).expect(200);
    expect(mine.body).toEqual({
      items: [
        {
          id: site.id,
          tenant_id: tenant.id,
          slug: site.slug,
          name: site.name,
          default_locale: 'en',
          locales: ['en'],
          domain: null,
          settings: {},
          visibility: 'private',
          created_at: expect.any(String),
        },
      ],
      next_cursor: null,
    });
    expect(idsOf((await request(t.app).get(`/users/${admin.user.id}/sites`).set(admin.auth).expect(200)).body)).toEqual(
      [site.id, other.id],
    );
  });

  it('lists anyone’s sites, in every tenant, for a global admin', async () => {
    const admin = await globalAdmin(t);
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app)
      .post(`/admin/tenants/${b.tenant.id}/users/${a.editor.user.id}`)
      .set(admin.auth)
      .send({ role: 'admin' })
      .expect(201);
    const res = await request(t.app).get(`/users/${a.editor.user.id}/sites`).set(admin.auth).expect(200);
    expect(idsOf(res.body)).toEqual([a.site.id, b.site.id]);
  });

  it('shows a tenant admin a member’s sites within their own tenant only', async () => {
    const admin = await globalAdmin(t);
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    // A's editor is also B's admin; A's admin must not learn about B's sites.
    await request(t.app)
      .post(`/admin/tenants/${b.tenant.id}/users/${a.editor.user.id}`)
      .set(admin.auth)
      .send({ role: 'admin' })
      .expect(201);
    const res = await request(t.app).get(`/users/${a.editor.user.id}/sites`).set(a.admin.auth).expect(200);
    expect(idsOf(res.body)).toEqual([a.site.id]);
  });

  it('hides users the caller does not administer as 404: a colleague for an editor, another tenant’s user for a tenant admin', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).get(`/users/${a.author.user.id}/sites`).set(a.editor.auth).expect(404);
    await request(t.app).get(`/users/${b.editor.user.id}/sites`).set(a.admin.auth).expect(404);
    const admin = await globalAdmin(t);
    await request(t.app).get(`/users/${missing}/sites`).set(admin.auth).expect(404);
  });

  it('pages with limit and cursor', async () => {
    const { tenant, admin } = await staffedTenant(t);
    await newSite(t, tenant);
    await newSite(t, tenant);
    await expectPaginates(t, admin.auth, `/users/${admin.user.id}/sites`);
  });

  it('needs a token (401), a user rather than a service account (403), and a well-formed id (422)', async () => {
    const { tenant, admin, editor } = await staffedTenant(t);
    await request(t.app).get(`/users/${editor.user.id}/sites`).expect(401);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).get(`/users/${editor.user.id}/sites`).set(bot.auth).expect(403);
    await request(t.app).get('/users/me/sites').set(editor.auth).expect(422);
  });
});
