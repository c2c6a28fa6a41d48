// Jobs in tests: rows made directly (for reading and access tests), an
// in-process worker on the test database with extra kinds of job, credits,
// and waiting for a job to reach a state.
import path from 'node:path';
import { z } from 'zod';
import { applyEntry, userAccount, poolAccount } from '../../core/credits/accounts.ts';
import { createLogger, type Logger } from '../../core/logger.ts';
import { jobColumns, jobRow, type JobRow, type JobStatus } from '../../core/jobs/model.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import type { JobHandler } from '../../worker/job.ts';
import { defineJob } from '../../worker/job.ts';
import { permanent, transient } from '../../core/jobs/errors.ts';
import { startWorker, type WorkerHandle } from '../../worker/runner.ts';
import type { Actor } from '../../core/actor.ts';
import type { TaskDefinition } from '../../worker/task.ts';
import type { Config } from '../../core/config.ts';
import type { Resolve } from '../../core/net/safe-fetch.ts';
import type { Job } from '../../core/jobs/model.ts';
import { submitJob, type Submission } from '../../core/jobs/submit.ts';
import { findSiteAccess } from '../../core/tenancy/site-access.ts';
import { startTestApp, stopTestApp, testConfig, type TestApp } from './app.ts';
import type { Caller } from './factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from './identity.ts';

/** A job row as the API would have made it, in any state, without queueing it. */
export async function newJob(
  t: TestApp,
  site: Site,
  fields: Partial<{
    userId: string | null;
    kind: string;
    status: JobStatus;
    input: Record<string, unknown>;
    provider: string;
    providerRef: string;
  }> = {},
): Promise<JobRow> {
  const status = fields.status ?? 'queued';
  const finished = ['succeeded', 'failed', 'canceled'].includes(status);
  return t.services.db.one(sql.type(jobRow)`
    insert into jobs (tenant_id, site_id, user_id, kind, status, input, provider, provider_ref, finished_at, waiting_at, error)
    values (${site.tenant_id}, ${site.id}, ${fields.userId ?? null}, ${fields.kind ?? 'speech'}, ${status},
            ${sql.jsonb((fields.input ?? { text: 'Hello' }) as never)}, ${fields.provider ?? null}, ${fields.providerRef ?? null},
            ${finished ? sql.fragment`now()` : null}, ${status === 'waiting' ? sql.fragment`now()` : null},
            ${status === 'failed' ? sql.jsonb({ code: 'provider_rejected', message: 'no' }) : null})
    returning ${jobColumns}`);
}

/** Submits a job as a job-creating endpoint does once the caller is let in: as `actor`, on the site. */
export async function submitAs(
  t: TestApp,
  actor: Actor,
  site: Site,
  submission: Submission,
  config: Config = t.config,
): Promise<Job> {
  const access = await findSiteAccess(t.services.db, actor, site.id);
  if (!access) throw new Error('the actor does not reach the site');
  return submitJob(t.services.db, config, access, submission);
}

