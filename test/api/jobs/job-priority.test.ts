// A job's own priority, asked for in its request (`priority` beside
// `webhook`): kept on the job and shown in its reads, added to its kind's
// priority in its queue entry (and still when the kind's changes, or the job
// is put back on the queue); a later turn for anyone, an earlier one for the
// tenant's administrators and service accounts with jobs:priority (403
// otherwise); 422 out of range. Workers taking the earlier job first, within
// the tenant's share: test/worker/job-priority.test.ts.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { z } from 'zod';
import { schedule } from '../../../core/jobs/queue.ts';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { serviceAccount, type Caller } from '../../helpers/factories.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, readJob } from '../../helpers/jobs.ts';
import { makePdf } from '../../helpers/pdf.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(async () => {
  ({ t, a, admin } = suite);
  for (const payer of [a.editor, a.admin, admin]) await giveCredits(t, a.site, 1000, payer.user.id);
  await giveCredits(t, a.site, 1000);
});

const entryPriority = (jobId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ priority: z.number() }))`
    select priority from graphile_worker.jobs where key = ${`job:${jobId}`}`);

const speech = (auth: { Authorization: string }, body: Record<string, unknown>) =>
  request(t.app)
    .post(`/${a.site.slug}/media/tts`)
    .set(auth)
    .send({ text: 'Ahead of the queue.', ...body });

async function submitted(auth: { Authorization: string }, body: Record<string, unknown>) {
  const res = await speech(auth, body);
  expect(res.status).toBe(202);
  return res.body as { id: string; priority: number };
}

it('keeps a later turn any member asks for, shows it in the job’s reads and puts it on the queue entry', async () => {
  const job = await submitted(a.editor.auth, { priority: 7 });
  expect(job.priority).toBe(7);
  expect(await entryPriority(job.id)).toBe(7);
  const read = await request(t.app).get(`/${a.site.slug}/jobs/${job.id}`).set(a.editor.auth).expect(200);
  expect(read.body.priority).toBe(7);
  const listed = await request(t.app).get(`/${a.site.slug}/jobs/`).set(a.editor.auth).expect(200);
  expect(listed.body.items.find((item: { id: string }) => item.id === job.id)).toMatchObject({ priority: 7 });
  const plain = await submitted(a.editor.auth, {});
  expect(plain.priority).toBe(0);
  expect(await entryPriority(plain.id)).toBe(0);
});

it('lets a tenant administrator and a global admin ask for an earlier turn', async () => {
  const ofAdmin = await submitted(a.admin.auth, { priority: -10 });
  expect(ofAdmin.priority).toBe(-10);
  expect(await entryPriority(ofAdmin.id)).toBe(-10);
  const ofGlobal = await submitted(admin.auth, { priority: -4 });
  expect(await entryPriority(ofGlobal.id)).toBe(-4);
});

it('is 403 for an earlier turn asked by an editor or a service account without jobs:priority', async () => {
  const before = await t.services.db.oneFirst(
    sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where site_id = ${a.site.id}`,
  );
  const res = await speech(a.editor.auth, { priority: -1 }).expect(403);
  expect(res.body).toMatchObject({ status: 403, detail: expect.stringMatching(/administrator/) });
  const bot = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:write', 'media:write'], a.admin);
  const refused = await speech(bot.auth, { priority: -1 }).expect(403);
  expect(refused.body.detail).toMatch(/jobs:priority/);
  // Nothing was made by the refused requests.
  const after = await t.services.db.oneFirst(
    sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where site_id = ${a.site.id}`,
  );
  expect(after).toBe(before);
  // A later turn needs no more than submitting does.
  await submitted(bot.auth, { priority: 3 });
});

it('lets a service account with jobs:priority ask for an earlier turn', async () => {
  const bot = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:write', 'media:write', 'jobs:priority'], a.admin);
  const job = await submitted(bot.auth, { priority: -6 });
  expect(job.priority).toBe(-6);
  expect(await entryPriority(job.id)).toBe(-6);
});

it.each([
  ['above 10', 11],
  ['below -10', -11],
  ['not a whole number', 1.5],
  ['a word', 'high'],
])('is 422 for a priority %s', async (_case, priority) => {
  const res = await speech(a.admin.auth, { priority }).expect(422);
  expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'body.priority' })]));
});

it('adds the kind’s priority, also when the kind’s changes and when the job is put back on the queue', async () => {
  const setKind = (priority: number) =>
    request(t.app).put('/admin/queue/kinds/speech').set(admin.auth).send({ priority }).expect(200);
  await setKind(20);
  try {
    const urgent = await submitted(a.admin.auth, { priority: -5 });
    const later = await submitted(a.editor.auth, { priority: 5 });
    expect(await entryPriority(urgent.id)).toBe(15);
    expect(await entryPriority(later.id)).toBe(25);
    await setKind(-30);
    expect(await entryPriority(urgent.id)).toBe(-35);
    expect(await entryPriority(later.id)).toBe(-25);
    // A retry or requeue reads the job's own priority from its row.
    const row = await readJob(t, urgent.id);
    await schedule(t.services.db, { id: row.id, tenant_id: row.tenant_id, kind: row.kind, max_attempts: 3 });
    expect(await entryPriority(urgent.id)).toBe(-35);
  } finally {
    await setKind(0);
  }
});

it('is taken by job routes beyond the media ones (a site’s reindex), not yet by an agent run’s', async () => {
  const reindex = await request(t.app)
    .post(`/search/admin/sites/${a.site.slug}/reindex`)
    .set(a.admin.auth)
    .send({ priority: -2 })
    .expect(202);
  expect(reindex.body.priority).toBe(-2);
  expect(await entryPriority(reindex.body.id)).toBe(-2);
  const run = await request(t.app)
    .post(`/${a.site.slug}/agents/${randomUUID()}/runs`)
    .set(a.admin.auth)
    .send({ message: 'Hello', priority: -2 })
    .expect(422);
  expect(run.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'body' })]));
});

it('is a form field of a multipart upload (a post from a PDF), with the same rules', async () => {
  const upload = (auth: { Authorization: string }, priority: string) =>
    request(t.app)
      .post(`/${a.site.slug}/posts/from-pdf`)
      .set(auth)
      .attach('file', makePdf([[{ text: 'A line of text.' }]]), 'a.pdf')
      .field('priority', priority);
  const urgent = await upload(a.admin.auth, '-3').expect(202);
  expect(urgent.body.priority).toBe(-3);
  expect(await entryPriority(urgent.body.id)).toBe(-3);
  await upload(a.editor.auth, '-3').expect(403);
  const later = await upload(a.editor.auth, '4').expect(202);
  expect(later.body.priority).toBe(4);
  for (const bad of ['11', 'soon', '1.5']) {
    const refused = await upload(a.editor.auth, bad).expect(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: 'body.priority' })]);
  }
});
