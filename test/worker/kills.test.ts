// Worker processes killed with SIGKILL at random moments of jobs that reserve
// and debit credits (speech through OpenAI's strict fake), each started
// again at once: KILLS kills (6 here, a regression check of the properties
// below, each kill costing a worker's start of ~2 s; `npm run kills` runs 100
// with a new seed and prints its figures). Every job ends once, is debited at
// most once and only if it succeeded, leaves nothing reserved, and every
// balance is the sum of its entries. Also the issue's restart: `npm start`
// killed while 24 speech jobs of one tenant are queued or running, then
// started again with the default heartbeat settings.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI, type Script } from '../helpers/fakes/openai.ts';
import { giveCredits, waitForJob } from '../helpers/jobs.ts';
import { expectLedgerHolds, expectSettledOnce } from '../helpers/ledger.ts';
import { pollUntil } from '../helpers/poll.ts';
import { killWorkersAtRandom } from '../helpers/kill-loop.ts';
import { startProcess, stopProcess, type Started } from '../helpers/processes.ts';
import { seeded, type Random } from '../fuzz/engine.ts';

const kills = Number(process.env.KILLS ?? 6);
const seed = Number(process.env.KILLS_SEED ?? 16);
/** Figures, printed by `npm run kills` (tests assert behaviour; the figures are for reading). */
const report = (line: string) => {
  if (process.env.KILLS_REPORT) process.stdout.write(`${line}\n`);
};

let t: TestApp;
let fake: FakeOpenAI;
const running = new Set<Started>();

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // Enough attempts that no job runs out of them however often its worker is killed. The API plans each
  // job's providers at submit, so it is told them too.
  t = await startTestApp({ env: { ...providerEnv(), JOB_MAX_ATTEMPTS: '25' } });
});
afterEach(async () => {
  for (const one of running) if (one.child.exitCode === null) await stopProcess(one, 'SIGKILL');
  running.clear();
  fake.reset();
});
afterAll(async () => {
  await stopTestApp(t);
  await fake.close();
});

type Author = { site: Site; user: Caller };

async function author(): Promise<Author> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const user = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, 1_000_000, user.user.id);
  return { site, user };
}

const speak = (who: Author, text: string) =>
  request(t.app)
    .post(`/${who.site.slug}/media/tts`)
    .set(who.user.auth)
    .send({ text, format: 'wav' })
    .expect(202)
    .then((res) => (res.body as { id: string }).id);

function providerEnv() {
  return { SPEECH_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey };
}

/** Speech answers that take `delayMs` each. */
const slowly = (count: number, delayMs: number): Script[] =>
  Array.from({ length: count }, () => ({ kind: 'ok', delayMs }));

