// A job is enqueued on the caller's connection, so it lives and dies with the
// caller's transaction.
import pg from 'pg';
import { z } from 'zod';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const job = z.object({ task_identifier: z.string(), payload: z.unknown(), key: z.string().nullable() });
const jobs = () =>
  t.services.db.any(sql.type(job)`
    select t.identifier as task_identifier, j.payload, j.key
    from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    order by j.id`);

beforeEach(async () => {
  await t.services.db.query(sql.unsafe`delete from graphile_worker._private_jobs`);
});

it('commits the job with the transaction', async () => {
  await t.services.db.transaction(async (tx) => {
    await tx.query(sql.unsafe`insert into tenants (name, slug) values ('Acme', 'acme')`);
    await enqueue(tx, 'system__heartbeat', { name: 'committed' });
  });
  expect(await jobs()).toEqual([{ task_identifier: 'system__heartbeat', payload: { name: 'committed' }, key: null }]);
});

it('leaves no job when the transaction rolls back', async () => {
  await expect(
    t.services.db.transaction(async (tx) => {
      await enqueue(tx, 'system__heartbeat', { name: 'rolled-back' });
      // The request fails after "enqueueing": a duplicate slug, say.
      await tx.query(sql.unsafe`insert into tenants (name, slug) values ('Again', 'acme')`);
    }),
  ).rejects.toThrow();
  expect(await jobs()).toEqual([]);
});

it('replaces a pending job with the same key instead of adding one', async () => {
  await enqueue(t.services.db, 'system__heartbeat', { name: 'first' }, { jobKey: 'beat' });
  await enqueue(t.services.db, 'system__heartbeat', { name: 'second' }, { jobKey: 'beat' });
  expect(await jobs()).toEqual([{ task_identifier: 'system__heartbeat', payload: { name: 'second' }, key: 'beat' }]);
});

it('queues a new key in the cheaper mode as any entry, and tells listening workers on commit', async () => {
  const listener = new pg.Client({ connectionString: t.database.url });
  await listener.connect();
  try {
    const told: string[] = [];
    listener.on('notification', (message) => told.push(message.channel));
    await listener.query('listen "jobs:insert"');
    await t.services.db.transaction(async (tx) => {
      await enqueue(
        tx,
        'system__heartbeat',
        { name: 'fresh' },
        { jobKey: 'fresh-key', jobKeyMode: 'new', flags: ['tenant:x'], maxAttempts: 3 },
      );
      // Not before the commit: a worker told now would look and find nothing.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(told).toEqual([]);
    });
    const entry = await t.services.db.one(
      sql.type(
        z.object({ key: z.string(), flags: z.unknown(), max_attempts: z.number(), due: z.boolean() }),
      )`select key, flags, max_attempts, run_at <= now() as due from graphile_worker._private_jobs`,
    );
    expect(entry).toEqual({ key: 'fresh-key', flags: { 'tenant:x': true }, max_attempts: 3, due: true });
    for (let i = 0; i < 100 && told.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(told).toEqual(['jobs:insert']);
  } finally {
    await listener.end();
  }
});
