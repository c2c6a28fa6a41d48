// Sites: /sites/, /sites/by-tenant/{tenant_id} and /sites/{site_identifier}
// (an id or a slug). Tenant admins manage their tenant's sites; editors and
// authors read the sites they are assigned to; other tenants' sites are 404.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, serviceAccount } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, idsOf, staffedTenant, unique } from '../../helpers/identity.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const missing = '00000000-0000-4000-8000-000000000000';

const siteShape = (fields: Record<string, unknown> = {}) => ({
  id: expect.any(String),
  tenant_id: expect.any(String),
  slug: expect.any(String),
  name: expect.any(String),
  default_locale: 'en',
  locales: ['en'],
  domain: null,
  settings: {},
  visibility: 'private',
  created_at: expect.any(String),
  ...fields,
});

/** The site as a global admin sees it: the ground truth for "nothing changed". */
async function stored(id: string) {
  const admin = await globalAdmin(t);
  return (await request(t.app).get(`/sites/${id}`).set(admin.auth).expect(200)).body;
}

describe('GET /sites/', () => {
  it('shows a tenant admin every site of their tenant and nothing of another tenant', async () => {
    const a = await staffedTenant(t);
    const second = await newSite(t, a.tenant);
    const b = await staffedTenant(t);
    const res = await request(t.app).get('/sites/').set(a.admin.auth).expect(200);
    expect(res.body).toEqual({
      items: [
        siteShape({ id: a.site.id, tenant_id: a.tenant.id, slug: a.site.slug, name: a.site.name }),
        siteShape({ id: second.id }),
      ],
      next_cursor: null,
    });
    expect(idsOf(res.body)).not.toContain(b.site.id);
  });

  it('shows an editor only the sites they are assigned to, and an unassigned author none', async () => {
    const { tenant, site, editor, author } = await staffedTenant(t);
    await newSite(t, tenant);
    expect(idsOf((await request(t.app).get('/sites/').set(editor.auth).expect(200)).body)).toEqual([site.id]);
    expect((await request(t.app).get('/sites/').set(author.auth).expect(200)).body.items).toEqual([]);
  });

  it('shows a global admin the sites of every tenant', async () => {
    const admin = await globalAdmin(t);
    const [a, b] = [await staffedTenant(t), await staffedTenant(t)];
    const ids = idsOf((await request(t.app).get('/sites/?limit=200').set(admin.auth).expect(200)).body);
    expect(ids).toEqual(expect.arrayContaining([a.site.id, b.site.id]));
  });

  it('pages with limit and cursor, counts with include_total, and rejects a garbage cursor', async () => {
    const { tenant, site, admin } = await staffedTenant(t);
    const more = [await newSite(t, tenant), await newSite(t, tenant)];
    expect(await expectPaginates(t, admin.auth, '/sites/')).toEqual([site.id, ...more.map((s) => s.id)]);
  });

  it('needs a token, and the sites:read scope for a service account', async () => {
    await request(t.app).get('/sites/').expect(401);
    const bot = await serviceAccount(t, await newTenant(t), ['content:read']);
    const res = await request(t.app).get('/sites/').set(bot.auth).expect(403);
    expect(res.body.detail).toMatch(/sites:read/);
  });

  it('rejects a bad query with 422', async () => {
    const { admin } = await staffedTenant(t);
    await request(t.app).get('/sites/?limit=-1').set(admin.auth).expect(422);
  });
});

