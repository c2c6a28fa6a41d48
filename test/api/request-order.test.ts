// The order in which a request is judged, on the real routes: the path and
// method first (a literal path another method owns is a 405 naming that
// path's methods, not the sibling `{id}` route's "invalid UUID"), then who is
// asking (401), then whether they may (403, or 404 for a site that is not
// theirs), and only then what they sent (400, 413, 415, 422).
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { contentCast, type ContentCast } from '../helpers/content.ts';

let t: TestApp;
let c: ContentCast;
beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
});
afterAll(() => stopTestApp(t));

describe('a literal path with a method it does not have', () => {
  it.each([
    ['patch', '/admin/global-cost-settings/bulk', 'PUT'],
    ['get', '/admin/global-cost-settings/bulk', 'PUT'],
    ['delete', '/admin/global-cost-settings/public/', 'GET'],
    ['get', '/admin/global-cost-settings/tenant-credits/allocate', 'POST'],
    ['get', '/auth/signup/oauth/callback', 'POST'],
    ['delete', '/api/agents/00000000-0000-0000-0000-000000000000/knowledge-base/search', 'POST'],
  ] as const)('%s %s is a 405 that allows %s', async (method, path, allow) => {
    const res = await request(t.app)[method](path).set(c.admin.auth).send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('names the methods of the most specific path, not those of its parameter siblings', async () => {
    // PUT has only /bulk; GET has /credit-overview; PATCH and DELETE have /{setting_id}.
    const res = await request(t.app).put('/admin/global-cost-settings/credit-overview').set(c.admin.auth).send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    const site = await request(t.app).delete(`/${c.a.site.slug}/contenttypes/validate`).set(c.a.editor.auth);
    expect(site.status).toBe(405);
    expect(site.headers.allow).toBe('POST');
  });

  it('still serves the parameter route for any other value, whatever the case and trailing slash', async () => {
    await request(t.app).patch('/admin/global-cost-settings/not-an-id').set(c.admin.auth).send({}).expect(422);
    await request(t.app).put('/ADMIN/global-cost-settings/BULK/').set(c.admin.auth).send({}).expect(422);
  });
});

describe('access comes before input', () => {
  it('answers 401 without a token, whatever the body', async () => {
    await request(t.app).post('/admin/tenants/').set('Content-Type', 'application/json').send('{"name":').expect(401);
  });

  it('answers an editor 403 on a global admin route, for a bad, malformed or mistyped body alike', async () => {
    const editor = c.a.editor.auth;
    await request(t.app).post('/admin/tenants/').set(editor).send({ name: 42, unknown: true }).expect(403);
    await request(t.app)
      .post('/admin/tenants/')
      .set(editor)
      .set('Content-Type', 'application/json')
      .send('{"name":')
      .expect(403);
    await request(t.app)
      .post('/admin/tenants/')
      .set(editor)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(403);
    await request(t.app).patch('/admin/global-cost-settings/not-an-id').set(editor).send({ x: 1 }).expect(403);
  });

  it('answers an author 403 on a route for editors, and another tenant 404, before reading the body', async () => {
    await request(t.app)
      .post(`/${c.a.site.slug}/contenttypes/`)
      .set(c.author.auth)
      .send({ name: 42, fields: 'none' })
      .expect(403);
    await request(t.app)
      .post(`/${c.a.site.slug}/contenttypes/`)
      .set(c.b.editor.auth)
      .send({ name: 42, fields: 'none' })
      .expect(404);
  });

  it('still tells a caller who may what is wrong with the body, every mistake at once', async () => {
    const res = await request(t.app)
      .post(`/${c.a.site.slug}/contenttypes/`)
      .set(c.a.editor.auth)
      .send({ name: 42, fields: 'none' })
      .expect(422);
    expect(res.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      expect.arrayContaining(['body.fields', 'body.name']),
    );
    await request(t.app)
      .post('/admin/tenants/')
      .set(c.admin.auth)
      .set('Content-Type', 'application/json')
      .send('{"name":')
      .expect(400);
  });

  it('refuses a malformed site identifier as input, since it names no site to judge access by', async () => {
    await request(t.app)
      .post(`/${'x'.repeat(101)}/contenttypes/`)
      .set(c.a.editor.auth)
      .send({})
      .expect(422);
  });
});
