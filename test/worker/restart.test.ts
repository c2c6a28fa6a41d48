// A worker process killed and started again on the same host: the new one
// sees its predecessor's pid gone and releases its runs (and the tenant's
// queue lane they held) at once, rather than after WORKER_LOST_AFTER_MS. A pid
// is judged only where it means the same process: the same kernel boot and
// pid namespace, and a start time that matches. Speech goes to OpenAI's
// strict fake (test/helpers/fakes/openai.ts).
import { spawn } from 'node:child_process';
import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '../../core/logger.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import { reapGone } from '../../worker/liveness.ts';
import { ownIdentity, startedAt } from '../../worker/process-identity.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakes/openai.ts';
import { giveCredits, ledgerFor, waitForJob } from '../helpers/jobs.ts';
import { expectLedgerHolds } from '../helpers/ledger.ts';
import { startWorkerProcess, stopProcess, workerRegistered, type Started } from '../helpers/processes.ts';

let t: TestApp;
let fake: FakeOpenAI;
const started: Started[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // One lane per tenant: a job the dead process held blocks the tenant's next one. The API plans each job's
  // providers at submit, so it is told them too.
  t = await startTestApp({ env: { ...providerEnv(), JOB_TENANT_CONCURRENCY: '1' } });
});
afterEach(async () => {
  for (const one of started.splice(0)) if (one.child.exitCode === null) await stopProcess(one, 'SIGKILL');
});
afterAll(async () => {
  await stopTestApp(t);
  await fake.close();
});

function providerEnv() {
  return { SPEECH_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey };
}

async function author(): Promise<{ site: Site; user: Caller }> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const user = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, 100, user.user.id);
  return { site, user };
}

const speak = (site: Site, user: Caller, text: string) =>
  request(t.app)
    .post(`/${site.slug}/media/tts`)
    .set(user.auth)
    .send({ text, format: 'wav' })
    .expect(202)
    .then((res) => res.body as { id: string });

const attemptOutcomes = (jobId: string) =>
  t.services.db.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
    select outcome from job_attempts where job_id = ${jobId} order by attempt`);

it('releases a killed worker’s runs as soon as it is started again, long before it would be judged lost', async () => {
  const { site, user } = await author();
  const env = {
    ...providerEnv(),
    WORKER_POLL_INTERVAL_MS: '100',
    // Silence alone would release the dead process's runs only after ten minutes.
    WORKER_LOST_AFTER_MS: '600000',
  };
  fake.script('audio/speech', { kind: 'hang' });
  const first = await startWorkerProcess(t, env);
  started.push(first);
  const called = fake.nextRequest('audio/speech');
  const held = await speak(site, user, 'Spoken when the worker is killed.');
  const behind = await speak(site, user, 'Queued behind it in the same lane.');
  await called;
  await stopProcess(first, 'SIGKILL');

  started.push(await startWorkerProcess(t, env));
  for (const job of [held, behind])
    expect((await waitForJob(t, job.id, ['succeeded', 'failed'], 60_000)).status).toBe('succeeded');
  expect(await workerRegistered(t, first.child.pid!)).toBe(false);
  expect(await attemptOutcomes(held.id)).toEqual(['lost', 'succeeded']);
  expect(await attemptOutcomes(behind.id)).toEqual(['succeeded']);
  expect((await ledgerFor(t, held.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  await expectLedgerHolds(t);
}, 90_000);

it('judges a pid gone only in its own boot and pid namespace, and knows a reused pid by its start time', async () => {
  // Rows of the worker processes earlier tests killed would be judged too.
  await t.services.db.query(sql.typeAlias('void')`delete from worker_processes`);
  const own = ownIdentity();
  expect(own.scope).toMatch(/^[0-9a-f-]{36}\/pid:\[\d+\]$/);
  const exited = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => exited.once('exit', resolve));
  const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
  try {
    const rows: [string, number, string | null, number | null][] = [
      ['dead here', exited.pid!, own.scope, 1],
      // Another container, or before a reboot: the same number names another process.
      ['dead in another namespace', exited.pid!, 'another-boot/pid:[4026531836]', 1],
      ['dead, scope unknown', exited.pid!, null, null],
      // Another worker in this very process (tests run several).
      ['this process', process.pid, own.scope, own.started],
      // Our pid, recorded by a process that had it before us.
      ['our pid reused', process.pid, own.scope, own.started! - 1],
      ['alive', alive.pid!, own.scope, startedAt(alive.pid!)],
      ['alive, start unknown', alive.pid!, own.scope, null],
    ];
    for (const [id, pid, scope, pidStarted] of rows) {
      await t.services.db.query(sql.typeAlias('void')`
        insert into worker_processes (id, worker_ids, hostname, pid, concurrency, pid_scope, pid_started)
        values (${id}, '{}', 'here', ${pid}, 1, ${scope}, ${pidStarted})`);
    }
    expect(await reapGone(t.services.db, own, 'me', createLogger('silent'))).toBe(2);
    const left = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`select id from worker_processes`);
    expect([...left].sort()).toEqual(
      ['alive', 'alive, start unknown', 'dead in another namespace', 'dead, scope unknown', 'this process'].sort(),
    );
  } finally {
    alive.kill('SIGKILL');
  }
});