describe('POST /sites/', () => {
  it('creates a site in the tenant admin’s tenant, with English as the default locale', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const slug = `new-${unique()}`;
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: ' New Site ', slug })
      .expect(201);
    expect(res.body).toEqual(siteShape({ tenant_id: tenant.id, name: 'New Site', slug }));
    expect(await stored(res.body.id)).toEqual(res.body);
  });

  it('takes locales, domain and settings; without default_locale the first locale is the default', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const slug = `intl-${unique()}`;
    const domain = `${slug}.example.com`;
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({
        tenant_id: tenant.id,
        name: 'Intl',
        slug,
        locales: ['de', 'en', 'pt-BR'],
        domain,
        settings: { theme: 'dark' },
      })
      .expect(201);
    expect(res.body).toEqual(
      siteShape({
        tenant_id: tenant.id,
        slug,
        name: 'Intl',
        default_locale: 'de',
        locales: ['de', 'en', 'pt-BR'],
        domain,
        settings: { theme: 'dark' },
      }),
    );
  });

  it('makes a default_locale given alone the only locale', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'Fr', slug: `fr-${unique()}`, default_locale: 'fr' })
      .expect(201);
    expect(res.body).toMatchObject({ default_locale: 'fr', locales: ['fr'] });
  });

  it('refuses a slug taken in any tenant, and a taken domain, with 409', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app)
      .post('/sites/')
      .set(a.admin.auth)
      .send({ tenant_id: a.tenant.id, name: 'Dup', slug: b.site.slug })
      .expect(409);
    const domain = `taken-${unique()}.example.com`;
    await request(t.app)
      .post('/sites/')
      .set(b.admin.auth)
      .send({ tenant_id: b.tenant.id, name: 'D1', slug: `d1-${unique()}`, domain })
      .expect(201);
    await request(t.app)
      .post('/sites/')
      .set(a.admin.auth)
      .send({ tenant_id: a.tenant.id, name: 'D2', slug: `d2-${unique()}`, domain })
      .expect(409);
  });

  it('needs a token', async () => {
    await request(t.app).post('/sites/').send({ tenant_id: missing, name: 'X', slug: 'x' }).expect(401);
  });

  it('is refused to an editor and to a service account of the tenant with 403, creating nothing', async () => {
    const { tenant, admin, editor } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'content:write'], admin);
    const slug = `refused-${unique()}`;
    await request(t.app).post('/sites/').set(editor.auth).send({ tenant_id: tenant.id, name: 'No', slug }).expect(403);
    await request(t.app).post('/sites/').set(bot.auth).send({ tenant_id: tenant.id, name: 'No', slug }).expect(403);
    const globalAdminCaller = await globalAdmin(t);
    await request(t.app).get(`/sites/${slug}`).set(globalAdminCaller.auth).expect(404);
  });

  it('hides another tenant from a tenant admin: creating a site there is a 404', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const slug = `intruder-${unique()}`;
    const res = await request(t.app)
      .post('/sites/')
      .set(a.admin.auth)
      .send({ tenant_id: b.tenant.id, name: 'Intruder', slug })
      .expect(404);
    expect(res.body.detail).toBe('No such tenant.');
    expect(idsOf((await request(t.app).get('/sites/').set(b.admin.auth).expect(200)).body)).toEqual([b.site.id]);
  });

  it('answers 404, not 500, when a global admin names a tenant that does not exist', async () => {
    const admin = await globalAdmin(t);
    await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: missing, name: 'Orphan', slug: `orphan-${unique()}` })
      .expect(404);
  });

  it.each(['admin', 'api', 'auth', 'sites', 'users', 'public', 'health', 'docs'])(
    'rejects the reserved slug %s with 422',
    async (slug) => {
      const { tenant, admin } = await staffedTenant(t);
      const res = await request(t.app)
        .post('/sites/')
        .set(admin.auth)
        .send({ tenant_id: tenant.id, name: 'Reserved', slug })
        .expect(422);
      expect(res.body.errors).toEqual([{ path: 'body.slug', message: 'is reserved or looks like an id' }]);
    },
  );

  it('rejects a slug shaped like a uuid with 422', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const slug = '0a1b2c3d-0000-4000-8000-000000000abc';
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'Uuid', slug })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.slug', message: 'is reserved or looks like an id' }]);
  });

  it('rejects a default_locale that is not one of locales with 422', async () => {
    const { tenant, admin } = await staffedTenant(t);
    const slug = `loc-${unique()}`;
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'Loc', slug, locales: ['en', 'de'], default_locale: 'fr' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.default_locale', message: 'must be one of locales' }]);
    await request(t.app).get(`/sites/${slug}`).set(admin.auth).expect(404);
  });

  it.each([
    ['an unknown field', { status: 'live' }, 'body'],
    ['a slug with capitals', { slug: 'My-Site' }, 'body.slug'],
    ['a malformed locale', { locales: ['English'] }, 'body.locales.0'],
    ['a malformed domain', { domain: 'not a host' }, 'body.domain'],
    ['no name', { name: undefined }, 'body.name'],
  ])('rejects %s with 422', async (_name, change, path) => {
    const { tenant, admin } = await staffedTenant(t);
    const res = await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'Bad', slug: `bad-${unique()}`, ...change })
      .expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });
});

