// The job platform under faults: a worker process killed in the middle of a
// job (its run is released by the survivors' heartbeat check and runs again,
// debited once), a run replayed after its job succeeded, a worker shut down
// mid-job, transient errors until the attempts run out, two worker processes
// sharing the queue, and one tenant's flood not starving another's job.
// Speech goes to OpenAI's strict fake (test/helpers/fakes/openai.ts).
import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { schedule } from '../../core/jobs/queue.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { startWorkerProcess, workerRegistered } from '../helpers/processes.ts';
import { newSite, newTenant, newUser } from '../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakes/openai.ts';
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
let fake: FakeOpenAI;
const workers: WorkerHandle[] = [];
const children: ChildProcess[] = [];

type Member = { site: Site; actor: Actor };

async function member(): Promise<Member> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const user = await newUser(t);
  await addMember(t.services.db, tenant.id, user.id, 'admin');
  await giveCredits(t, site, 10_000, user.id);
  return { site, actor: { kind: 'user', userId: user.id, sessionId: 'test', isGlobalAdmin: false } };
}

const submit = (who: Member, kind: string, input: Record<string, unknown>, units = 5) =>
  submitAs(t, who.actor, who.site, { kind, input, estimatedUnits: units });

const providerEnv = () => ({ SPEECH_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey });

const workerEnv = () => ({
  ...providerEnv(),
  WORKER_POLL_INTERVAL_MS: '100',
  WORKER_HEARTBEAT_MS: '200',
  WORKER_LOST_AFTER_MS: '1500',
});

/** `npm run worker` as its own process, as operators run it; resolves once it has registered. */
async function spawnWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const { child } = await startWorkerProcess(t, { ...workerEnv(), ...env });
  children.push(child);
  return child;
}

const registered = (pid: number) => workerRegistered(t, pid);

const attemptOutcomes = async (jobId: string) => [
  ...(await t.services.db.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
    select outcome from job_attempts where job_id = ${jobId} order by attempt`)),
];

const debits = (jobId: string) =>
  t.services.db.oneFirst(
    sql.type(
      z.object({ count: z.number() }),
    )`select count(*)::int as count from credit_entries where job_id = ${jobId} and kind = 'debit'`,
  );

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await startTestApp({ env: { ...providerEnv(), JOB_MAX_ATTEMPTS: '3', JOB_TENANT_CONCURRENCY: '1' } });
  await priceTestKinds(t);
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  fake.reset();
});
afterAll(async () => {
  await stopTestApp(t);
  await fake.close();
});

it('runs a job again after its worker process is killed mid-job, and debits it once', async () => {
  const who = await member();
  fake.script('audio/speech', { kind: 'hang' });
  const victim = await spawnWorker();
  const called = fake.nextRequest('audio/speech');
  const job = await submit(who, 'speech', {
    text: 'Killed in the middle of speaking.',
    voice: 'default',
    language: 'en',
    speed: 1,
    format: 'mp3',
  });
  await called;
  expect((await readJob(t, job.id)).status).toBe('running');
  victim.kill('SIGKILL');
  await new Promise((resolve) => victim.once('exit', resolve));

  // A survivor notices the silent heartbeat, releases the run, and takes it.
  workers.push(await startTestWorker(t, workerEnv()));
  const done = await waitForJob(t, job.id, ['succeeded', 'failed'], 60_000);
  expect(done).toMatchObject({ status: 'succeeded', attempts: 2, output: { provider: 'openai' } });
  expect(await attemptOutcomes(job.id)).toEqual(['lost', 'succeeded']);
  // The call the killed process was waiting on, and the survivor's.
  expect(fake.requests.filter((call) => call.path === '/v1/audio/speech')).toHaveLength(2);
  expect(await debits(job.id)).toBe(1);
  expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit', 'release']);
  const media = await t.services.db.anyFirst(
    sql.type(z.object({ id: z.string() }))`select id from media_items where job_id = ${job.id}`,
  );
  expect(media).toEqual([done.media_id]);
  // The dead process is gone from the heartbeat table.
  expect(await registered(victim.pid!)).toBe(false);
});

it('does nothing when a run is replayed after its job succeeded (a completion the queue lost)', async () => {
  const who = await member();
  workers.push(await startTestWorker(t, workerEnv()));
  const job = await submit(who, 'test_noop', {});
  const done = await waitForJob(t, job.id, ['succeeded', 'failed']);
  expect(done.status).toBe('succeeded');
  await schedule(t.services.db, done);
  const queuedRuns = () =>
    t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from graphile_worker.jobs where key = ${`job:${job.id}`}`);
  const deadline = Date.now() + 20_000;
  while ((await queuedRuns()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await queuedRuns()).toBe(0);
  expect(await readJob(t, job.id)).toMatchObject({
    status: 'succeeded',
    attempts: 1,
    credits_charged: done.credits_charged,
  });
  expect(await debits(job.id)).toBe(1);
});

it('hands a running job back when its worker shuts down, and another worker finishes it', async () => {
  const who = await member();
  const stopping = await startTestWorker(t, { ...workerEnv(), WORKER_SHUTDOWN_GRACE_MS: '200' });
  const job = await submit(who, 'test_sleep', { ms: 30_000 });
  await waitForJob(t, job.id, ['running']);
  await stopping.stop();
  expect(await readJob(t, job.id)).toMatchObject({
    status: 'queued',
    error: { code: 'worker_stopped', transient: true },
  });
  await t.services.db.query(sql.typeAlias('void')`update jobs set input = '{"ms": 10}' where id = ${job.id}`);
  workers.push(await startTestWorker(t, workerEnv()));
  const done = await waitForJob(t, job.id, ['succeeded', 'failed'], 60_000);
  expect(done.status).toBe('succeeded');
  expect(await attemptOutcomes(job.id)).toEqual(['retrying', 'succeeded']);
});