const count = (query: ReturnType<typeof sql.fragment>) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count ${query}`);

const open = (ids: string[]) =>
  count(sql.fragment`from jobs where id = any(${sql.array(ids, 'uuid')}) and status in ('queued', 'running')`);

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

function sentence(random: Random, n: number): string {
  const words = ['credits', 'ledger', 'worker', 'killed', 'again', 'speech', 'lane', 'queue', 'tenant', 'once'];
  return `Job ${n}: ${Array.from({ length: 3 + random.int(8) }, () => random.pick(words)).join(' ')}.`;
}

it('releases at once the lanes of `npm start` killed with 24 speech jobs of one tenant queued or running', async () => {
  const who = await author();
  fake.script('audio/speech', ...slowly(24, 300));
  // `npm start` on the test database, with the default WORKER_HEARTBEAT_MS and WORKER_LOST_AFTER_MS.
  const env = {
    ...providerEnv(),
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: t.database.url,
    DATA_DIR: t.config.dataDir,
    WORKER_CONCURRENCY: '4',
  };
  const first = await startProcess('scripts/start.ts', env);
  running.add(first);
  const jobs: string[] = [];
  for (let i = 0; i < 24; i++) jobs.push(await speak(who, `Sentence number ${i} of the restart.`));
  const ids = sql.array(jobs, 'uuid');
  // Killed once some have finished, while every lane of the tenant runs one and the rest wait behind them.
  await pollUntil(
    () =>
      t.services.db.one(sql.type(z.object({ succeeded: z.number(), running: z.number() }))`
        select count(*) filter (where status = 'succeeded')::int as succeeded,
               count(*) filter (where status = 'running')::int as running
        from jobs where id = any(${ids})`),
    (now) => now.succeeded >= 2 && now.running >= t.config.jobs.tenantConcurrency,
    { tries: 3000, everyMs: 20 },
  );
  await stopProcess(first, 'SIGKILL');
  const states = await t.services.db.any(sql.type(z.object({ id: z.string(), status: z.string() }))`
    select id, status from jobs where id = any(${ids})`);
  const held = states.filter((job) => job.status === 'running').map((job) => job.id);
  const waiting = states.filter((job) => job.status === 'queued').map((job) => job.id);
  expect(waiting.length).toBeGreaterThan(0);

  const restarted = Date.now();
  const second = await startProcess('scripts/start.ts', env);
  running.add(second);
  const ready = Date.now() - restarted;
  for (const id of jobs) expect((await waitForJob(t, id, ['succeeded', 'failed'], 120_000)).status).toBe('succeeded');
  // A run that settled just before the kill still had its queue entry, locked by the dead process: released,
  // it runs once more, finds its job finished and ends. Settled once means nothing is left once that happened.
  const entries = () =>
    count(
      sql.fragment`from graphile_worker.jobs where key = any(${sql.array(
        jobs.map((id) => `job:${id}`),
        'text',
      )})`,
    );
  expect(await pollUntil(entries, (left) => left === 0, { tries: 600, everyMs: 100 })).toBe(0);
  expect(await expectSettledOnce(t, jobs)).toEqual({ succeeded: 24 });
  await expectLedgerHolds(t);
  expect(await stopProcess(second)).toBe(0);

  // When, after the restart, the tenant's jobs ran again: from the jobs' own timestamps.
  const since = z.object({ ms: z.number().nullable() });
  const firstWaiting = await t.services.db.oneFirst(sql.type(since)`
    select (extract(epoch from min(started_at)) * 1000)::float8 as ms from jobs where id = any(${sql.array(waiting, 'uuid')})`);
  const heldAgain = await t.services.db.oneFirst(sql.type(since)`
    select (extract(epoch from max(started_at)) * 1000)::float8 as ms from job_attempts
    where job_id = any(${sql.array(held, 'uuid')}) and attempt = 2`);
  const allDone = await t.services.db.oneFirst(sql.type(since)`
    select (extract(epoch from max(finished_at)) * 1000)::float8 as ms from jobs where id = any(${ids})`);
  report(
    `npm start killed with 24 speech jobs (${held.length} running, ${waiting.length} queued), started again: ` +
      `ready after ${seconds(ready)}; the first queued job started ${seconds(firstWaiting! - restarted)} ` +
      `and the held ones ran again ${held.length ? seconds(heldAgain! - restarted) : '-'} after the restart ` +
      `(the default WORKER_LOST_AFTER_MS is ${seconds(45_000)}); all 24 succeeded ${seconds(allDone! - restarted)} after it`,
  );
}, 240_000);

it(
  `settles every job once through ${kills} SIGKILLs of worker processes at random moments`,
  async () => {
    const random = seeded(seed);
    const began = Date.now();
    const authors = [await author(), await author(), await author()];
    const env = {
      ...providerEnv(),
      WORKER_CONCURRENCY: '2',
      WORKER_POLL_INTERVAL_MS: '100',
      WORKER_HEARTBEAT_MS: '200',
      // Silence alone would release a killed process's runs only after ten
      // minutes: here they are released because its pid is gone.
      WORKER_LOST_AFTER_MS: '600000',
    };
    const jobs: string[] = [];
    // Jobs keep coming, so that every kill finds work under way.
    const topUp = async () => {
      for (let i = await open(jobs); i < 8; i++) {
        fake.script('audio/speech', { kind: 'ok', delayMs: random.int(400) });
        jobs.push(await speak(random.pick(authors), sentence(random, jobs.length)));
      }
    };
    let caughtWorking = 0;
    const beforeKill = async (pid: number) => {
      caughtWorking += await count(sql.fragment`from jobs j join worker_processes p on j.locked_by = any(p.worker_ids)
                       where p.pid = ${pid} and j.status = 'running'`);
    };
    const { workers, killed, releases } = await killWorkersAtRandom(t, {
      kills,
      random,
      env,
      running,
      topUp,
      beforeKill,
    });
    const finished = await pollUntil(
      () => open(jobs),
      (left) => left === 0,
      { tries: 3000, everyMs: 100 },
    );
    expect(finished).toBe(0);
    for (const worker of workers) expect(await stopProcess(worker)).toBe(0);

    expect(await expectSettledOnce(t, jobs)).toEqual({ succeeded: jobs.length });
    // One audio file each, however many runs made it.
    expect(await count(sql.fragment`from media_items where job_id = any(${sql.array(jobs, 'uuid')})`)).toBe(
      jobs.length,
    );
    await expectLedgerHolds(t);
    const lost = await count(
      sql.fragment`from job_attempts where job_id = any(${sql.array(jobs, 'uuid')}) and outcome = 'lost'`,
    );
    expect(lost).toBeGreaterThan(0);
    report(
      `${killed} SIGKILLs (seed ${seed}) of two worker processes, ${caughtWorking} running jobs caught by them: ` +
        `${jobs.length} speech jobs all succeeded, ${lost} runs lost and run again, each job debited once, ` +
        `nothing left reserved, the ledger equal to every balance; a killed process's runs released after ` +
        `p50 ${seconds(quantile(releases, 0.5))}, max ${seconds(Math.max(...releases))}; ${seconds(Date.now() - began)} in all`,
    );
  },
  120_000 + kills * 20_000,
);
