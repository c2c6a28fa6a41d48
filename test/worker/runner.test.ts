// The worker pool: loads the tasks in worker/tasks/, runs queued jobs,
// validates payloads before any side effect, and drains on stop.
import { z } from 'zod';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { sql } from '../../db/pool.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { defineTask } from '../../worker/task.ts';
import { loadTaskDefinitions } from '../../worker/tasks.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { startTestWorker } from '../helpers/jobs.ts';

let t: TestApp;
let worker: WorkerHandle | undefined;
beforeAll(async () => {
  t = await startTestApp({ env: { WORKER_CONCURRENCY: '2', WORKER_POLL_INTERVAL_MS: '200' } });
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => stopTestApp(t));

// Takes long enough that stop() is called while it runs.
const slowTask = defineTask({
  payload: z.object({ name: z.string() }),
  async run({ name }, { db }) {
    await new Promise((resolve) => setTimeout(resolve, 700));
    await db.query(sql.typeAlias('void')`insert into worker_heartbeats (name, worker_id) values (${name}, 'slow')`);
  },
});

const start = async () => {
  worker = await startTestWorker(t, {}, new Map([['test__slow', slowTask]]));
  return worker;
};

const heartbeat = z.object({ name: z.string(), worker_id: z.string() });
const heartbeats = () =>
  t.services.db.any(sql.type(heartbeat)`select name, worker_id from worker_heartbeats order by name`);
const queued = () =>
  t.services.db.oneFirst(
    sql.type(z.object({ count: z.number() }))`select count(*)::int as count from graphile_worker.jobs`,
  );

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('loads every task file under its file name', async () => {
  const definitions = await loadTaskDefinitions();
  expect([...definitions.keys()]).toContain('system__heartbeat');
});

it('runs a queued job to completion', async () => {
  const handle = await start();
  await enqueue(t.services.db, 'system__heartbeat', { name: 'run-test' });
  // Both the queued job and the worker's start-up heartbeat run, in either order.
  const rows = await until(heartbeats, (list) =>
    ['run-test', 'queue'].every((name) => list.some((row) => row.name === name)),
  );
  expect(rows).toContainEqual({ name: 'run-test', worker_id: expect.stringMatching(/^pool-/) });
  expect(rows.map((row) => row.name)).toContain('queue');
  expect(await until(queued, (count) => count === 0)).toBe(0);
  await handle.stop();
});

it('drops a job whose payload is invalid without running it', async () => {
  await start();
  await enqueue(t.services.db, 'system__heartbeat', { name: 42 });
  await until(queued, (count) => count === 0);
  expect(await queued()).toBe(0);
  expect((await heartbeats()).map((row) => row.name)).not.toContain(42);
  expect((await heartbeats()).every((row) => typeof row.name === 'string')).toBe(true);
});

it('tries a job’s completion again when it fails (a deadlock, a dropped connection), and goes on taking jobs', async () => {
  // graphile-worker 0.18 gave up the whole worker pool after one failed batch of completions, leaving the
  // process alive and idle with its jobs locked (patches/graphile-worker+0.18.0.patch). The first deletion of
  // this job's queue entry fails here as a deadlock would.
  await t.services.db.query(sql.unsafe`create sequence completion_attempts`);
  await t.services.db.query(sql.unsafe`
    create function fail_first_completion() returns trigger language plpgsql as $$
    begin
      if nextval('completion_attempts') = 1 then
        raise exception 'deadlock detected (made by the test)' using errcode = '40P01';
      end if;
      return old;
    end $$`);
  await t.services.db.query(sql.unsafe`
    create trigger fail_first_completion before delete on graphile_worker._private_jobs
    for each row when (old.payload->>'name' = 'completed-twice') execute function fail_first_completion()`);
  try {
    await start();
    await enqueue(t.services.db, 'system__heartbeat', { name: 'completed-twice' });
    expect(await until(queued, (count) => count === 0)).toBe(0);
    expect(
      await t.services.db.oneFirst(
        sql.type(z.object({ last_value: z.number() }))`select last_value::int from completion_attempts`,
      ),
    ).toBe(2);
    // The pool lives on: the next job runs too.
    await enqueue(t.services.db, 'system__heartbeat', { name: 'after-the-retry' });
    const rows = await until(heartbeats, (list) => list.some((row) => row.name === 'after-the-retry'));
    expect(rows.map((row) => row.name)).toContain('after-the-retry');
  } finally {
    await t.services.db.query(sql.unsafe`drop trigger fail_first_completion on graphile_worker._private_jobs`);
    await t.services.db.query(sql.unsafe`drop function fail_first_completion()`);
  }
});

it('locks an entry for its run without waiting for the disk, and records a failure waiting for it', async () => {
  // worker/get-job-connection.ts: each change of an entry is recorded with the commit setting it was made under.
  // The test cluster commits without waiting for the disk (test/setup/global-setup.ts); this database waits,
  // as a deployment's does, for the connections the worker opens below.
  await t.services.db.query(sql.unsafe`
    do $$ begin execute format('alter database %I set synchronous_commit = on', current_database()); end $$`);
  await t.services.db.query(sql.unsafe`create table entry_writes (locking boolean, sync text)`);
  await t.services.db.query(sql.unsafe`
    create function record_entry_write() returns trigger language plpgsql as $$
    begin
      insert into entry_writes values (new.locked_by is not null, current_setting('synchronous_commit'));
      return new;
    end $$`);
  await t.services.db.query(sql.unsafe`
    create trigger record_entry_write after update on graphile_worker._private_jobs
    for each row when (new.payload->>'name' = 'fails-once') execute function record_entry_write()`);
  const failing = defineTask({
    payload: z.object({ name: z.string() }),
    run() {
      return Promise.reject(new Error('fails, as the test wants'));
    },
  });
  try {
    worker = await startTestWorker(t, {}, new Map([['test__fails', failing]]));
    await enqueue(t.services.db, 'test__fails', { name: 'fails-once' });
    const writes = () =>
      t.services.db.any(sql.type(z.object({ locking: z.boolean(), sync: z.string() }))`select * from entry_writes`);
    // The look that locked it, then the failure that unlocked it for a retry (in a few seconds).
    expect(await until(writes, (rows) => rows.length >= 2)).toEqual([
      { locking: true, sync: 'off' },
      { locking: false, sync: 'on' },
    ]);
  } finally {
    await t.services.db.query(sql.unsafe`drop trigger record_entry_write on graphile_worker._private_jobs`);
    await t.services.db.query(sql.unsafe`drop function record_entry_write()`);
    await t.services.db.query(sql.unsafe`drop table entry_writes`);
    await t.services.db.query(
      sql.unsafe`delete from graphile_worker._private_jobs where payload->>'name' = 'fails-once'`,
    );
    await t.services.db.query(sql.unsafe`
      do $$ begin execute format('alter database %I reset synchronous_commit', current_database()); end $$`);
  }
});

it('finishes the running job before stop() resolves', async () => {
  const handle = await start();
  await enqueue(t.services.db, 'test__slow', { name: 'drain-test' });
  // The slow job itself, not the start-up heartbeat the worker queues for itself.
  const running = () =>
    t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where j.locked_by is not null and k.identifier = 'test__slow'`);
  expect(await until(running, (count) => count === 1)).toBe(1);
  expect((await heartbeats()).map((row) => row.name)).not.toContain('drain-test');
  await handle.stop();
  expect((await heartbeats()).map((row) => row.name)).toContain('drain-test');
  // Nothing is left locked by the stopped worker.
  const locked = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from graphile_worker._private_jobs where locked_by is not null`);
  const leftovers = await t.services.db.any(
    sql.type(
      z.object({ identifier: z.string(), attempts: z.number(), last_error: z.string().nullable() }),
    )`select t.identifier, j.attempts, j.last_error from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id`,
  );
  expect(leftovers).toEqual([]);
  expect(locked).toBe(0);
});

