// How the worker runs platform jobs: settlement exactly once, retries with
// backoff for transient errors, at once for permanent ones, cancellation of a
// running job, and a second worker process sharing the queue.
import type { Actor } from '../../core/actor.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, newUser } from '../helpers/factories.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import {
  giveCredits,
  ledgerFor,
  priceTestKinds,
  readJob,
  startTestWorker,
  submitAs,
  waitForJob,
} from '../helpers/jobs.ts';

let t: TestApp;
let site: Site;
let actor: Actor;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  t = await startTestApp();
  await priceTestKinds(t);
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  const user = await newUser(t);
  await addMember(t.services.db, tenant.id, user.id, 'editor');
  await giveCredits(t, site, 1000, user.id);
  await t.services.db.query(
    (await import('../../db/pool.ts')).sql
      .unsafe`insert into site_users (tenant_id, site_id, user_id) values (${tenant.id}, ${site.id}, ${user.id})`,
  );
  actor = { kind: 'user', userId: user.id, sessionId: 'test', isGlobalAdmin: false };
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => stopTestApp(t));

const submit = (kind: string, input: Record<string, unknown>, units = 3) =>
  submitAs(t, actor, site, { kind, input, estimatedUnits: units });

it('runs a job to success, debits once and releases the rest', async () => {
  worker = await startTestWorker(t);
  const job = await submit('test_noop', {});
  const done = await waitForJob(t, job.id, ['succeeded', 'failed']);
  expect(done).toMatchObject({
    status: 'succeeded',
    progress: 1,
    attempts: 1,
    credits_reserved: 3,
    credits_charged: 1,
  });
  expect(await ledgerFor(t, job.id)).toEqual([
    { kind: 'reservation', amount: 0, reserved_change: 3 },
    { kind: 'debit', amount: -1, reserved_change: -1 },
    { kind: 'release', amount: 0, reserved_change: -2 },
  ]);
});

it('fails a permanent error at once, with its code, and releases the credits', async () => {
  worker = await startTestWorker(t);
  const job = await submit('test_fail', { transient: false });
  const done = await waitForJob(t, job.id, ['failed', 'succeeded']);
  expect(done).toMatchObject({
    status: 'failed',
    attempts: 1,
    error: { code: 'provider_rejected', message: 'never', transient: false },
  });
  expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  expect((await readJob(t, job.id)).credits_charged).toBe(0);
});
