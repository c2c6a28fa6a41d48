// Worker pools per kind and pauses of the queue, with real workers: a worker
// given WORKER_KINDS takes only those kinds (two with disjoint kinds split
// the queue between them), an unknown name is a configuration error; a
// paused kind's or tenant's queued jobs wait while the rest run, and run once
// resumed (the admin routes themselves: test/api/jobs/queue-pauses.test.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { jobKindNames } from '../../core/jobs/kinds.ts';
import { runTask, tenantFlag } from '../../core/jobs/queue.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import { jobKinds } from '../../worker/jobs/kinds.ts';
import { kindsOutsidePool } from '../../worker/queue-gate.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import type { Caller } from '../helpers/factories.ts';
import {
  giveCredits,
  jobsSuite,
  newJob,
  readJob,
  startTestWorker,
  submitAs,
  waitForJob,
  allEnded,
} from '../helpers/jobs.ts';

const suite = jobsSuite();
const workers: WorkerHandle[] = [];
let siteA: Site;
let siteB: Site;
let actorA: Actor;
let actorB: Actor;
let admin: Caller;

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

beforeAll(async () => {
  siteA = suite.a.site;
  siteB = suite.b.site;
  actorA = actorOf(suite.a.editor);
  actorB = actorOf(suite.b.editor);
  admin = suite.admin;
  await giveCredits(suite.t, siteA, 1000, suite.a.editor.user.id);
  await giveCredits(suite.t, siteB, 1000, suite.b.editor.user.id);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

const start = async (env: Record<string, string> = {}) => {
  const worker = await startTestWorker(suite.t, { WORKER_CONCURRENCY: '4', ...env });
  workers.push(worker);
  return worker;
};

const submit = (actor: Actor, site: Site, kind: string, input: Record<string, unknown> = {}) =>
  submitAs(suite.t, actor, site, { kind, input, estimatedUnits: 1 });

const submitMany = async (
  count: number,
  actor: Actor,
  site: Site,
  kind: string,
  input: Record<string, unknown> = {},
) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await submit(actor, site, kind, input)).id);
  return ids;
};

const allDone = (ids: string[]) => allEnded(suite.t, ids);

/** The graphile-worker ids that ran attempts of these jobs. */
const workerIdsOf = (ids: string[]) =>
  suite.t.services.db.anyFirst(sql.type(z.object({ worker_id: z.string() }))`
    select distinct worker_id from job_attempts where job_id = any(${sql.array(ids, 'uuid')})`);