it('removes expired rows and keeps live ones', async () => {
  const { db } = t.services;
  const user = await db.oneFirst(
    sql.type(z.object({ id: z.string() }))`insert into users (email) values ('cleanup@example.com') returning id`,
  );
  await db.query(sql.unsafe`
    insert into rate_limits (key, points, expire) values ('old', 1, 1000), ('live', 1, (extract(epoch from now()) * 1000 + 60000)::bigint)`);
  await db.query(sql.unsafe`
    insert into sessions (user_id, expires_at, revoked_at) values
      (${user}, now() + interval '1 day', now() - interval '8 days'),
      (${user}, now() + interval '1 day', null)`);
  await start();
  await enqueue(db, 'maintenance__cleanup', {});
  await until(queued, (count) => count === 0);
  expect(await db.anyFirst(sql.type(z.object({ key: z.string() }))`select key from rate_limits order by key`)).toEqual([
    'live',
  ]);
  expect(
    await db.oneFirst(
      sql.type(z.object({ count: z.number() }))`select count(*)::int as count from sessions where user_id = ${user}`,
    ),
  ).toBe(1);
});

it('deletes finished jobs and handled webhook ids past the retention period, and nothing else', async () => {
  const { db } = t.services;
  const tenant = await db.oneFirst(
    sql.type(z.object({ id: z.string() }))`insert into tenants (name, slug) values ('Kept', 'kept') returning id`,
  );
  const site = await db.oneFirst(
    sql.type(
      z.object({ id: z.string() }),
    )`insert into sites (tenant_id, name, slug) values (${tenant}, 'Kept', 'kept') returning id`,
  );
  const retention = t.config.jobs.retentionDays;
  const job = (name: string, status: string, finishedDaysAgo: number | null) => sql.fragment`
    (${tenant}, ${site}, 'speech', ${status}, ${sql.jsonb({ name })},
     ${finishedDaysAgo === null ? null : sql.fragment`now() - ${finishedDaysAgo} * interval '1 day'`})`;
  await db.query(sql.typeAlias('void')`
    insert into jobs (tenant_id, site_id, kind, status, input, finished_at) values
      ${job('old success', 'succeeded', retention + 1)}, ${job('old failure', 'failed', retention + 2)},
      ${job('recent', 'succeeded', retention - 1)}, ${job('waiting for long', 'waiting', null)}`);
  await db.query(sql.typeAlias('void')`
    insert into webhook_events (source, event_id, received_at) values
      ('mediaprovider', 'old', now() - ${retention + 1} * interval '1 day'), ('mediaprovider', 'recent', now())`);
  await start();
  await enqueue(db, 'maintenance__cleanup', {});
  await until(queued, (count) => count === 0);
  expect([
    ...(await db.anyFirst(
      sql.type(z.object({ name: z.string() }))`select input->>'name' as name from jobs order by 1`,
    )),
  ]).toEqual(['recent', 'waiting for long']);
  expect([
    ...(await db.anyFirst(sql.type(z.object({ event_id: z.string() }))`select event_id from webhook_events`)),
  ]).toEqual(['recent']);
});

