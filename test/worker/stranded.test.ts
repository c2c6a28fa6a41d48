// Nothing stays stuck with credits reserved: a job no queue entry can run any
// more, and a job waiting past JOB_WAITING_HOURS for a webhook, are failed by
// the workers' heartbeat check, and their credits come back; the failures are
// counted in the process's metrics as a worker's are.
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { createLogger } from '../../core/logger.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import { failStrandedJobs } from '../../core/jobs/stranded.ts';
import { processMetrics } from '../../core/metrics/process.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, newUser } from '../helpers/factories.ts';
import { giveCredits, ledgerFor, priceTestKinds, readJob, submitAs } from '../helpers/jobs.ts';

let t: TestApp;
let site: Site;
let actor: Actor;
beforeAll(async () => {
  t = await startTestApp({ env: { JOB_WAITING_HOURS: '2' } });
  await priceTestKinds(t);
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  const user = await newUser(t);
  await addMember(t.services.db, tenant.id, user.id, 'admin');
  await giveCredits(t, site, 100, user.id);
  actor = { kind: 'user', userId: user.id, sessionId: 'test', isGlobalAdmin: false };
});
afterAll(() => stopTestApp(t));

const submit = async () => submitAs(t, actor, site, { kind: 'test_noop', input: {}, estimatedUnits: 4 });
const sweep = () => failStrandedJobs(t.services.db, t.config, createLogger('silent'));

/** The process's count of test_noop jobs failed for good with this code (core/metrics/process.ts). */
const failedWith = async (code: string) =>
  (await processMetrics().jobFailures.get()).values.find(
    (value) => value.labels.kind === 'test_noop' && value.labels.code === code,
  )?.value ?? 0;

/** Rewrites a job as if it were older (the updated_at trigger would stamp now()). */
async function age(jobId: string, changes: ReturnType<typeof sql.fragment>) {
  await t.services.db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`alter table jobs disable trigger jobs_updated_at`);
    await tx.query(
      sql.typeAlias('void')`update jobs set ${changes}, updated_at = now() - interval '5 minutes' where id = ${jobId}`,
    );
    await tx.query(sql.typeAlias('void')`alter table jobs enable trigger jobs_updated_at`);
  });
}

const reserved = () =>
  t.services.db.oneFirst(
    sql.type(
      z.object({ reserved: z.number() }),
    )`select reserved from credit_accounts where site_id = ${site.id} and user_id = ${actor.kind === 'user' ? actor.userId : ''}`,
  );

it('fails a running job whose queue entry spent its attempts, and releases its credits', async () => {
  const job = await submit();
  await t.services.db.query(sql.typeAlias('void')`
    update graphile_worker._private_jobs set attempts = max_attempts where key = ${`job:${job.id}`}`);
  await age(job.id, sql.fragment`status = 'running', attempts = 3`);
  await t.services.db.query(
    sql.typeAlias('void')`insert into job_attempts (job_id, attempt, worker_id) values (${job.id}, 3, 'gone')`,
  );
  const before = await failedWith('attempts_exhausted');
  expect(await sweep()).toBe(1);
  expect(await readJob(t, job.id)).toMatchObject({
    status: 'failed',
    error: { code: 'attempts_exhausted', transient: false },
  });
  expect((await failedWith('attempts_exhausted')) - before).toBe(1);
  expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  expect(
    await t.services.db.oneFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
    select outcome from job_attempts where job_id = ${job.id}`),
  ).toBe('lost');
  expect(await reserved()).toBe(0);
});

it('fails a job waiting past JOB_WAITING_HOURS for its webhook', async () => {
  const job = await submit();
  await t.services.db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${job.id}`})`);
  await age(
    job.id,
    sql.fragment`status = 'waiting', provider = 'mediaprovider', provider_ref = 'slow', waiting_at = now() - interval '3 hours'`,
  );
  const before = await failedWith('provider_timeout');
  expect(await sweep()).toBe(1);
  expect(await readJob(t, job.id)).toMatchObject({ status: 'failed', error: { code: 'provider_timeout' } });
  expect((await failedWith('provider_timeout')) - before).toBe(1);
  expect(await reserved()).toBe(0);
});

it('leaves alone jobs that can still run or are still within their wait', async () => {
  const queued = await submit();
  await age(queued.id, sql.fragment`stage = 'old but runnable'`);
  const waiting = await submit();
  await t.services.db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${waiting.id}`})`);
  await age(
    waiting.id,
    sql.fragment`status = 'waiting', provider = 'mediaprovider', provider_ref = 'recent', waiting_at = now() - interval '1 hour'`,
  );
  // Just submitted, queue entry and all: inside the minute's grace anyway.
  const fresh = await submit();
  expect(await sweep()).toBe(0);
  for (const job of [queued, waiting, fresh]) expect((await readJob(t, job.id)).status).not.toBe('failed');
});
