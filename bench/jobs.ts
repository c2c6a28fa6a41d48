// Job platform figures for npm run bench:
// - enqueue → start latency through the API (POST /{site}/media/tts, one at a
//   time, each waited for and followed by a pause, so each finds the worker
//   idle), from the job's own timestamps, beside raw graphile-worker's
//   add_job → task start on the same server, paced the same;
// - text-to-speech jobs per minute with `npm start`'s worker (4 at a time);
// - no-op jobs per second through the whole platform (job row, credits
//   reserved and debited, tenant flags, claim and settle) beside raw
//   graphile-worker on the same database, same concurrency, same run;
// - fairness: another tenant's job while one floods with long jobs.
import { run } from 'graphile-worker';
import { z } from 'zod';
import { applyEntry, userAccount } from '../core/credits/accounts.ts';
import { api, benchSite } from './http.ts';
import { withOwnDatabase } from './own-database.ts';
import { submitJob } from '../core/jobs/submit.ts';
import { findSiteAccess, type SiteAccess } from '../core/tenancy/site-access.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import { createPool, sql, type DatabasePool } from '../db/pool.ts';
import { defineJob } from '../worker/job.ts';
import { startWorker, type StartWorkerOptions } from '../worker/runner.ts';

type Row = [string, string];

/** The nearest-rank quantile: the smallest sample at or above a fraction q of them (of 100, the p99 is the 99th, not the slowest). */
export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

/**
 * Enqueue → start samples. Of 100, the p99 is the second slowest, and one
 * slow disk flush of the submit's commit moves it by tens of milliseconds
 * from run to run; of 300 it is the fourth slowest.
 */
const pickupSamples = 300;

/** Between two enqueue → start samples, so that each finds the worker idle. */
const idlePauseMs = 20;

/** An ISO timestamp in milliseconds, with the microseconds PostgreSQL kept (Date.parse drops them). */
const preciseMs = (iso: string) => Date.parse(iso) + Number(`0.${/\.\d{3}(\d*)/.exec(iso)?.[1] ?? ''}0`);

type JobBody = {
  id: string;
  status: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};

/** Through the API of `npm start` (which runs a worker of concurrency 4). */
export async function speechFigures(url: string, token: string): Promise<Row[]> {
  const site = await benchSite(url, token, 'Bench', 1_000_000);
  const speak = (i: number, wait?: number) =>
    api<JobBody>(
      `${url}/${site.slug}/media/tts`,
      token,
      'POST',
      { text: `Benchmark sentence number ${i}, spoken by the platform.`, format: 'mp3' },
      wait ? { Prefer: `wait=${wait}` } : {},
    );

  await speak(0, 30); // warm: the first call loads what later calls reuse
  const pickup: number[] = [];
  for (let i = 1; i <= pickupSamples; i++) {
    // On an idle worker, as the raw baseline below: the last job's completion and the worker's look
    // for the next one are over (a speech job is answered as soon as it is settled, before both).
    await new Promise((resolve) => setTimeout(resolve, idlePauseMs));
    const job = await speak(i, 30);
    if (job.status !== 'succeeded' || !job.started_at) throw new Error(`speech job ended ${job.status}`);
    pickup.push(preciseMs(job.started_at) - preciseMs(job.created_at));
  }
  pickup.sort((a, b) => a - b);

  const count = 24;
  const began = performance.now();
  const submitted = await Promise.all(Array.from({ length: count }, (_, i) => speak(100 + i)));
  for (const job of submitted) {
    const done = await api<JobBody>(`${url}/${site.slug}/jobs/${job.id}`, token, 'GET', undefined, {
      Prefer: 'wait=55',
    });
    if (done.status !== 'succeeded') throw new Error(`speech job ended ${done.status}`);
  }
  const minutes = (performance.now() - began) / 60_000;
  return [
    [
      `Job enqueue → start through the API (POST /media/tts), p50 / p99 / slowest of ${pickupSamples}`,
      `${quantile(pickup, 0.5).toFixed(1)} / ${quantile(pickup, 0.99).toFixed(1)} / ${pickup.at(-1)!.toFixed(1)} ms`,
    ],
    [
      `Text to speech (espeak-ng + ffmpeg → mp3), ${count} submitted at once, worker of 4`,
      `${(count / minutes).toFixed(0)} jobs/min`,
    ],
  ];
}