it('deletes statistics and security records past their retention periods, and nothing newer', async () => {
  const { db } = t.services;
  const { statsDays, securityDays } = t.config.retention;
  const daysAgo = (days: number) => sql.fragment`now() - ${days} * interval '1 day'`;
  await db.query(sql.typeAlias('void')`
    insert into request_stats (minute, site_id, route, status_class, count, buckets) values
      (date_trunc('minute', ${daysAgo(statsDays + 1)}), null, 'GET /old', 2, 1, '{}'),
      (date_trunc('minute', ${daysAgo(statsDays - 1)}), null, 'GET /recent', 2, 1, '{}')`);
  await db.query(sql.typeAlias('void')`
    insert into security_counts (minute, kind, network, count, first_seen, last_seen) values
      (date_trunc('minute', ${daysAgo(securityDays + 1)}), 'not_found', 'old', 1, now(), now()),
      (date_trunc('minute', ${daysAgo(securityDays - 1)}), 'not_found', 'recent', 1, now(), now())`);
  await db.query(sql.typeAlias('void')`
    insert into signup_screenings (email, email_canonical, via, outcome, created_at) values
      ('old@example.org', 'old@example.org', 'password', 'blocked', ${daysAgo(securityDays + 1)}),
      ('recent@example.org', 'recent@example.org', 'password', 'blocked', ${daysAgo(securityDays - 1)})`);
  await db.query(sql.typeAlias('void')`
    insert into contact_messages (name, email, subject, message, status, created_at) values
      ('Old', 'old@example.org', 'Hi', 'Hello', 'received', ${daysAgo(securityDays + 1)}),
      ('Recent', 'recent@example.org', 'Hi', 'Hello', 'received', ${daysAgo(securityDays - 1)})`);
  await start();
  await enqueue(db, 'maintenance__cleanup', {});
  await until(queued, (count) => count === 0);
  const left = (query: ReturnType<typeof sql.unsafe>) => db.anyFirst(query);
  expect(await left(sql.unsafe`select route from request_stats`)).toEqual(['GET /recent']);
  expect(await left(sql.unsafe`select network from security_counts`)).toEqual(['recent']);
  expect(await left(sql.unsafe`select email from signup_screenings`)).toEqual(['recent@example.org']);
  expect(await left(sql.unsafe`select name from contact_messages`)).toEqual(['Recent']);
});
