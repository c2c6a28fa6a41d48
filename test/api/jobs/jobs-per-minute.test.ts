// GET /admin/jobs/per-minute, the admin console's charts: per minute and kind,
// the jobs that finished (by outcome) with their wait and run percentiles, and
// the queue's depth from the jobs' own submit and start times; only the hours
// asked for. 401 without a token, 403 for a tenant admin, 422 for bad hours.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { timestamp } from '../../../core/timestamp.ts';
import type { TestApp } from '../../helpers/app.ts';
import type { Caller } from '../../helpers/factories.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { jobsSuite, newJob } from '../../helpers/jobs.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(async () => {
  ({ t, a, admin } = suite);
});

/** A job whose times are set minutes before the database's now (null: not reached). */
async function jobAt(
  kind: string,
  status: 'succeeded' | 'failed' | 'queued',
  minutesAgo: { created: number; started: number | null; finished: number | null },
) {
  const job = await newJob(t, a.site, { kind, status });
  const ago = (minutes: number | null) =>
    minutes === null ? null : sql.fragment`now() - make_interval(secs => ${minutes * 60})`;
  return t.services.db.one(sql.type(z.object({ id: z.string(), finished_minute: timestamp.nullable() }))`
    update jobs set created_at = ${ago(minutesAgo.created)}, started_at = ${ago(minutesAgo.started)},
                    finished_at = ${ago(minutesAgo.finished)}
    where id = ${job.id}
    returning id, date_trunc('minute', finished_at) as finished_minute`);
}

describe('GET /admin/jobs/per-minute', () => {
  it('answers each minute’s finished and failed jobs per kind with their times, and the queue’s depth', async () => {
    const done = await jobAt('test_noop', 'succeeded', { created: 10, started: 9, finished: 8 });
    const failed = await jobAt('test_fail', 'failed', { created: 5, started: 4.5, finished: 4 });
    await jobAt('test_sleep', 'queued', { created: 3, started: null, finished: null });
    // Five hours ago: outside the hour asked for.
    await jobAt('test_flaky', 'succeeded', { created: 300, started: 300, finished: 299 });

    const { body } = await request(t.app).get('/admin/jobs/per-minute?hours=1').set(admin.auth).expect(200);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(59 * 60_000);
    type Item = { minute: string; kind: string } & Record<string, number | null>;
    const items = body.items as Item[];
    expect(items.filter((item) => item.kind === 'test_flaky')).toEqual([]);

    const finished = items.filter((item) => item.succeeded || item.failed);
    expect(finished).toEqual([
      {
        minute: done.finished_minute,
        kind: 'test_noop',
        succeeded: 1,
        failed: 0,
        canceled: 0,
        queued: 0,
        wait_ms_p50: 60_000,
        wait_ms_p95: 60_000,
        run_ms_p50: 60_000,
        run_ms_p95: 60_000,
      },
      {
        minute: failed.finished_minute,
        kind: 'test_fail',
        succeeded: 0,
        failed: 1,
        canceled: 0,
        queued: 0,
        wait_ms_p50: 30_000,
        wait_ms_p95: 30_000,
        run_ms_p50: 30_000,
        run_ms_p95: 30_000,
      },
    ]);
    // The noop job waited in the minute it was submitted; the queued one has waited every minute since its submit.
    const queuedNoop = items.filter((item) => item.kind === 'test_noop' && item.queued);
    expect(queuedNoop.map((item) => item.queued)).toEqual([1]);
    const waiting = items.filter((item) => item.kind === 'test_sleep');
    expect(waiting.every((item) => item.queued === 1 && item.succeeded === 0)).toBe(true);
    expect(waiting.at(-1)!.minute).toBe(body.to);
    expect(waiting.length).toBeGreaterThanOrEqual(3);
    expect(items.map((item) => item.minute)).toEqual([...items.map((item) => item.minute)].sort());
  });

  it('asks for a token, a global admin and whole hours from 1 to 24', async () => {
    await request(t.app)
      .get('/admin/jobs/per-minute')
      .expect(401)
      .expect('WWW-Authenticate', /Bearer/);
    await request(t.app).get('/admin/jobs/per-minute').set(a.admin.auth).expect(403);
    for (const hours of ['0', '25', 'two', '1.5']) {
      const answer = await request(t.app).get(`/admin/jobs/per-minute?hours=${hours}`).set(admin.auth).expect(422);
      expect(answer.body.errors[0].path).toContain('hours');
    }
    const { body } = await request(t.app).get('/admin/jobs/per-minute').set(admin.auth).expect(200);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe((3 * 60 - 1) * 60_000);
  });
});