describe('GET /sites/by-tenant/{tenant_id}', () => {
  it('lists the tenant’s sites the caller can reach', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const other = await newSite(t, tenant);
    const asAdmin = await request(t.app).get(`/sites/by-tenant/${tenant.id}`).set(admin.auth).expect(200);
    expect(asAdmin.body).toEqual({
      items: [
        siteShape({ id: site.id, tenant_id: tenant.id, slug: site.slug }),
        siteShape({ id: other.id, tenant_id: tenant.id }),
      ],
      next_cursor: null,
    });
    expect(
      idsOf((await request(t.app).get(`/sites/by-tenant/${tenant.id}`).set(editor.auth).expect(200)).body),
    ).toEqual([site.id]);
  });

  it('lists a service account’s own tenant', async () => {
    const { tenant, site, admin } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    expect(idsOf((await request(t.app).get(`/sites/by-tenant/${tenant.id}`).set(bot.auth).expect(200)).body)).toEqual([
      site.id,
    ]);
  });

  it('pages with limit and cursor', async () => {
    const { tenant, admin } = await staffedTenant(t);
    await newSite(t, tenant);
    await expectPaginates(t, admin.auth, `/sites/by-tenant/${tenant.id}`);
  });

  it('hides another tenant (404) from its non-members: a tenant admin, an editor, a service account', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const bot = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    for (const caller of [a.admin.auth, a.editor.auth, bot.auth]) {
      await request(t.app).get(`/sites/by-tenant/${b.tenant.id}`).set(caller).expect(404);
    }
  });

  it('answers 404 for a tenant that does not exist, even to a global admin', async () => {
    const admin = await globalAdmin(t);
    await request(t.app).get(`/sites/by-tenant/${missing}`).set(admin.auth).expect(404);
  });

  it('needs a token (401), the sites:read scope (403) and a well-formed id (422)', async () => {
    const { tenant, admin } = await staffedTenant(t);
    await request(t.app).get(`/sites/by-tenant/${tenant.id}`).expect(401);
    const bot = await serviceAccount(t, tenant, ['media:read'], admin);
    await request(t.app).get(`/sites/by-tenant/${tenant.id}`).set(bot.auth).expect(403);
    await request(t.app).get('/sites/by-tenant/acme').set(admin.auth).expect(422);
  });
});