/** The no-op kind of job the throughput figures run (registered as `bench_noop`). */
const benchKind = defineJob({
  input: z.object({}).loose(),
  run: async () => ({ status: 'succeeded', output: {}, units: 1 }),
});

/** The platform's worker with the no-op kind beside its own, and no crontab (the bench adds exactly what it measures). */
export const startBenchWorker = (options: Omit<StartWorkerOptions, 'crontab' | 'extraKinds'>) =>
  startWorker({ ...options, crontab: '', extraKinds: new Map([['bench_noop', benchKind]]) });

/** Polls `check` every `everyMs` until it holds; throws after `ms`. */
export async function until(check: () => Promise<boolean>, ms = 300_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Credits granted to a user on a site, from outside (as a global admin's grant). */
export async function grantCredits(
  db: DatabasePool,
  to: { tenant: string; site: string; user: string },
  amount: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const account = await userAccount(tx, { id: to.site, tenant_id: to.tenant }, to.user);
    await applyEntry(tx, {
      accountId: account,
      tenantId: to.tenant,
      siteId: to.site,
      userId: to.user,
      kind: 'grant',
      amount,
    });
  });
}

/** In `width` lanes at once, `count` calls of `each`. */
export async function fanOut(count: number, width: number, each: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await each(next++);
    }),
  );
}

/** `n` tenants, each with a site and an admin who holds `credits` there: who submits the bench's jobs. */
export async function payers(db: DatabasePool, n: number, credits: number): Promise<SiteAccess[]> {
  const ids = z.object({ tenant: z.string(), site: z.string(), user: z.string() });
  const made = await db.any(sql.type(ids)`
    with t as (
      insert into tenants (name, slug) select 'Bench ' || i, 'bench-' || i || '-' || ${String(Date.now())}
      from generate_series(1, ${n}) as i returning id, slug
    ), s as (
      insert into sites (tenant_id, name, slug) select id, 'Bench', slug from t returning id, tenant_id
    ), u as (
      insert into users (email, full_name, email_verified)
      select slug || '@example.com', 'Bench', true from t returning id, email
    ), m as (
      insert into memberships (tenant_id, user_id, role)
      select t.id, u.id, 'admin' from t join u on u.email = t.slug || '@example.com' returning tenant_id, user_id
    )
    select s.tenant_id as tenant, s.id as site, m.user_id as user from s join m using (tenant_id)`);
  const access = [];
  for (const payer of made) {
    await grantCredits(db, payer, credits);
    const actor = { kind: 'user' as const, userId: payer.user, sessionId: 'bench', isGlobalAdmin: false };
    const found = await findSiteAccess(db, actor, payer.site);
    if (!found) throw new Error('the bench user does not reach its site');
    access.push(found);
  }
  return access;
}

/**
 * On a database of its own on the same server, so `npm start`'s worker does
 * not take these jobs. The platform is run twice: with jobs from 8 tenants
 * (what a shared platform sees), and with every job paid by one user, whose
 * credit account each submit and settle updates in turn: the most one payer
 * can go through.
 */