const attemptsOf = (ids: string[]) =>
  suite.t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from job_attempts where job_id = any(${sql.array(ids, 'uuid')})`);

const statusesOf = async (ids: string[]) =>
  new Set((await Promise.all(ids.map((id) => readJob(suite.t, id)))).map((job) => job.status));

describe('pools', () => {
  it('names every kind the worker runs, in core and in the worker alike', () => {
    expect([...jobKinds.keys()].sort()).toEqual([...jobKindNames].sort());
  });

  it('flags each run of a job with its kind and its tenant', async () => {
    const job = await submit(actorA, siteA, 'test_noop');
    const flags = await suite.t.services.db.oneFirst(sql.type(z.object({ flags: z.record(z.string(), z.unknown()) }))`
      select flags from graphile_worker.jobs where key = ${`job:${job.id}`}`);
    expect(Object.keys(flags).sort()).toEqual([`kind:test_noop`, `tenant:${suite.a.tenant.id}`].sort());
    await start();
    await allDone([job.id]);
  });

  it('gives entries queued before pools their kind flag (migration 0051)', async () => {
    const job = await newJob(suite.t, siteA, { kind: 'test_sleep', input: { ms: 0 } });
    await enqueue(
      suite.t.services.db,
      runTask,
      { job_id: job.id },
      {
        flags: [tenantFlag(suite.a.tenant.id)],
        jobKey: `job:${job.id}`,
      },
    );
    const migration = readFileSync(path.join(import.meta.dirname, '../../db/migrations/0051_queue_pauses.sql'), 'utf8');
    const client = new pg.Client({ connectionString: suite.t.database.url });
    await client.connect();
    try {
      await client.query(migration.slice(migration.indexOf('do $$')));
    } finally {
      await client.end();
    }
    const flags = await suite.t.services.db.oneFirst(sql.type(z.object({ flags: z.record(z.string(), z.unknown()) }))`
      select flags from graphile_worker.jobs where key = ${`job:${job.id}`}`);
    expect(Object.keys(flags).sort()).toEqual(['kind:test_sleep', `tenant:${suite.a.tenant.id}`].sort());
    await suite.t.services.db.query(sql.typeAlias('void')`
      select from graphile_worker.remove_job(${`job:${job.id}`})`);
    await suite.t.services.db.query(sql.typeAlias('void')`update jobs set status = 'canceled' where id = ${job.id}`);
  });

  it('refuses WORKER_KINDS with a kind it does not know, naming the variable', async () => {
    expect(() => kindsOutsidePool(['video', 'vidoe'], ['video', 'speech'])).toThrow(/WORKER_KINDS: unknown kind vidoe/);
    expect(kindsOutsidePool([], ['video', 'speech'])).toEqual([]);
    expect(kindsOutsidePool(['video'], ['video', 'speech'])).toEqual(['speech']);
    await expect(startTestWorker(suite.t, { WORKER_KINDS: 'test_noop,nonsense' })).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/WORKER_KINDS: unknown kind nonsense/),
    });
  });

  it('gives each kind only to the workers that take it', async () => {
    const light = await start({ WORKER_KINDS: 'test_noop' });
    void light;
    const slow = await submitMany(3, actorA, siteA, 'test_sleep', { ms: 0 });
    const quick = await submitMany(3, actorA, siteA, 'test_noop');
    await allDone(quick);
    // The light worker ran the noops, queued after the sleeps, and left the sleeps.
    expect(await statusesOf(quick)).toEqual(new Set(['succeeded']));
    expect(await statusesOf(slow)).toEqual(new Set(['queued']));
    expect(await attemptsOf(slow)).toBe(0);

    await start({ WORKER_KINDS: 'test_sleep' });
    const moreQuick = await submitMany(3, actorB, siteB, 'test_noop');
    await allDone([...slow, ...moreQuick]);
    expect(await statusesOf([...slow, ...moreQuick])).toEqual(new Set(['succeeded']));
    const lightIds = new Set(await workerIdsOf([...quick, ...moreQuick]));
    const mediaIds = await workerIdsOf(slow);
    expect(mediaIds.length).toBeGreaterThan(0);
    for (const id of mediaIds) expect(lightIds.has(id)).toBe(false);
  });
});

describe('pauses', () => {
  const pauseKind = (kind: string) =>
    request(suite.t.app).put(`/admin/queue/pauses/kinds/${kind}`).set(admin.auth).send({ reason: 'test' });

  it('holds a paused kind’s 20 queued jobs while the rest run, and runs them all once resumed', async () => {
    const held = await submitMany(20, actorA, siteA, 'test_noop');
    expect((await pauseKind('test_noop')).status).toBe(200);
    expect(new Set((await Promise.all(held.map((id) => readJob(suite.t, id)))).map((job) => job.stage))).toEqual(
      new Set(['paused: test_noop jobs are paused']),
    );
    // No poll for a minute: once resumed, the worker looks again because it heard of it.
    await start({ WORKER_POLL_INTERVAL_MS: '60000' });
    // A job of another kind, queued after the 20, runs: the worker looked past them.
    const other = await submit(actorA, siteA, 'test_sleep', { ms: 0 });
    expect((await waitForJob(suite.t, other.id, ['succeeded', 'failed'])).status).toBe('succeeded');
    expect(await statusesOf(held)).toEqual(new Set(['queued']));
    expect(await attemptsOf(held)).toBe(0);

    // Resumed while the worker runs: it hears of it and takes them all.
    expect((await request(suite.t.app).delete('/admin/queue/pauses/kinds/test_noop').set(admin.auth)).status).toBe(204);
    await allDone(held);
    expect(await statusesOf(held)).toEqual(new Set(['succeeded']));
  });

  it('holds only the paused tenant’s jobs, and lets them run once resumed', async () => {
    await start({ WORKER_POLL_INTERVAL_MS: '60000' });
    const paused = await request(suite.t.app)
      .put(`/admin/queue/pauses/tenants/${suite.a.tenant.id}`)
      .set(admin.auth)
      .send({});
    expect(paused.status).toBe(200);
    // B's first job runs: by then the worker has long heard of the pause (it was announced before B's job was queued).
    const first = await submit(actorB, siteB, 'test_noop');
    await allDone([first.id]);
    const ofA = await submitMany(3, actorA, siteA, 'test_noop');
    const ofB = await submitMany(3, actorB, siteB, 'test_noop');
    await allDone(ofB);
    expect(await statusesOf(ofB)).toEqual(new Set(['succeeded']));
    expect(await statusesOf(ofA)).toEqual(new Set(['queued']));
    expect((await readJob(suite.t, ofA[0]!)).stage).toBe('paused: this tenant’s jobs are paused');
    expect(await attemptsOf(ofA)).toBe(0);

    const resumed = await request(suite.t.app)
      .delete(`/admin/queue/pauses/tenants/${suite.a.tenant.id}`)
      .set(admin.auth);
    expect(resumed.status).toBe(204);
    await allDone(ofA);
    expect(await statusesOf(ofA)).toEqual(new Set(['succeeded']));
  });
});
