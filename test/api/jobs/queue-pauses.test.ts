// The queue's pauses through the API, for global admins: pause and resume a
// kind or a tenant, the list, the stage of the queued jobs a pause holds
// (and of those queued while it does), and 401/403/404/422. Workers obeying
// them: test/worker/pools.test.ts.
import request from 'supertest';
import type { Actor } from '../../../core/actor.ts';
import { newSite, newTenant, type Caller } from '../../helpers/factories.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, newJob, readJob, submitAs } from '../../helpers/jobs.ts';
import type { TestApp } from '../../helpers/app.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(async () => {
  ({ t, a, admin } = suite);
  await giveCredits(t, a.site, 1000, a.editor.user.id);
});

const missing = '00000000-0000-4000-8000-000000000000';
const kindPaused = 'paused: test_fail jobs are paused';
const tenantPaused = 'paused: this tenant’s jobs are paused';
const editor = (): Actor => ({ kind: 'user', userId: a.editor.user.id, sessionId: 'test', isGlobalAdmin: false });

it('pauses a kind, lists it, marks its queued jobs and those queued meanwhile, and resumes it', async () => {
  const queued = await newJob(t, a.site, { kind: 'test_fail' });
  const running = await newJob(t, a.site, { kind: 'test_fail', status: 'running' });
  const other = await newJob(t, a.site, { kind: 'test_noop' });

  const paused = await request(t.app)
    .put('/admin/queue/pauses/kinds/test_fail')
    .set(admin.auth)
    .send({ reason: 'vendor outage' });
  expect(paused.status).toBe(200);
  expect(paused.body).toMatchObject({
    kind: 'test_fail',
    tenant_id: null,
    reason: 'vendor outage',
    paused_by: admin.user.id,
  });

  expect((await readJob(t, queued.id)).stage).toBe(kindPaused);
  expect((await readJob(t, running.id)).stage).toBe('');
  expect((await readJob(t, other.id)).stage).toBe('');
  const submitted = await submitAs(t, editor(), a.site, {
    kind: 'test_fail',
    input: { transient: false },
    estimatedUnits: 1,
  });
  expect(submitted.stage).toBe(kindPaused);

  // Again: the reason is replaced, the pause stays one.
  await request(t.app).put('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(200);
  const list = await request(t.app).get('/admin/queue/pauses').set(admin.auth).expect(200);
  expect(list.body.kinds).toEqual([expect.objectContaining({ kind: 'test_fail', reason: '' })]);
  expect(list.body.tenants).toEqual([]);

  await request(t.app).delete('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(204);
  expect((await readJob(t, queued.id)).stage).toBe('');
  expect((await readJob(t, submitted.id)).stage).toBe('');
  expect((await request(t.app).get('/admin/queue/pauses').set(admin.auth).expect(200)).body.kinds).toEqual([]);
  // Not paused any more: nothing to resume.
  await request(t.app).delete('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(404);
});

it('pauses a tenant’s jobs of every kind, and says which pause still holds a job once the other is lifted', async () => {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const job = await newJob(t, site, { kind: 'test_fail' });
  const elsewhere = await newJob(t, a.site, { kind: 'test_noop' });

  const paused = await request(t.app).put(`/admin/queue/pauses/tenants/${tenant.id}`).set(admin.auth);
  expect(paused.status).toBe(200);
  expect(paused.body).toMatchObject({ kind: null, tenant_id: tenant.id, reason: '' });
  await request(t.app).put('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(200);
  expect((await readJob(t, job.id)).stage).toBe(tenantPaused);
  expect((await readJob(t, elsewhere.id)).stage).toBe('');

  await request(t.app).delete(`/admin/queue/pauses/tenants/${tenant.id}`).set(admin.auth).expect(204);
  expect((await readJob(t, job.id)).stage).toBe(kindPaused);
  await request(t.app).delete('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(204);
  expect((await readJob(t, job.id)).stage).toBe('');
});

it('marks a job put back on the queue while its kind is paused (an admin’s retry)', async () => {
  const failed = await newJob(t, a.site, { kind: 'test_fail', status: 'failed' });
  await request(t.app).put('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(200);
  await request(t.app).post(`/admin/jobs/${failed.id}/retry`).set(admin.auth).expect(202);
  expect(await readJob(t, failed.id)).toMatchObject({ status: 'queued', stage: kindPaused });
  await request(t.app).delete('/admin/queue/pauses/kinds/test_fail').set(admin.auth).expect(204);
  expect((await readJob(t, failed.id)).stage).toBe('');
});

it('is for global admins only', async () => {
  await request(t.app).get('/admin/queue/pauses').expect(401);
  await request(t.app).put('/admin/queue/pauses/kinds/speech').expect(401);
  await request(t.app).get('/admin/queue/pauses').set(a.admin.auth).expect(403);
  await request(t.app).put('/admin/queue/pauses/kinds/speech').set(a.admin.auth).expect(403);
  await request(t.app).put(`/admin/queue/pauses/tenants/${a.tenant.id}`).set(a.admin.auth).expect(403);
  await request(t.app).delete(`/admin/queue/pauses/tenants/${a.tenant.id}`).set(a.editor.auth).expect(403);
  expect((await request(t.app).get('/admin/queue/pauses').set(admin.auth)).body).toEqual({ kinds: [], tenants: [] });
});

it('answers 404 for a kind or tenant it does not know, or one not paused', async () => {
  await request(t.app).put('/admin/queue/pauses/kinds/no_such_kind').set(admin.auth).expect(404);
  await request(t.app).put(`/admin/queue/pauses/tenants/${missing}`).set(admin.auth).expect(404);
  await request(t.app).delete(`/admin/queue/pauses/tenants/${a.tenant.id}`).set(admin.auth).expect(404);
  await request(t.app).delete('/admin/queue/pauses/kinds/video').set(admin.auth).expect(404);
});

it('answers 422 for a bad body or a malformed kind or tenant id', async () => {
  for (const body of [{ reason: 5 }, { reason: 'x'.repeat(501) }, { paused: true }]) {
    const response = await request(t.app).put('/admin/queue/pauses/kinds/speech').set(admin.auth).send(body);
    expect(response.status).toBe(422);
  }
  await request(t.app).put('/admin/queue/pauses/kinds/Not-A-Kind').set(admin.auth).expect(422);
  await request(t.app).put('/admin/queue/pauses/tenants/not-a-uuid').set(admin.auth).expect(422);
  expect((await request(t.app).get('/admin/queue/pauses').set(admin.auth)).body).toEqual({ kinds: [], tenants: [] });
});
