// Content webhook subscriptions through HTTP: a tenant admin subscribes a URL
// to content events for the tenant or one of its sites, reads, lists,
// changes and deletes it, and reads its delivery log; editors, authors and
// service accounts may not; another tenant's subscriptions are not found;
// a URL or site the delivery could not honour is a 422.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, serviceAccount } from '../../helpers/factories.ts';
import { expectPaginates, staffedTenant, type Auth, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let bot: Auth;
beforeAll(async () => {
  t = await startTestApp({ env: { JOB_WEBHOOK_HTTP_HOSTS: 'hooks.internal' } });
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  bot = (await serviceAccount(t, a.tenant, ['sites:read'], a.admin)).auth;
});
afterAll(() => stopTestApp(t));

const listOf = (tenantId: string) => `/api/tenants/${tenantId}/content-webhooks`;
const body = { url: 'https://build.example.com/hooks/cms', events: ['element.published', 'page.moved'] };

async function subscribe(extra: Record<string, unknown> = {}, staffed = a) {
  const res = await request(t.app)
    .post(listOf(staffed.tenant.id))
    .set(staffed.admin.auth)
    .send({ ...body, ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: string; site_id: string | null; events: string[]; enabled: boolean };
}

describe('a tenant admin', () => {
  it('subscribes a URL to content events, for every site by default, and reads it back', async () => {
    const made = await subscribe({ description: 'Static site rebuild' });
    expect(made).toMatchObject({
      tenant_id: a.tenant.id,
      site_id: null,
      url: body.url,
      events: body.events,
      enabled: true,
      description: 'Static site rebuild',
    });
    const read = await request(t.app)
      .get(`${listOf(a.tenant.id)}/${made.id}`)
      .set(a.admin.auth)
      .expect(200);
    expect(read.body).toEqual(made);
  });

  it('subscribes for one site, and names each event once', async () => {
    const made = await subscribe({ site_id: a.site.id, events: ['page.published', 'page.published', 'media.created'] });
    expect(made).toMatchObject({ site_id: a.site.id, events: ['page.published', 'media.created'] });
  });

  it('lists the tenant’s subscriptions a page at a time, and only them', async () => {
    await subscribe();
    await subscribe();
    const other = await subscribe({}, b);
    const ids = await expectPaginates(t, a.admin.auth, listOf(a.tenant.id));
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(ids).not.toContain(other.id);
  });

  it('changes what a subscription hears, disables it and deletes it', async () => {
    const made = await subscribe();
    const at = `${listOf(a.tenant.id)}/${made.id}`;
    const changed = await request(t.app)
      .patch(at)
      .set(a.admin.auth)
      .send({ events: ['post.published'], enabled: false, site_id: a.site.id, url: 'http://hooks.internal/cms' })
      .expect(200);
    expect(changed.body).toMatchObject({
      events: ['post.published'],
      enabled: false,
      site_id: a.site.id,
      url: 'http://hooks.internal/cms',
    });
    const back = await request(t.app).patch(at).set(a.admin.auth).send({ site_id: null }).expect(200);
    expect(back.body).toMatchObject({ site_id: null, events: ['post.published'], enabled: false });
    await request(t.app).delete(at).set(a.admin.auth).expect(204);
    await request(t.app).get(at).set(a.admin.auth).expect(404);
    await request(t.app).delete(at).set(a.admin.auth).expect(404);
  });

  it('reads a subscription’s delivery log, empty before any event', async () => {
    const made = await subscribe();
    const res = await request(t.app)
      .get(`${listOf(a.tenant.id)}/${made.id}/deliveries`)
      .set(a.admin.auth)
      .expect(200);
    expect(res.body).toEqual({ items: [], next_cursor: null });
  });
});

describe('refusals', () => {
  it('answers 401 without a token', async () => {
    const made = await subscribe();
    await request(t.app).get(listOf(a.tenant.id)).expect(401);
    await request(t.app).post(listOf(a.tenant.id)).send(body).expect(401);
    await request(t.app)
      .get(`${listOf(a.tenant.id)}/${made.id}`)
      .expect(401);
    await request(t.app)
      .patch(`${listOf(a.tenant.id)}/${made.id}`)
      .send({ enabled: false })
      .expect(401);
    await request(t.app)
      .delete(`${listOf(a.tenant.id)}/${made.id}`)
      .expect(401);
    await request(t.app)
      .get(`${listOf(a.tenant.id)}/${made.id}/deliveries`)
      .expect(401);
  });

  it('answers 403 to editors, authors and service accounts of the tenant', async () => {
    const made = await subscribe();
    for (const auth of [a.editor.auth, a.author.auth, bot]) {
      await request(t.app).get(listOf(a.tenant.id)).set(auth).expect(403);
      await request(t.app).post(listOf(a.tenant.id)).set(auth).send(body).expect(403);
      await request(t.app)
        .get(`${listOf(a.tenant.id)}/${made.id}`)
        .set(auth)
        .expect(403);
      await request(t.app)
        .patch(`${listOf(a.tenant.id)}/${made.id}`)
        .set(auth)
        .send({ enabled: false })
        .expect(403);
      await request(t.app)
        .delete(`${listOf(a.tenant.id)}/${made.id}`)
        .set(auth)
        .expect(403);
      await request(t.app)
        .get(`${listOf(a.tenant.id)}/${made.id}/deliveries`)
        .set(auth)
        .expect(403);
    }
  });

  it('answers 404 for another tenant’s subscriptions, and for another tenant', async () => {
    const theirs = await subscribe({}, b);
    // Through tenant A's path: not A's.
    const viaA = `${listOf(a.tenant.id)}/${theirs.id}`;
    await request(t.app).get(viaA).set(a.admin.auth).expect(404);
    await request(t.app).patch(viaA).set(a.admin.auth).send({ enabled: false }).expect(404);
    await request(t.app).delete(viaA).set(a.admin.auth).expect(404);
    await request(t.app).get(`${viaA}/deliveries`).set(a.admin.auth).expect(404);
    // Through tenant B's path: not A's admin's tenant.
    const viaB = `${listOf(b.tenant.id)}/${theirs.id}`;
    await request(t.app).get(listOf(b.tenant.id)).set(a.admin.auth).expect(404);
    await request(t.app).post(listOf(b.tenant.id)).set(a.admin.auth).send(body).expect(404);
    await request(t.app).get(viaB).set(a.admin.auth).expect(404);
    await request(t.app).patch(viaB).set(a.admin.auth).send({ enabled: false }).expect(404);
    await request(t.app).delete(viaB).set(a.admin.auth).expect(404);
    await request(t.app).get(`${viaB}/deliveries`).set(a.admin.auth).expect(404);
    await request(t.app).get(viaB).set(b.admin.auth).expect(200);
  });

  it('answers 422 for a body it cannot take', async () => {
    const post = (extra: Record<string, unknown>) =>
      request(t.app)
        .post(listOf(a.tenant.id))
        .set(a.admin.auth)
        .send({ ...body, ...extra });
    const paths = async (extra: Record<string, unknown>) => {
      const res = await post(extra).expect(422);
      return (res.body.errors as { path: string }[]).map((error) => error.path);
    };
    expect(await paths({ events: [] })).toEqual(['body.events']);
    expect(await paths({ events: ['element.renamed'] })).toEqual(['body.events.0']);
    expect(await paths({ url: 'ftp://build.example.com/' })).toEqual(['body.url']);
    // Plain http only to the hosts JOB_WEBHOOK_HTTP_HOSTS names; never to a private address written out.
    expect(await paths({ url: 'http://build.example.com/hook' })).toEqual(['body.url']);
    expect(await paths({ url: 'https://10.0.0.7/hook' })).toEqual(['body.url']);
    // A site of another tenant is not one this subscription can hear.
    expect(await paths({ site_id: b.site.id })).toEqual(['body.site_id']);
    expect(await paths({ colour: 'blue' })).toEqual(['body']);
    const made = await subscribe();
    const patch = (changes: Record<string, unknown>) =>
      request(t.app)
        .patch(`${listOf(a.tenant.id)}/${made.id}`)
        .set(a.admin.auth)
        .send(changes)
        .expect(422);
    await patch({});
    await patch({ events: ['page.renamed'] });
    await patch({ url: 'https://127.0.0.1/hook' });
    await patch({ site_id: (await newSite(t, b.tenant)).id });
  });
});