export async function readJob(t: TestApp, id: string): Promise<JobRow> {
  return t.services.db.one(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${id}`);
}

/** Credits for a user on a site, or (no user) in the tenant's pool. */
export async function giveCredits(t: TestApp, site: Site, amount: number, userId?: string): Promise<void> {
  await t.services.db.transaction(async (tx) => {
    const account = userId ? await userAccount(tx, site, userId) : await poolAccount(tx, site.tenant_id);
    await applyEntry(tx, {
      accountId: account,
      tenantId: site.tenant_id,
      siteId: userId ? site.id : null,
      userId: userId ?? null,
      kind: 'grant',
      amount,
      reason: 'test',
    });
  });
}

/** Polls the row: for assertions after the fact, not for timing. */
export async function waitForJob(t: TestApp, id: string, statuses: JobStatus[], ms = 30_000): Promise<JobRow> {
  const deadline = Date.now() + ms;
  for (;;) {
    const job = await readJob(t, id);
    if (statuses.includes(job.status) || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until each of the jobs has ended (succeeded, failed or canceled). */
export const allEnded = (t: TestApp, ids: string[]) =>
  Promise.all(ids.map((id) => waitForJob(t, id, ['succeeded', 'failed', 'canceled'])));

/** When each of these jobs started, in milliseconds, by id. */
export async function startsOf(t: TestApp, ids: string[]): Promise<Map<string, number>> {
  const rows = await t.services.db.any(sql.type(z.object({ id: z.string(), started_at: z.string() }))`
    select id, started_at from jobs where id = any(${sql.array(ids, 'uuid')})`);
  return new Map(rows.map((row) => [row.id, Date.parse(row.started_at)]));
}

export const ledgerFor = (t: TestApp, jobId: string) =>
  t.services.db.any(sql.type(z.object({ kind: z.string(), amount: z.number(), reserved_change: z.number() }))`
    select kind, amount, reserved_change from credit_entries where job_id = ${jobId}
    order by created_at, array_position(array['reservation', 'debit', 'release'], kind)`);

/** Kinds of job for tests, priced at 1 credit per unit (see priceTestKinds). */
const flakyFailed = new Set<string>();

export const testKinds = new Map<string, JobHandler>([
  [
    'test_noop',
    defineJob({ input: z.object({}).loose(), run: async () => ({ status: 'succeeded', output: {}, units: 1 }) }),
  ],
  [
    'test_sleep',
    defineJob({
      input: z.object({ ms: z.number().int().min(0).max(60_000) }),
      async run({ ms }, { signal, progress }) {
        await progress(0.5, 'sleeping');
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
        return { status: 'succeeded', output: { slept: ms }, units: 1 };
      },
    }),
  ],
  [
    // Fails the first time each job runs, succeeds when it runs again (a retry).
    'test_flaky',
    defineJob({
      input: z.object({}).loose(),
      async run(_input, { job }) {
        if (!flakyFailed.has(job.id)) {
          flakyFailed.add(job.id);
          throw permanent('provider_rejected', 'the provider refused it this time');
        }
        return { status: 'succeeded', output: { attempt: 'again' }, units: 1 };
      },
    }),
  ],
  [
    'test_fail',
    defineJob({
      input: z.object({ transient: z.boolean() }),
      async run({ transient: isTransient }) {
        throw isTransient ? transient('provider_unavailable', 'try later') : permanent('provider_rejected', 'never');
      },
    }),
  ],
]);

export async function priceTestKinds(t: TestApp): Promise<void> {
  await t.services.db.query(sql.typeAlias('void')`
    insert into cost_settings (kind, unit, price, description)
    select kind, 'item', 1, 'test' from unnest(${sql.array([...testKinds.keys()], 'text')}) as kind
    on conflict do nothing`);
}

/** A worker on the test database with the test kinds (and `extraTasks`); `env` tunes its configuration; `options.logger` hears its log. */
export async function startTestWorker(
  t: TestApp,
  env: Record<string, string> = {},
  extraTasks?: Map<string, TaskDefinition>,
  options: { resolve?: Resolve; logger?: Logger } = {},
): Promise<WorkerHandle> {
  const config = testConfig({
    DATABASE_URL: t.database.url,
    DATA_DIR: t.config.dataDir,
    WORKER_POLL_INTERVAL_MS: '100',
    WORKER_HEARTBEAT_MS: '200',
    WORKER_LOST_AFTER_MS: '1500',
    ...env,
  });
  return startWorker({
    databaseUrl: t.database.url,
    config,
    db: t.services.db,
    logger: createLogger(config.logLevel),
    crontab: '',
    extraKinds: testKinds,
    // The app's services: an agent run's tools act as the API does (worker/runner.ts).
    services: t.services,
    ...(extraTasks ? { extraTasks } : {}),
    ...options,
  });
}

/** What the job test files share: an app with the test kinds priced, two staffed tenants, a global admin, and a worker slot emptied after each test. */
export type JobsSuite = { t: TestApp; a: Staffed; b: Staffed; admin: Caller; worker: WorkerHandle | undefined };

/**
 * `env` configures the app (a function, for what is known only once the test
 * file's fakes listen): jobs are planned at submit by the app's providers, so
 * a worker started with other providers still runs the plan the app made.
 */
export function jobsSuite(env: Record<string, string> | (() => Record<string, string>) = {}): JobsSuite {
  const suite = { worker: undefined } as JobsSuite;
  beforeAll(async () => {
    suite.t = await startTestApp({ env: typeof env === 'function' ? env() : env });
    await priceTestKinds(suite.t);
    suite.a = await staffedTenant(suite.t);
    suite.b = await staffedTenant(suite.t);
    suite.admin = await globalAdmin(suite.t);
  });
  afterEach(async () => {
    await suite.worker?.stop();
    suite.worker = undefined;
  });
  afterAll(async () => {
    await suite.worker?.stop();
    await stopTestApp(suite.t);
  });
  return suite;
}

/** Where the local storage driver keeps an object (tests run with the local driver unless they say otherwise). */
export function localFile(t: TestApp, key: string): string {
  if (t.config.storage.driver !== 'local') throw new Error('this test app stores files in S3');
  return path.join(t.config.storage.root, key);
}