export async function throughputFigures(adminUrl: string, count = 1000, concurrency = 4, rounds = 3): Promise<Row[]> {
  return withOwnDatabase(adminUrl, 'bench_jobs', concurrency, async (databaseUrl, config) => {
    const logger = createLogger('silent');
    const db = await createPool(databaseUrl, { maxPoolSize: 12 });
    await db.query(
      sql.typeAlias('void')`insert into cost_settings (kind, unit, price) values ('bench_noop', 'item', 1)`,
    );
    const queued = (task: string) => async () =>
      (await db.oneFirst(
        sql.type(
          z.object({ n: z.number() }),
        )`select count(*)::int as n from graphile_worker.jobs where task_identifier = ${task}`,
      )) === 0;

    // The platform: submit (job row + reservation + add_job) and run (claim, settle with debit and release).
    const platform = async (from: SiteAccess[]) => {
      const worker = await startBenchWorker({ databaseUrl, config, db, logger });
      const began = performance.now();
      await fanOut(count, 8, (i) =>
        submitJob(db, config, from[i % from.length]!, { kind: 'bench_noop', input: {}, estimatedUnits: 1 }),
      );
      await until(queued('job__run'));
      const perSecond = (count / (performance.now() - began)) * 1000;
      await worker.stop();
      return perSecond;
    };
    // Raw graphile-worker: the same number of no-op jobs, the same concurrency, the same enqueueing.
    const raw = async () => {
      const runner = await run({
        connectionString: databaseUrl,
        concurrency,
        noHandleSignals: true,
        pollInterval: config.worker.pollIntervalMs,
        logger: workerLogger(logger),
        crontab: '',
        taskList: { bench__noop: async () => {} },
      });
      const began = performance.now();
      await fanOut(count, 8, () =>
        db.query(sql.typeAlias('void')`select from graphile_worker.add_job('bench__noop', '{}'::json)`),
      );
      await until(queued('bench__noop'));
      const perSecond = (count / (performance.now() - began)) * 1000;
      await runner.stop();
      return perSecond;
    };

    // Rounds of the three, side by side, so that a machine busy with something else for a while
    // weighs on the platform and on its baseline alike; the median round is reported.
    const eight = await payers(db, 8, count * 10 * rounds);
    const one = await payers(db, 1, count * 10 * rounds);
    const results: { tenants: number; onePayer: number; raw: number }[] = [];
    for (let round = 0; round < rounds; round++)
      results.push({ tenants: await platform(eight), raw: await raw(), onePayer: await platform(one) });
    const median = (ratio: (result: (typeof results)[number]) => number) =>
      [...results].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds / 2)]!;
    const byTenants = median((result) => result.tenants / result.raw);
    const byPayer = median((result) => result.onePayer / result.raw);
    await db.end();
    const each = (pick: (result: (typeof results)[number]) => number) =>
      results.map((result) => pick(result).toFixed(0)).join(', ');
    return [
      [
        `No-op jobs through the platform, 8 tenants (${count} a round, worker of ${concurrency}), ${rounds} rounds`,
        `${each((result) => result.tenants)} jobs/s`,
      ],
      ['No-op jobs through the platform, one payer (same)', `${each((result) => result.onePayer)} jobs/s`],
      ['No-op jobs through raw graphile-worker (same, same concurrency)', `${each((result) => result.raw)} jobs/s`],
      [
        'Platform / raw graphile-worker, 8 tenants, median round (target ≥ 0.30)',
        (byTenants.tenants / byTenants.raw).toFixed(2),
      ],
      ['Platform / raw graphile-worker, one payer, median round', (byPayer.onePayer / byPayer.raw).toFixed(2)],
    ];
  });
}

/**
 * The baseline of the enqueue → start figure: raw graphile-worker on the same
 * server, an idle worker of 4, one job at a time, from the job's creation
 * (the database's clock at its transaction's start, as the platform's
 * created_at) to its task starting. The machine's own floor: a commit, a
 * notification and a claim.
 */
export async function rawPickupFigures(adminUrl: string, samples = pickupSamples): Promise<Row[]> {
  return withOwnDatabase(adminUrl, 'bench_pickup', 4, async (databaseUrl, config) => {
    const db = await createPool(databaseUrl, { maxPoolSize: 2 });
    let started: (ms: number) => void = () => {};
    const runner = await run({
      connectionString: databaseUrl,
      concurrency: 4,
      noHandleSignals: true,
      pollInterval: config.worker.pollIntervalMs,
      logger: workerLogger(createLogger('silent')),
      crontab: '',
      taskList: { bench__pickup: async (_payload, helpers) => started(Date.now() - helpers.job.created_at.getTime()) },
    });
    const pickup: number[] = [];
    try {
      for (let i = 0; i <= samples; i++) {
        const ran = new Promise<number>((resolve) => (started = resolve));
        await db.query(sql.typeAlias('void')`select from graphile_worker.add_job('bench__pickup', '{}'::json)`);
        const ms = await ran;
        // The first warms the worker's connections, as the platform's warm-up job does.
        if (i > 0) pickup.push(ms);
        await new Promise((resolve) => setTimeout(resolve, idlePauseMs));
      }
    } finally {
      await runner.stop();
      await db.end();
    }
    pickup.sort((a, b) => a - b);
    return [
      [
        `Raw graphile-worker add_job → task start, idle worker of 4, p50 / p99 / slowest of ${samples} (the machine's floor for the above)`,
        `${quantile(pickup, 0.5).toFixed(1)} / ${quantile(pickup, 0.99).toFixed(1)} / ${pickup.at(-1)!.toFixed(1)} ms`,
      ],
    ];
  });
}

