// A tenant's share of the slots (JOB_TENANT_CONCURRENCY) is counted per pool
// (worker/tenant-slots.ts): a tenant running its share of long jobs in the
// media pool still has its quick job run at once by the light pool, rather
// than after one of its long ones ends; and within the media pool it holds
// no more than its share.
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { sql } from '../../db/pool.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { giveCredits, jobsSuite, startTestWorker, submitAs, waitForJob } from '../helpers/jobs.ts';
import { pollUntil } from '../helpers/poll.ts';

const suite = jobsSuite();
const workers: WorkerHandle[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

it('runs a tenant’s light job while its share of media jobs runs in the media pool', async () => {
  const { t, a } = suite;
  await giveCredits(t, a.site, 1000, a.editor.user.id);
  const actor: Actor = { kind: 'user', userId: a.editor.user.id, sessionId: 'test', isGlobalAdmin: false };
  const submit = (kind: string, input: Record<string, unknown>) =>
    submitAs(t, actor, a.site, { kind, input, estimatedUnits: 1 });
  const share = { JOB_TENANT_CONCURRENCY: '2' };
  workers.push(await startTestWorker(t, { ...share, WORKER_KINDS: 'test_sleep', WORKER_CONCURRENCY: '4' }));
  workers.push(await startTestWorker(t, { ...share, WORKER_KINDS: 'test_noop', WORKER_CONCURRENCY: '2' }));

  const long: string[] = [];
  // Long enough that none ends before the checks below on a loaded 2-core machine (stopping the workers cuts them short).
  for (let i = 0; i < 4; i++) long.push((await submit('test_sleep', { ms: 20_000 })).id);
  const running = () =>
    t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from jobs where id = any(${sql.array(long, 'uuid')}) and status = 'running'`);
  expect(await pollUntil(running, (count) => count === 2, { tries: 100, everyMs: 50 })).toBe(2);
  // Past the light pool's next reading of which tenants are busy (every second).
  await new Promise((resolve) => setTimeout(resolve, 1_500));

  const quick = await submit('test_noop', {});
  expect((await waitForJob(t, quick.id, ['succeeded'], 2_000)).status).toBe('succeeded');
  // None of the long jobs has ended, and the media pool still runs only the tenant's share of them.
  const statuses = await t.services.db.anyFirst(sql.type(z.object({ status: z.string() }))`
    select status from jobs where id = any(${sql.array(long, 'uuid')}) order by status`);
  expect(statuses).toEqual(['queued', 'queued', 'running', 'running']);
});
