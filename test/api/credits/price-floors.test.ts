// Price floors: a tenant admin may price their site's jobs up, but not below
// the kind's floor (the tenant_minimum a global admin sets on the global
// price, else the global price itself), since the operator pays the
// providers; a global admin may go lower. Every sign-up gets a tenant of its
// own, so without a floor anyone could make paid work free.
import request from 'supertest';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import type { Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';
import { giveCredits, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';

let t: TestApp;
let admin: Caller;
let worker: WorkerHandle;
let imagePrice: string;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
  worker = await startTestWorker(t);
  const list = await request(t.app).get('/admin/global-cost-settings/?kind=image&active=true').set(admin.auth);
  imagePrice = list.body.items[0].id;
});
afterAll(async () => {
  await worker?.stop();
  await stopTestApp(t);
});

const prices = (staffed: Staffed) => `/${staffed.site.slug}/transactions/cost-settings`;

const setPrices = (staffed: Staffed, auth: Caller['auth'], settings: { kind: string; price: number | null }[]) =>
  request(t.app).put(prices(staffed)).set(auth).send({ settings });

async function priceOf(staffed: Staffed, kind: string) {
  const res = await request(t.app).get(prices(staffed)).set(staffed.editor.auth).expect(200);
  return res.body.items.find((item: { kind: string }) => item.kind === kind);
}

const setFloor = (tenantMinimum: number | null) =>
  request(t.app)
    .patch(`/admin/global-cost-settings/${imagePrice}`)
    .set(admin.auth)
    .send({ tenant_minimum: tenantMinimum });

/** An image made by the site's editor (the local provider), as the job ends. */
async function generateImage(staffed: Staffed) {
  const res = await request(t.app)
    .post(`/${staffed.site.slug}/media/generate`)
    .set(staffed.editor.auth)
    .set('Prefer', 'wait=30')
    .send({ prompt: 'A lighthouse', size: '256x256' })
    .expect(200);
  expect(res.body.status).toBe('succeeded');
  return res.body;
}

afterEach(async () => {
  await setFloor(null).expect(200);
});

it('refuses a tenant admin’s price below the floor with 422 naming the kind and the floor, and stores nothing', async () => {
  const staffed = await staffedTenant(t);
  const res = await setPrices(staffed, staffed.admin.auth, [
    { kind: 'speech', price: 1.5 },
    { kind: 'image', price: 0 },
  ]).expect(422);
  expect(res.body.detail).toContain('image at least 10 credits per item');
  expect(res.body.errors).toEqual([
    { path: 'body.settings.1.price', message: 'below the floor of image: 10 credits per item' },
  ]);
  // Not even the speech price that was allowed.
  expect(await priceOf(staffed, 'speech')).toMatchObject({ price: 1, source: 'global', tenant_minimum: 1 });
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 10, source: 'global', tenant_minimum: 10 });
});

it('lets a tenant admin price at the floor or above it', async () => {
  const staffed = await staffedTenant(t);
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 10 }]).expect(200);
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 10, source: 'site' });
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 25 }]).expect(200);
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 25, source: 'site' });
});

it('lets a tenant admin go down to a floor a global admin lowered, not below, and charges a job the price stored', async () => {
  const staffed = await staffedTenant(t);
  const lowered = await setFloor(4).expect(200);
  expect(lowered.body).toMatchObject({ kind: 'image', credits_per_unit: 10, tenant_minimum: 4 });
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 10, source: 'global', tenant_minimum: 4 });
  const below = await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 3.9999 }]).expect(422);
  expect(below.body.detail).toContain('image at least 4 credits per item');
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 4 }]).expect(200);

  await giveCredits(t, staffed.site, 100, staffed.editor.user.id);
  const job = await generateImage(staffed);
  expect(job).toMatchObject({ credits_reserved: 4, credits_charged: 4 });
  expect((await ledgerFor(t, job.id)).find((entry) => entry.kind === 'debit')?.amount).toBe(-4);
});

it('charges a tenant admin’s price that a later rise of the floor overtook at the floor', async () => {
  const staffed = await staffedTenant(t);
  await setFloor(4).expect(200);
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 5 }]).expect(200);
  await setFloor(8).expect(200);
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 8, source: 'site', tenant_minimum: 8 });
  await giveCredits(t, staffed.site, 100, staffed.editor.user.id);
  expect(await generateImage(staffed)).toMatchObject({ credits_reserved: 8, credits_charged: 8 });
});

it('lets a global admin price a site below the floor, and charges jobs that price', async () => {
  const staffed = await staffedTenant(t);
  await setPrices(staffed, admin.auth, [{ kind: 'image', price: 0 }]).expect(200);
  expect(await priceOf(staffed, 'image')).toMatchObject({ price: 0, source: 'site', tenant_minimum: 10 });
  expect(await generateImage(staffed)).toMatchObject({ credits_reserved: 0, credits_charged: 0 });
  // The tenant admin cannot set it again themselves.
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 0 }]).expect(422);
});

it('refuses a floor above the price (422), on a change and on a new price', async () => {
  const change = await setFloor(10.5).expect(422);
  expect(change.body.errors).toEqual([{ path: 'body.tenant_minimum', message: 'must not be above credits_per_unit' }]);
  await request(t.app)
    .post('/admin/global-cost-settings/')
    .set(admin.auth)
    .send({ kind: 'floor_test', unit: 'item', credits_per_unit: 2, tenant_minimum: 3 })
    .expect(422);
  const created = await request(t.app)
    .post('/admin/global-cost-settings/')
    .set(admin.auth)
    .send({ kind: 'floor_test', unit: 'item', credits_per_unit: 2, tenant_minimum: 1.5 })
    .expect(201);
  expect(created.body).toMatchObject({ credits_per_unit: 2, tenant_minimum: 1.5 });
});

it('keeps the floor a global admin sets through the bulk route', async () => {
  const res = await request(t.app)
    .put('/admin/global-cost-settings/bulk')
    .set(admin.auth)
    .send({ settings: [{ kind: 'image', unit: 'item', credits_per_unit: 10, tenant_minimum: 6 }] })
    .expect(200);
  expect(res.body.items).toContainEqual(expect.objectContaining({ kind: 'image', tenant_minimum: 6 }));
  const staffed = await staffedTenant(t);
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 5 }]).expect(422);
  await setPrices(staffed, staffed.admin.auth, [{ kind: 'image', price: 6 }]).expect(200);
});
