// Kinds' priorities with real workers: with one slot and two kinds queued,
// the kind set to run first does, though queued last; and a tenant's
// higher-priority jobs do not take the slots another tenant's share keeps
// (fairness between tenants holds: worker/tenant-slots.ts). The admin route
// itself: test/api/jobs/queue-priorities.test.ts.
import request from 'supertest';
import type { Actor } from '../../core/actor.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import type { Caller } from '../helpers/factories.ts';
import { giveCredits, jobsSuite, startTestWorker, submitAs, allEnded, startsOf } from '../helpers/jobs.ts';

const suite = jobsSuite();
const workers: WorkerHandle[] = [];
let admin: Caller;

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

beforeAll(async () => {
  admin = suite.admin;
  await giveCredits(suite.t, suite.a.site, 1000, suite.a.editor.user.id);
  await giveCredits(suite.t, suite.b.site, 1000, suite.b.editor.user.id);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  for (const kind of ['test_noop', 'test_sleep'])
    await request(suite.t.app).put(`/admin/queue/kinds/${kind}`).set(admin.auth).send({ priority: 0 }).expect(200);
});

const submitMany = async (count: number, actor: Actor, site: Site, kind: string, input: Record<string, unknown>) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await submitAs(suite.t, actor, site, { kind, input, estimatedUnits: 1 })).id);
  return ids;
};

const allDone = (ids: string[]) => allEnded(suite.t, ids);

it('runs the kind set to run first before the other, though queued after it, with one slot', async () => {
  const actor = actorOf(suite.a.editor);
  const slow = await submitMany(4, actor, suite.a.site, 'test_sleep', { ms: 20 });
  const quick = await submitMany(4, actor, suite.a.site, 'test_noop', {});
  await request(suite.t.app).put('/admin/queue/kinds/test_noop').set(admin.auth).send({ priority: -10 }).expect(200);
  workers.push(await startTestWorker(suite.t, { WORKER_CONCURRENCY: '1' }));
  await allDone([...slow, ...quick]);
  const starts = await startsOf(suite.t, [...slow, ...quick]);
  const lastQuick = Math.max(...quick.map((id) => starts.get(id)!));
  const firstSlow = Math.min(...slow.map((id) => starts.get(id)!));
  expect(lastQuick).toBeLessThanOrEqual(firstSlow);
});

it('keeps another tenant’s share of the slots while one tenant’s kind runs first', async () => {
  // A's sleeps run first by priority; B's one job, of a kind that runs last, still gets the slot A may not hold.
  await request(suite.t.app).put('/admin/queue/kinds/test_sleep').set(admin.auth).send({ priority: -50 }).expect(200);
  await request(suite.t.app).put('/admin/queue/kinds/test_noop').set(admin.auth).send({ priority: 50 }).expect(200);
  const ofA = await submitMany(6, actorOf(suite.a.editor), suite.a.site, 'test_sleep', { ms: 300 });
  const [ofB] = await submitMany(1, actorOf(suite.b.editor), suite.b.site, 'test_noop', {});
  workers.push(await startTestWorker(suite.t, { WORKER_CONCURRENCY: '2', JOB_TENANT_CONCURRENCY: '2' }));
  await allDone([...ofA, ofB!]);
  const starts = await startsOf(suite.t, [...ofA, ofB!]);
  const lastOfA = Math.max(...ofA.map((id) => starts.get(id)!));
  expect(starts.get(ofB!)!).toBeLessThan(lastOfA);
});