describe('GET /sites/{site_identifier}', () => {
  it('finds a site by id and by slug, the slug in any case', async () => {
    const { site, admin } = await staffedTenant(t);
    const byId = await request(t.app).get(`/sites/${site.id}`).set(admin.auth).expect(200);
    expect(byId.body).toEqual(siteShape({ id: site.id, tenant_id: site.tenant_id, slug: site.slug, name: site.name }));
    expect((await request(t.app).get(`/sites/${site.slug}`).set(admin.auth).expect(200)).body).toEqual(byId.body);
    expect((await request(t.app).get(`/sites/${site.slug.toUpperCase()}`).set(admin.auth).expect(200)).body).toEqual(
      byId.body,
    );
  });

  it('hides the sites of a suspended tenant from its members, not from global admins', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const global = await globalAdmin(t);
    await request(t.app)
      .patch(`/admin/tenants/${tenant.id}`)
      .set(global.auth)
      .send({ status: 'suspended' })
      .expect(200);
    await request(t.app).get(`/sites/${site.slug}`).set(admin.auth).expect(404);
    await request(t.app).get(`/sites/${site.slug}`).set(editor.auth).expect(404);
    expect((await request(t.app).get('/sites/').set(admin.auth).expect(200)).body.items).toEqual([]);
    await request(t.app).get(`/sites/${site.slug}`).set(global.auth).expect(200);
    await request(t.app).patch(`/admin/tenants/${tenant.id}`).set(global.auth).send({ status: 'active' }).expect(200);
    await request(t.app).get(`/sites/${site.slug}`).set(admin.auth).expect(200);
  });

  it('shows an assigned editor the site, and hides it (404) from an unassigned author', async () => {
    const { site, editor, author } = await staffedTenant(t);
    await request(t.app).get(`/sites/${site.slug}`).set(editor.auth).expect(200);
    await request(t.app).get(`/sites/${site.slug}`).set(author.auth).expect(404);
  });

  it('hides another tenant’s site from a tenant admin as 404, by id and by slug', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    for (const identifier of [b.site.id, b.site.slug]) {
      const res = await request(t.app).get(`/sites/${identifier}`).set(a.admin.auth).expect(404);
      expect(res.body.detail).toBe('No such site.');
    }
  });

  it('shows a service account its tenant’s sites only, and only with sites:read', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const reader = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    await request(t.app).get(`/sites/${a.site.id}`).set(reader.auth).expect(200);
    await request(t.app).get(`/sites/${b.site.id}`).set(reader.auth).expect(404);
    const writer = await serviceAccount(t, a.tenant, ['content:write'], a.admin);
    await request(t.app).get(`/sites/${a.site.id}`).set(writer.auth).expect(403);
  });

  it('answers 404 for an unknown id or slug, 401 without a token, 422 for an over-long identifier', async () => {
    const { site, admin } = await staffedTenant(t);
    await request(t.app).get(`/sites/${missing}`).set(admin.auth).expect(404);
    await request(t.app).get(`/sites/no-such-site-${unique()}`).set(admin.auth).expect(404);
    await request(t.app).get(`/sites/${site.id}`).expect(401);
    await request(t.app)
      .get(`/sites/${'x'.repeat(101)}`)
      .set(admin.auth)
      .expect(422);
  });
});