it('retries a transient error with backoff and fails it, with its code, when the attempts run out', async () => {
  const who = await member();
  workers.push(await startTestWorker(t, workerEnv()));
  // Two attempts, not the file's three: one retry proves the backoff, and a third would wait e² ≈ 7.4 s more.
  const job = await submitAs(
    t,
    who.actor,
    who.site,
    { kind: 'test_fail', input: { transient: true }, estimatedUnits: 5 },
    { ...t.config, jobs: { ...t.config.jobs, maxAttempts: 2 } },
  );
  const done = await waitForJob(t, job.id, ['failed', 'succeeded'], 60_000);
  expect(done).toMatchObject({
    status: 'failed',
    attempts: 2,
    error: { code: 'provider_unavailable', transient: false },
  });
  expect(await attemptOutcomes(job.id)).toEqual(['retrying', 'failed']);
  const started = await t.services.db.anyFirst(sql.type(z.object({ started_at: z.string() }))`
    select started_at from job_attempts where job_id = ${job.id} order by attempt`);
  // graphile-worker waits e^attempts seconds between runs: about 2.7 s after the first.
  expect(Date.parse(started[1]!) - Date.parse(started[0]!)).toBeGreaterThan(2000);
  expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
}, 60_000);

it('shares the queue between two worker processes', async () => {
  const who = await member();
  // Each answer takes a while, so that both processes take some.
  fake.script('audio/speech', ...Array.from({ length: 6 }, () => ({ kind: 'ok' as const, delayMs: 400 })));
  const first = await spawnWorker();
  const second = await spawnWorker();
  const jobs = [];
  // Several lanes for this tenant, so its jobs can run side by side.
  for (let i = 0; i < 6; i++) {
    jobs.push(
      await submitAs(
        t,
        who.actor,
        who.site,
        {
          kind: 'speech',
          input: { text: `Job number ${i}.`, voice: 'default', language: 'en', speed: 1, format: 'wav' },
          estimatedUnits: 5,
        },
        { ...t.config, jobs: { ...t.config.jobs, tenantConcurrency: 4 } },
      ),
    );
  }
  for (const job of jobs)
    expect((await waitForJob(t, job.id, ['succeeded', 'failed'], 60_000)).status).toBe('succeeded');
  const pids = await t.services.db.anyFirst(sql.type(z.object({ pid: z.number() }))`
    select distinct p.pid from job_attempts a join worker_processes p on a.worker_id = any(p.worker_ids)
    where a.job_id = any(${sql.array(
      jobs.map((job) => job.id),
      'uuid',
    )})`);
  expect([...pids].sort()).toEqual([first.pid, second.pid].sort());
});

it('does not let one tenant’s flood of jobs starve another tenant’s single job', async () => {
  const busy = await member();
  const quiet = await member();
  workers.push(await startTestWorker(t, { ...workerEnv(), WORKER_CONCURRENCY: '2' }));
  const flood = [];
  for (let i = 0; i < 30; i++) flood.push(await submit(busy, 'test_sleep', { ms: 100 }, 1));
  const single = await submit(quiet, 'test_sleep', { ms: 100 }, 1);
  const done = await waitForJob(t, single.id, ['succeeded', 'failed'], 60_000);
  expect(done.status).toBe('succeeded');
  // With JOB_TENANT_CONCURRENCY=1 the flood holds one of the two slots; the other serves the quiet tenant.
  const floodLeft = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from jobs where id = any(${sql.array(
      flood.map((job) => job.id),
      'uuid',
    )})
      and (finished_at is null or finished_at > ${done.finished_at}::timestamptz)`);
  expect(floodLeft).toBeGreaterThan(20);
  for (const job of flood) await waitForJob(t, job.id, ['succeeded'], 60_000);
}, 90_000);

it('keeps a slot of every worker for the other tenants while one floods it with long jobs', async () => {
  const busy = await member();
  const quiet = await member();
  // Two slots and a per-tenant limit above them: only the slot kept for others stops the flood taking both.
  workers.push(await startTestWorker(t, { ...workerEnv(), WORKER_CONCURRENCY: '2', JOB_TENANT_CONCURRENCY: '4' }));
  const flood = [];
  // Three jobs are more than the two slots, and two seconds each leave the quiet job time to start beside the
  // first (six of four seconds proved the same in 24 s).
  for (let i = 0; i < 3; i++) flood.push(await submit(busy, 'test_sleep', { ms: 2000 }, 1));
  await waitForJob(t, flood[0]!.id, ['running'], 30_000);
  const single = await submit(quiet, 'test_sleep', { ms: 10 }, 1);
  const done = await waitForJob(t, single.id, ['succeeded', 'failed'], 30_000);
  expect(done.status).toBe('succeeded');
  for (const job of flood) await waitForJob(t, job.id, ['succeeded'], 60_000);
  const runs = await t.services.db.any(sql.type(z.object({ started: z.number(), finished: z.number() }))`
    select extract(epoch from started_at)::float8 as started, extract(epoch from finished_at)::float8 as finished
    from jobs where id = any(${sql.array(
      flood.map((job) => job.id),
      'uuid',
    )}) order by started_at`);
  // The quiet tenant's job started beside the flood's first long job, not after it...
  expect(Date.parse(done.started_at!) / 1000).toBeLessThan(Math.min(...runs.map((run) => run.finished)));
  // ...because the flood never ran two at once on this worker of two slots.
  for (let i = 1; i < runs.length; i++) expect(runs[i]!.started).toBeGreaterThanOrEqual(runs[i - 1]!.finished - 0.05);
}, 90_000);