/** A job that sleeps its `ms` (woken early by a cancel): queueing alone, no CPU of its own. */
export const sleepingKind = defineJob({
  input: z.object({ ms: z.number().int() }),
  run: async ({ ms }, { signal }) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { status: 'succeeded', output: {}, units: 1 };
  },
});

/**
 * Fairness when jobs are long: one tenant queues `flood` jobs that each run
 * a minute, on a worker of `concurrency` (default settings otherwise); then
 * another tenant submits one short job, `tries` times. Its wait (enqueue →
 * start) is what the other tenant sees while the flood runs.
 */
export async function fairnessFigures(adminUrl: string, flood = 10_000, tries = 5): Promise<Row[]> {
  return withOwnDatabase(adminUrl, 'bench_fair', 1, async (databaseUrl) => {
    // Default settings: WORKER_CONCURRENCY and JOB_TENANT_CONCURRENCY as shipped.
    const config = loadConfig({
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(32),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
    });
    const concurrency = config.worker.concurrency;
    const logger = createLogger('silent');
    const db = await createPool(databaseUrl, { maxPoolSize: 12 });
    await db.query(
      sql.typeAlias('void')`insert into cost_settings (kind, unit, price) values ('bench_long', 'item', 1)`,
    );
    const [busy, quiet] = await payers(db, 2, flood * 2);
    const submitLong = (who: SiteAccess, ms: number) =>
      submitJob(db, config, who, { kind: 'bench_long', input: { ms }, estimatedUnits: 1 });
    const began = performance.now();
    await fanOut(flood, 8, () => submitLong(busy!, 60_000));
    const queuedIn = (performance.now() - began) / 1000;
    const running = (tenantId: string) =>
      db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from jobs where status = 'running' and tenant_id = ${tenantId}`);
    const startedAfter = z.object({ ms: z.number().nullable() });
    // With the shipped share per tenant, and with one as large as the worker (only the slot kept for others then
    // stands between the flood and every slot).
    const rows: Row[] = [[`One tenant floods: ${flood} jobs of a minute each queued`, `in ${queuedIn.toFixed(0)} s`]];
    for (const share of [config.jobs.tenantConcurrency, concurrency]) {
      const shared = { ...config, jobs: { ...config.jobs, tenantConcurrency: share } };
      const worker = await startWorker({
        databaseUrl,
        config: shared,
        db,
        logger,
        crontab: '',
        extraKinds: new Map([['bench_long', sleepingKind]]),
      });
      const waits: number[] = [];
      let most = 0;
      try {
        // The flood takes its share of the slots first.
        await until(async () => (await running(busy!.site.tenant_id)) >= Math.min(share, concurrency - 1), 60_000);
        for (let i = 0; i < tries; i++) {
          const job = await submitLong(quiet!, 10);
          const startedMs = () =>
            db.oneFirst(sql.type(startedAfter)`
              select (extract(epoch from started_at - created_at) * 1000)::float8 as ms from jobs where id = ${job.id}`);
          await until(async () => (await startedMs()) !== null, 30_000);
          waits.push((await startedMs())!);
          most = Math.max(most, await running(busy!.site.tenant_id));
        }
      } finally {
        await worker.stop();
      }
      waits.sort((a, b) => a - b);
      rows.push([
        `JOB_TENANT_CONCURRENCY ${share}, worker of ${concurrency}: the flood's jobs running at once; another tenant's job, enqueue → start, ${tries} tries (target ≤ 2 s)`,
        `at most ${most}; ${waits.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      ]);
    }
    await db.end();
    return rows;
  });
}
