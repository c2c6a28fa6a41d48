// Job platform figures for npm run bench:
// - enqueue → start latency through the API (POST /{site}/media/tts, one at a
//   time, each waited for), from the job's own timestamps;
// - text-to-speech jobs per minute with `npm start`'s worker (4 at a time);
// - no-op jobs per second through the whole platform (job row, credits
//   reserved and debited, per-tenant lanes, claim and settle) beside raw
//   graphile-worker on the same database, same concurrency, same run.
import { run } from 'graphile-worker';
import { z } from 'zod';
import { applyEntry, userAccount } from '../core/credits/accounts.ts';
import { api, benchSite } from './http.ts';
import { withOwnDatabase } from './own-database.ts';
import { submitJob } from '../core/jobs/submit.ts';
import { findSiteAccess } from '../core/tenancy/site-access.ts';
import { createLogger } from '../core/logger.ts';
import { workerLogger } from '../core/worker-logger.ts';
import { createPool, sql, type DatabasePool } from '../db/pool.ts';
import { defineJob } from '../worker/jobs/handler.ts';
import { startWorker, type StartWorkerOptions } from '../worker/runner.ts';

type Row = [string, string];

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

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
  for (let i = 1; i <= 30; i++) {
    const job = await speak(i, 30);
    if (job.status !== 'succeeded' || !job.started_at) throw new Error(`speech job ended ${job.status}`);
    pickup.push(Date.parse(job.started_at) - Date.parse(job.created_at));
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
      'Job enqueue → start through the API (POST /media/tts), p50 / p99 of 30',
      `${quantile(pickup, 0.5).toFixed(1)} / ${quantile(pickup, 0.99).toFixed(1)} ms`,
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

/** On a database of its own on the same server, so `npm start`'s worker does not take these jobs. */
export async function throughputFigures(adminUrl: string, count = 1000, concurrency = 4): Promise<Row[]> {
  const rows: Row[] = [];
  return withOwnDatabase(adminUrl, 'bench_jobs', concurrency, async (databaseUrl, config) => {
    const logger = createLogger('silent');
    const db = await createPool(databaseUrl, { maxPoolSize: 12 });
    const ids = z.object({ tenant: z.string(), site: z.string(), slug: z.string(), user: z.string() });
    const made = await db.one(sql.type(ids)`
      with t as (insert into tenants (name, slug) values ('Bench', 'bench') returning id),
           s as (insert into sites (tenant_id, name, slug) select id, 'Bench', 'bench' from t returning id, slug),
           u as (insert into users (email, full_name, email_verified) values ('bench@example.com', 'Bench', true) returning id),
           m as (insert into memberships (tenant_id, user_id, role) select t.id, u.id, 'admin' from t, u returning 1),
           c as (insert into cost_settings (kind, unit, price) values ('bench_noop', 'item', 1) returning 1)
      select t.id as tenant, s.id as site, s.slug, u.id as user from t, s, u, (select count(*) from m) mm, (select count(*) from c) cc`);
    await grantCredits(db, made, count * 10);
    const actor = { kind: 'user' as const, userId: made.user, sessionId: 'bench', isGlobalAdmin: false };

    // The platform: submit (job row + reservation + add_job) and run (claim, settle with debit and release).
    const worker = await startBenchWorker({ databaseUrl, config, db, logger });
    const finished = () =>
      db.oneFirst(
        sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs where status = 'succeeded'`,
      );
    let began = performance.now();
    const access = await findSiteAccess(db, actor, made.site);
    if (!access) throw new Error('the bench user does not reach its site');
    await fanOut(count, 8, () => submitJob(db, config, access, { kind: 'bench_noop', input: {}, estimatedUnits: 1 }));
    await until(async () => (await finished()) >= count);
    const platform = (count / (performance.now() - began)) * 1000;
    await worker.stop();

    // Raw graphile-worker: the same number of no-op jobs, the same concurrency, the same enqueueing.
    const runner = await run({
      connectionString: databaseUrl,
      concurrency,
      noHandleSignals: true,
      pollInterval: config.worker.pollIntervalMs,
      logger: workerLogger(logger),
      crontab: '',
      taskList: { bench__noop: async () => {} },
    });
    const pending = () =>
      db.oneFirst(
        sql.type(
          z.object({ n: z.number() }),
        )`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'bench__noop'`,
      );
    began = performance.now();
    await fanOut(count, 8, () =>
      db.query(sql.typeAlias('void')`select from graphile_worker.add_job('bench__noop', '{}'::json)`),
    );
    await until(async () => (await pending()) === 0);
    const raw = (count / (performance.now() - began)) * 1000;
    await runner.stop();
    await db.end();
    rows.push(
      [`No-op jobs through the platform (${count}, worker of ${concurrency})`, `${platform.toFixed(0)} jobs/s`],
      [`No-op jobs through raw graphile-worker (${count}, same concurrency)`, `${raw.toFixed(0)} jobs/s`],
      ['Platform / raw graphile-worker', `${(platform / raw).toFixed(2)}`],
    );
    return rows;
  });
}
