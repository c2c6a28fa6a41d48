// What the request path keeps in memory (sessions, sites, roles) costs no
// round trip once warm, and a change made through any API process takes
// effect in every other one at once: two real `npm run api` processes share
// a database here, and each change is made through the first and checked
// through the second. The second hears of it by notification, within a
// millisecond or so on an idle machine (the bench measures it); on a loaded
// one its next request may come first, so the check allows it a moment.
import request from 'supertest';
import { insertMedia } from '../../core/media/items.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { signedIn, type Caller } from '../helpers/factories.ts';
import { staffedTenant, type Staffed } from '../helpers/identity.ts';
import { startCountedApp, type CountedApp } from '../helpers/counted-app.ts';
import type { RoundTripCounter } from '../helpers/pg-round-trips.ts';
import { stopProcess, twoApiProcesses, type Started } from '../helpers/processes.ts';

let t: TestApp;
let a: Staffed;
beforeAll(async () => {
  t = await startTestApp();
  a = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

describe('with warm caches', () => {
  let counted: CountedApp;
  let counter: RoundTripCounter;
  let app: CountedApp['app'];
  beforeAll(async () => {
    counted = await startCountedApp(t);
    ({ counter, app } = counted);
  });
  afterAll(() => counted.close());

  const tripsOf = async (path: string, auth: Record<string, string> = {}) => {
    await request(app).get(path).set(auth).expect(200);
    counter.reset();
    await request(app).get(path).set(auth).expect(200);
    return counter.count();
  };

  it('reads one row of a site in one round trip, and who-am-I in one', async () => {
    const folder = await request(app)
      .post(`/${a.site.slug}/media/folders/`)
      .set(a.editor.auth)
      .send({ name: 'Counted' })
      .expect(201);
    expect(await tripsOf(`/${a.site.slug}/media/folders/${folder.body.id}`, a.editor.auth)).toBe(1);
    expect(await tripsOf(`/${a.site.id}/media/folders/${folder.body.id}`, a.admin.auth)).toBe(1);
    expect(await tripsOf('/auth/currentuser', a.editor.auth)).toBe(1);
    expect(await tripsOf(`/sites/${a.site.slug}`, a.editor.auth)).toBe(0);
  });
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

  const call = (base: string, method: string, path: string, caller?: Caller, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { ...(caller ? caller.auth : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }).then((res) => res.status);

  /**
   * What `path` answers through the second process once it has heard of the
   * change: asked again until it differs from `before`, for at most 5 s.
   */
  const afterChange = async (before: number, path: string, caller?: Caller) => {
    const deadline = Date.now() + 5000;
    let status = await call(second.url, 'GET', path, caller);
    while (status === before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      status = await call(second.url, 'GET', path, caller);
    }
    return status;
  };

  /** Both processes answer 200 (and so have the caller's session, the site and the role in memory). */
  const warm = async (path: string, caller: Caller) => {
    for (let i = 0; i < 3; i++) {
      expect(await call(first.url, 'GET', path, caller)).toBe(200);
      expect(await call(second.url, 'GET', path, caller)).toBe(200);
    }
  };

  it('a logout through one ends the session in the other at once', async () => {
    const editor = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    await warm(`/sites/${a.site.slug}`, editor);
    expect(await call(first.url, 'POST', '/auth/logout', editor)).toBe(204);
    expect(await afterChange(200, `/sites/${a.site.slug}`, editor)).toBe(401);
  });

  it('a removed site assignment, a role change and a removed membership take effect in the other at once', async () => {
    const author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
    await warm(`/${a.site.slug}/media/folders/`, author);
    expect(await call(first.url, 'DELETE', `/sites/${a.site.slug}/users/${author.user.id}`, a.admin)).toBe(204);
    expect(await afterChange(200, `/${a.site.slug}/media/folders/`, author)).toBe(404);

    const editor = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    const admin = await signedIn(t, { globalAdmin: true });
    await warm(`/${a.site.slug}/transactions/credits/site-users`, a.admin);
    const member = `/admin/tenants/${a.tenant.id}/users/${a.admin.user.id}`;
    expect(await call(first.url, 'PATCH', member, admin, { role: 'editor' })).toBe(200);
    // No longer the tenant's admin, and never assigned to the site: it is not theirs to see.
    expect(await afterChange(200, `/${a.site.slug}/transactions/credits/site-users`, a.admin)).toBe(404);
    expect(await call(first.url, 'PATCH', member, admin, { role: 'admin' })).toBe(200);

    await warm(`/sites/${a.site.slug}`, editor);
    expect(await call(first.url, 'DELETE', `/admin/tenants/${a.tenant.id}/users/${editor.user.id}`, admin)).toBe(204);
    expect(await afterChange(200, `/sites/${a.site.slug}`, editor)).toBe(404);
  });

  it('a blocked user, a suspended tenant and a private site are refused by the other at once', async () => {
    const admin = await signedIn(t, { globalAdmin: true });
    const b = await staffedTenant(t);
    await warm(`/sites/${b.site.slug}`, b.editor);
    expect(await call(first.url, 'PATCH', `/users/${b.editor.user.id}`, admin, { status: 'blocked' })).toBe(200);
    expect(await afterChange(200, `/sites/${b.site.slug}`, b.editor)).toBe(401);

    await warm(`/sites/${b.site.slug}`, b.admin);
    expect(await call(first.url, 'PATCH', `/admin/tenants/${b.tenant.id}`, admin, { status: 'suspended' })).toBe(200);
    expect(await afterChange(200, `/sites/${b.site.slug}`, b.admin)).toBe(404);

    const c = await staffedTenant(t);
    const ready = await insertMedia(
      t.services.db,
      { tenantId: c.tenant.id, siteId: c.site.id, jobId: null, createdBy: c.admin.user.id },
      { kind: 'image', mimeType: 'image/png', sizeBytes: 3, storageKey: `${c.site.id}/public`, fileName: 'public.png' },
    );
    const item = `/public/${c.site.slug}/media/${ready.id}`;
    expect(await call(first.url, 'PATCH', `/sites/${c.site.slug}`, c.admin, { visibility: 'public' })).toBe(200);
    for (let i = 0; i < 3; i++) expect(await call(second.url, 'GET', item)).toBe(200);
    expect(await call(first.url, 'PATCH', `/sites/${c.site.slug}`, c.admin, { visibility: 'private' })).toBe(200);
    expect(await afterChange(200, item)).toBe(404);
  });
});
