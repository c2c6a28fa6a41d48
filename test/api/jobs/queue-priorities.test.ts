// The kinds' priorities through the API, for global admins: the list, a
// setting, the priority carried by the queue entries of jobs submitted
// after it, moved onto those queued before it, and read again when a job is
// put back on the queue (a retry); 401/403/404/422. Workers running the
// higher-priority kind first, and fairness between tenants kept:
// test/worker/priorities.test.ts.
import request from 'supertest';
import { z } from 'zod';
import type { Actor } from '../../../core/actor.ts';
import { schedule } from '../../../core/jobs/queue.ts';
import { sql } from '../../../db/pool.ts';
import type { Caller } from '../../helpers/factories.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, newJob, submitAs } from '../../helpers/jobs.ts';
import type { TestApp } from '../../helpers/app.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(async () => {
  ({ t, a, admin } = suite);
  await giveCredits(t, a.site, 1000, a.editor.user.id);
});

const editor = (): Actor => ({ kind: 'user', userId: a.editor.user.id, sessionId: 'test', isGlobalAdmin: false });
const submit = (kind: string) => submitAs(t, editor(), a.site, { kind, input: {}, estimatedUnits: 1 });
const entryPriority = (jobId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ priority: z.number() }))`
    select priority from graphile_worker.jobs where key = ${`job:${jobId}`}`);
const setPriority = (kind: string, priority: number) =>
  request(t.app).put(`/admin/queue/kinds/${kind}`).set(admin.auth).send({ priority });

it('lists every kind at priority 0 until one is set', async () => {
  const list = await request(t.app).get('/admin/queue/kinds').set(admin.auth).expect(200);
  expect(list.body.items).toContainEqual({ kind: 'speech', priority: 0, updated_by: null, updated_at: null });
  expect(list.body.items).toContainEqual(expect.objectContaining({ kind: 'video', priority: 0 }));
  expect(list.body.items.every((item: { priority: number }) => item.priority === 0)).toBe(true);
});

it('sets a kind’s priority: for its queued jobs, its new ones, and a job put back on the queue', async () => {
  const before = await submit('test_noop');
  const other = await submit('test_sleep');
  expect(await entryPriority(before.id)).toBe(0);

  const set = await setPriority('test_noop', -20);
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ kind: 'test_noop', priority: -20, updated_by: admin.user.id });
  expect(typeof set.body.updated_at).toBe('string');
  // Queued before: moved. Another kind's: not.
  expect(await entryPriority(before.id)).toBe(-20);
  expect(await entryPriority(other.id)).toBe(0);
  const after = await submit('test_noop');
  expect(await entryPriority(after.id)).toBe(-20);

  // A run put back on the queue (a retry, a requeue) reads the priority of the moment.
  const job = await newJob(t, a.site, { kind: 'test_noop' });
  await schedule(t.services.db, { ...job, max_attempts: 3 });
  expect(await entryPriority(job.id)).toBe(-20);
  await setPriority('test_noop', 30).then((response) => expect(response.status).toBe(200));
  await schedule(t.services.db, { ...job, max_attempts: 3 });
  expect(await entryPriority(job.id)).toBe(30);

  const list = await request(t.app).get('/admin/queue/kinds').set(admin.auth).expect(200);
  expect(list.body.items).toContainEqual(
    expect.objectContaining({ kind: 'test_noop', priority: 30, updated_by: admin.user.id }),
  );
  await setPriority('test_noop', 0).then((response) => expect(response.status).toBe(200));
  for (const id of [before.id, other.id, after.id, job.id])
    await t.services.db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${id}`})`);
});

it('is for global admins only', async () => {
  await request(t.app).get('/admin/queue/kinds').expect(401);
  await request(t.app).put('/admin/queue/kinds/speech').send({ priority: 1 }).expect(401);
  await request(t.app).get('/admin/queue/kinds').set(a.admin.auth).expect(403);
  await request(t.app).put('/admin/queue/kinds/speech').set(a.admin.auth).send({ priority: 1 }).expect(403);
  await request(t.app).put('/admin/queue/kinds/speech').set(a.editor.auth).send({ priority: 1 }).expect(403);
  const list = await request(t.app).get('/admin/queue/kinds').set(admin.auth).expect(200);
  expect(list.body.items).toContainEqual(expect.objectContaining({ kind: 'speech', priority: 0 }));
});

it('answers 404 for a kind it does not know', async () => {
  await setPriority('no_such_kind', 1).then((response) => expect(response.status).toBe(404));
  const list = await request(t.app).get('/admin/queue/kinds').set(admin.auth).expect(200);
  expect(list.body.items.map((item: { kind: string }) => item.kind)).not.toContain('no_such_kind');
});

it('answers 422 for a bad body or a malformed kind', async () => {
  for (const body of [
    {},
    { priority: 101 },
    { priority: -101 },
    { priority: 1.5 },
    { priority: '1' },
    { priority: 1, x: 1 },
  ]) {
    const response = await request(t.app).put('/admin/queue/kinds/speech').set(admin.auth).send(body);
    expect(response.status).toBe(422);
  }
  await setPriority('Not-A-Kind', 1).then((response) => expect(response.status).toBe(422));
});
