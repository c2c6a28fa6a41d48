// Retention of finished jobs (JOB_RETENTION_DAYS, core/jobs/retention.ts):
// the hourly maintenance__cleanup task deletes finished jobs' rows past the
// age with their attempts and provider calls, in batches, and leaves recent
// and unfinished jobs and every entry of the credit ledger.
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { removeFinishedJobs } from '../../core/jobs/retention.ts';
import { fail } from '../../core/jobs/settle.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import { giveCredits, jobsSuite, readJob, startTestWorker, submitAs } from '../helpers/jobs.ts';
import { expectLedgerHolds } from '../helpers/ledger.ts';

const suite = jobsSuite();
let t: TestApp;
let site: Site;
let payer: Caller;

beforeAll(async () => {
  t = suite.t;
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  payer = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, 1000, payer.user.id);
});

const count = (query: ReturnType<typeof sql.fragment>) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from ${query}`);

/** A job submitted (credits reserved) and failed (released), finished `daysAgo` days ago, with an attempt and a provider call. */
async function failedDaysAgo(daysAgo: number) {
  const actor: Actor = { kind: 'user', userId: payer.user.id, sessionId: 'test', isGlobalAdmin: false };
  const { id } = await submitAs(t, actor, site, { kind: 'test_fail', input: { transient: false }, estimatedUnits: 2 });
  const { db } = t.services;
  await db.query(sql.typeAlias('void')`
    insert into job_attempts (job_id, attempt, worker_id) values (${id}, 1, 'retention-test')`);
  await db.query(sql.typeAlias('void')`
    insert into provider_calls (job_id, tenant_id, capability, vendor, model, started_at, duration_ms, outcome)
    values (${id}, ${site.tenant_id}, 'speech', 'local', 'espeak', now(), 1, 'failed')`);
  await fail(db, await readJob(t, id), { code: 'provider_rejected', message: 'no' });
  await db.query(sql.typeAlias('void')`
    update jobs set finished_at = now() - ${daysAgo} * interval '1 day' where id = ${id}`);
  // Its queue entry is gone, as a worker's run would have left it.
  await db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${id}`})`);
  return id;
}

const entriesOf = (ids: string[]) => count(sql.fragment`credit_entries where job_id = any(${sql.array(ids, 'uuid')})`);
const jobsLeft = (ids: string[]) => count(sql.fragment`jobs where id = any(${sql.array(ids, 'uuid')})`);

it('deletes finished jobs past the retention period with their attempts and provider calls, and keeps the ledger', async () => {
  const days = t.config.jobs.retentionDays;
  const old = [await failedDaysAgo(days + 1), await failedDaysAgo(days + 30)];
  const recent = await failedDaysAgo(days - 1);
  const actor: Actor = { kind: 'user', userId: payer.user.id, sessionId: 'test', isGlobalAdmin: false };
  const queued = await submitAs(t, actor, site, { kind: 'test_noop', input: {}, estimatedUnits: 1 });
  // Queued since long ago: not finished, so kept however old.
  await t.services.db.query(sql.typeAlias('void')`
    update jobs set created_at = now() - ${days + 5} * interval '1 day' where id = ${queued.id}`);
  await t.services.db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${queued.id}`})`);
  const entriesBefore = await entriesOf([...old, recent]);
  expect(entriesBefore).toBe(6);

  suite.worker = await startTestWorker(t);
  await enqueue(t.services.db, 'maintenance__cleanup', {});
  const deadline = Date.now() + 20_000;
  while ((await count(sql.fragment`graphile_worker.jobs where task_identifier = 'maintenance__cleanup'`)) > 0) {
    if (Date.now() > deadline) throw new Error('maintenance__cleanup did not run');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  expect(await jobsLeft(old)).toBe(0);
  expect(await jobsLeft([recent, queued.id])).toBe(2);
  expect(await count(sql.fragment`job_attempts where job_id = any(${sql.array(old, 'uuid')})`)).toBe(0);
  expect(await count(sql.fragment`provider_calls where job_id = any(${sql.array(old, 'uuid')})`)).toBe(0);
  expect(await count(sql.fragment`provider_calls where job_id = ${recent}`)).toBe(1);
  expect(await entriesOf([...old, recent])).toBe(entriesBefore);
  await expectLedgerHolds(t);
});

it('removes a backlog a batch at a time until none is left', async () => {
  const days = t.config.jobs.retentionDays;
  const old = [];
  for (let i = 0; i < 5; i += 1) old.push(await failedDaysAgo(days + 2));
  expect(await removeFinishedJobs(t.services.db, days, { batch: 2 })).toBe(5);
  expect(await jobsLeft(old)).toBe(0);
  expect(await entriesOf(old)).toBe(10);
  await expectLedgerHolds(t);
});