describe('PATCH /sites/{site_identifier}', () => {
  it('changes the fields sent, addressed by id, and keeps the rest', async () => {
    const { tenant, site, admin } = await staffedTenant(t);
    const domain = `patched-${unique()}.example.com`;
    const res = await request(t.app)
      .patch(`/sites/${site.id}`)
      .set(admin.auth)
      .send({ name: 'Patched', locales: ['en', 'nl'], default_locale: 'nl', domain, settings: { x: true } })
      .expect(200);
    expect(res.body).toEqual(
      siteShape({
        id: site.id,
        tenant_id: tenant.id,
        slug: site.slug,
        name: 'Patched',
        default_locale: 'nl',
        locales: ['en', 'nl'],
        domain,
        settings: { x: true },
      }),
    );
    const renamed = await request(t.app)
      .patch(`/sites/${site.id}`)
      .set(admin.auth)
      .send({ name: 'Renamed' })
      .expect(200);
    expect(renamed.body).toEqual({ ...res.body, name: 'Renamed' });
    const cleared = await request(t.app).patch(`/sites/${site.id}`).set(admin.auth).send({ domain: null }).expect(200);
    expect(cleared.body).toEqual({ ...renamed.body, domain: null });
    const published = await request(t.app)
      .patch(`/sites/${site.id}`)
      .set(admin.auth)
      .send({ visibility: 'public' })
      .expect(200);
    expect(published.body).toEqual({ ...cleared.body, visibility: 'public' });
    await request(t.app).patch(`/sites/${site.id}`).set(admin.auth).send({ visibility: 'everyone' }).expect(422);
    expect((await stored(site.id)).visibility).toBe('public');
  });

  it('changes the slug, addressed by slug: the old slug stops working, the new one works', async () => {
    const { site, admin } = await staffedTenant(t);
    const slug = `moved-${unique()}`;
    const res = await request(t.app).patch(`/sites/${site.slug}`).set(admin.auth).send({ slug }).expect(200);
    expect(res.body).toMatchObject({ id: site.id, slug });
    await request(t.app).get(`/sites/${site.slug}`).set(admin.auth).expect(404);
    await request(t.app).get(`/sites/${slug}`).set(admin.auth).expect(200);
  });

  it('refuses another site’s slug with 409', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).patch(`/sites/${a.site.id}`).set(a.admin.auth).send({ slug: b.site.slug }).expect(409);
    expect((await stored(a.site.id)).slug).toBe(a.site.slug);
  });

  it('is refused to an assigned editor and to a service account with 403, changing nothing', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read'], admin);
    await request(t.app).patch(`/sites/${site.id}`).set(editor.auth).send({ name: 'Editor was here' }).expect(403);
    await request(t.app).patch(`/sites/${site.slug}`).set(bot.auth).send({ name: 'Bot was here' }).expect(403);
    expect((await stored(site.id)).name).toBe(site.name);
  });

  it('hides another tenant’s site from a tenant admin as 404, by id and by slug, changing nothing', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).patch(`/sites/${b.site.id}`).set(a.admin.auth).send({ name: 'Taken over' }).expect(404);
    await request(t.app).patch(`/sites/${b.site.slug}`).set(a.admin.auth).send({ name: 'Taken over' }).expect(404);
    expect((await stored(b.site.id)).name).toBe(b.site.name);
  });

  it('needs a token', async () => {
    const { site } = await staffedTenant(t);
    await request(t.app).patch(`/sites/${site.id}`).send({ name: 'X' }).expect(401);
  });

  it('rejects moving the site to another tenant (tenant_id is not a field here) with 422', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).patch(`/sites/${a.site.id}`).set(a.admin.auth).send({ tenant_id: b.tenant.id }).expect(422);
    expect((await stored(a.site.id)).tenant_id).toBe(a.tenant.id);
  });

  it.each([
    ['a reserved slug', { slug: 'admin' }, 'body.slug'],
    ['a uuid-shaped slug', { slug: '0a1b2c3d-0000-4000-8000-000000000abc' }, 'body.slug'],
    ['a default_locale outside locales', { default_locale: 'fr' }, 'body.default_locale'],
    ['locales that drop the default', { locales: ['de'] }, 'body.default_locale'],
    ['an unknown field', { id: missing }, 'body'],
  ])('rejects %s with 422, changing nothing', async (_name, body, path) => {
    const { site, admin } = await staffedTenant(t);
    const before = await stored(site.id);
    const res = await request(t.app).patch(`/sites/${site.id}`).set(admin.auth).send(body).expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await stored(site.id)).toEqual(before);
  });
});

describe('DELETE /sites/{site_identifier}', () => {
  it('deletes a site by id', async () => {
    const { site, admin } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/sites/${site.id}`).set(admin.auth).expect(404);
  });

  it('deletes a site by slug, with its user assignments', async () => {
    const { tenant, site, admin, editor } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.slug}`).set(admin.auth).expect(204);
    await request(t.app).get(`/sites/${site.slug}`).set(admin.auth).expect(404);
    expect((await request(t.app).get('/sites/').set(editor.auth).expect(200)).body.items).toEqual([]);
    // The slug is free again.
    await request(t.app)
      .post('/sites/')
      .set(admin.auth)
      .send({ tenant_id: tenant.id, name: 'Again', slug: site.slug })
      .expect(201);
  });

  it('is refused to an assigned editor with 403, and the site stays', async () => {
    const { site, editor } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}`).set(editor.auth).expect(403);
    await stored(site.id);
  });

  it('hides another tenant’s site from a tenant admin as 404, by id and by slug, and the site stays', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    await request(t.app).delete(`/sites/${b.site.id}`).set(a.admin.auth).expect(404);
    await request(t.app).delete(`/sites/${b.site.slug}`).set(a.admin.auth).expect(404);
    await stored(b.site.id);
  });

  it('needs a token (401), answers 404 for an unknown site and 422 for an over-long identifier', async () => {
    const { site, admin } = await staffedTenant(t);
    await request(t.app).delete(`/sites/${site.id}`).expect(401);
    await request(t.app).delete(`/sites/${missing}`).set(admin.auth).expect(404);
    await request(t.app)
      .delete(`/sites/${'x'.repeat(101)}`)
      .set(admin.auth)
      .expect(422);
    await stored(site.id);
  });
});
