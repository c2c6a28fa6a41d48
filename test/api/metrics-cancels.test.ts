// Jobs canceled through the API before any worker ran them are counted in
// the API process's cap_jobs_finished_total{outcome="canceled"}: a queued or
// waiting job canceled by its owner, by an admin, in bulk. A job a worker is
// running is not counted there: its worker counts it when it lets go of the
// run (test/api/metrics.test.ts), so it is counted once.
import request from 'supertest';
import { sql } from '../../db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { unique, type Staffed } from '../helpers/identity.ts';
import type { Caller } from '../helpers/factories.ts';
import { jobsSuite, newJob } from '../helpers/jobs.ts';
import { parsePrometheusText, sampleOf } from '../helpers/prometheus-text.ts';

const metricsToken = 'metrics-scraper-token-0123456789';
const suite = jobsSuite({ METRICS_TOKEN: metricsToken });
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(() => {
  ({ t, a, admin } = suite);
});

/** The API's count of canceled jobs of this kind, as a scraper reads it. */
async function canceledCount(kind: string): Promise<number> {
  const res = await request(t.app)
    .get('/metrics')
    .set({ Authorization: `Bearer ${metricsToken}` })
    .expect(200);
  return sampleOf(parsePrometheusText(res.text), 'cap_jobs_finished_total', { kind, outcome: 'canceled' })?.value ?? 0;
}

it('counts a queued and a waiting job canceled by their owner, and one canceled by an admin', async () => {
  const kind = `test_cancel_${unique()}`;
  expect(await canceledCount(kind)).toBe(0);
  const queued = await newJob(t, a.site, { kind, userId: a.editor.user.id });
  const waiting = await newJob(t, a.site, { kind, userId: a.editor.user.id, status: 'waiting' });
  for (const job of [queued, waiting])
    await request(t.app).post(`/${a.site.slug}/jobs/${job.id}/cancel`).set(a.editor.auth).expect(200);
  expect(await canceledCount(kind)).toBe(2);
  const byAdmin = await newJob(t, a.site, { kind });
  await request(t.app).post(`/admin/jobs/${byAdmin.id}/cancel`).set(admin.auth).expect(200);
  expect(await canceledCount(kind)).toBe(3);
  // A cancel refused (already canceled) counts nothing.
  await request(t.app).post(`/${a.site.slug}/jobs/${queued.id}/cancel`).set(a.editor.auth).expect(409);
  expect(await canceledCount(kind)).toBe(3);
});

it('counts the jobs a bulk cancel takes', async () => {
  const kind = `test_cancel_${unique()}`;
  for (let i = 0; i < 3; i++) await newJob(t, a.site, { kind });
  const res = await request(t.app).post('/admin/jobs/bulk-cancel').set(admin.auth).send({ kind }).expect(200);
  expect(res.body.done).toBe(3);
  expect(await canceledCount(kind)).toBe(3);
});

it('leaves a job a worker is running to be counted by that worker', async () => {
  const kind = `test_cancel_${unique()}`;
  const running = await newJob(t, a.site, { kind, userId: a.editor.user.id, status: 'running' });
  await t.services.db.query(sql.typeAlias('void')`
    update jobs set locked_by = 'a-worker', started_at = now() where id = ${running.id}`);
  await request(t.app).post(`/${a.site.slug}/jobs/${running.id}/cancel`).set(a.editor.auth).expect(200);
  expect(await canceledCount(kind)).toBe(0);
});
