// Jobs' own priorities with real workers: with one slot, a tenant's urgent job
// queued after its others runs first; and a tenant whose every job is urgent
// still does not take the slot another tenant's share keeps
// (worker/tenant-slots.ts). The request's side: test/api/jobs/job-priority.test.ts.
import type { Actor } from '../../core/actor.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import type { Caller } from '../helpers/factories.ts';
import { giveCredits, jobsSuite, startTestWorker, submitAs, allEnded, startsOf } from '../helpers/jobs.ts';

const suite = jobsSuite();
const workers: WorkerHandle[] = [];

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

beforeAll(async () => {
  for (const staff of [suite.a, suite.b])
    for (const payer of [staff.admin, staff.editor]) await giveCredits(suite.t, staff.site, 1000, payer.user.id);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

const submitMany = async (count: number, caller: Caller, site: Site, priority: number, ms: number) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push(
      (
        await submitAs(suite.t, actorOf(caller), site, {
          kind: 'test_sleep',
          input: { ms },
          estimatedUnits: 1,
          priority,
        })
      ).id,
    );
  return ids;
};

const allDone = (ids: string[]) => allEnded(suite.t, ids);

it('runs a tenant’s urgent job before its others queued earlier, with one slot', async () => {
  const { a } = suite;
  const later = await submitMany(4, a.editor, a.site, 0, 20);
  const [urgent] = await submitMany(1, a.admin, a.site, -5, 20);
  workers.push(await startTestWorker(suite.t, { WORKER_CONCURRENCY: '1' }));
  await allDone([...later, urgent!]);
  const starts = await startsOf(suite.t, [...later, urgent!]);
  expect(starts.get(urgent!)!).toBeLessThanOrEqual(Math.min(...later.map((id) => starts.get(id)!)));
});

it('keeps another tenant’s share of the slots while one tenant’s jobs are all urgent', async () => {
  // A's jobs are all at -10, B's one at +10: B's still gets the slot A may not hold.
  const { a, b } = suite;
  const ofA = await submitMany(6, a.admin, a.site, -10, 300);
  const [ofB] = await submitMany(1, b.editor, b.site, 10, 0);
  workers.push(await startTestWorker(suite.t, { WORKER_CONCURRENCY: '2', JOB_TENANT_CONCURRENCY: '2' }));
  await allDone([...ofA, ofB!]);
  const starts = await startsOf(suite.t, [...ofA, ofB!]);
  expect(starts.get(ofB!)!).toBeLessThan(Math.max(...ofA.map((id) => starts.get(id)!)));
});
