// Admin monitoring through HTTP: the system's health (database, migrations,
// workers, queue, process) with and without a live worker, and performance
// from counted requests and finished jobs.
import request from 'supertest';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import type { Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';
import { newJob, startTestWorker } from '../../helpers/jobs.ts';

let t: TestApp;
let admin: Caller;
let staffed: Staffed;
beforeAll(async () => {
  // Public answers expire after a second, so the cleanup has something to remove.
  t = await startTestApp({ env: { PUBLIC_CACHE_SECONDS: '1', RATE_LIMIT_CONTACT_PER_IP: '2' } });
  admin = await globalAdmin(t);
  staffed = await staffedTenant(t);
});
afterAll(async () => {
  await stopTestApp(t);
});

describe('GET /admin/monitoring/system-health', () => {
  it('reports the database, migrations, queue and process, degraded without a live worker', async () => {
    await newJob(t, staffed.site, { kind: 'speech', status: 'queued' });
    const res = await request(t.app).get('/admin/monitoring/system-health').set(admin.auth).expect(200);
    expect(res.body).toMatchObject({
      status: 'degraded',
      problems: ['no live worker process: jobs are not running'],
      migrations: { pending: [] },
      storage: { driver: 'local' },
      process: { pid: process.pid },
    });
    expect(res.body.migrations.applied).toBe(res.body.migrations.expected);
    expect(res.body.database.latency_ms).toBeGreaterThan(0);
    expect(res.body.database.connections.max).toBeGreaterThan(0);
    expect(res.body.database.connections.used).toBeGreaterThanOrEqual(1);
    expect(res.body.queue).toEqual([expect.objectContaining({ kind: 'speech', queued: 1 })]);
    expect(res.body.process.memory.rss_bytes).toBeGreaterThan(0);

    const worker = await startTestWorker(t);
    try {
      const live = await request(t.app).get('/admin/monitoring/system-health').set(admin.auth).expect(200);
      expect(live.body.workers.some((row: { alive: boolean }) => row.alive)).toBe(true);
      expect(live.body.problems).not.toContain('no live worker process: jobs are not running');
    } finally {
      await worker.stop();
    }
    await request(t.app).get('/admin/monitoring/system-health').set(staffed.admin.auth).expect(403);
    await request(t.app).get('/admin/monitoring/system-health').expect(401);
  });
});

describe('GET /admin/monitoring/performance-metrics', () => {
  it('gives latency per route across sites and time per job kind', async () => {
    for (let i = 0; i < 12; i++)
      await request(t.app).get(`/sites/${staffed.site.slug}`).set(staffed.admin.auth).expect(200);
    await request(t.app).get('/auth/currentuser').set(admin.auth).expect(200);
    await t.services.statistics.flush(t.services.db);
    await t.services.db.query(sql.typeAlias('void')`
      insert into jobs (tenant_id, site_id, kind, status, input, created_at, started_at, finished_at)
      select ${staffed.tenant.id}, ${staffed.site.id}, 'image', 'succeeded', '{}', now() - interval '10 seconds',
        now() - interval '8 seconds', now() - make_interval(secs => n)
      from generate_series(1, 4) as n`);
    const res = await request(t.app).get('/admin/monitoring/performance-metrics').set(admin.auth).expect(200);
    const reads = res.body.routes.find((row: { route: string }) => row.route === 'GET /sites/{site_identifier}');
    expect(reads).toMatchObject({ count: 12, errors_5xx: 0 });
    // Requests without a site are counted too.
    expect(res.body.routes.map((row: { route: string }) => row.route)).toContain('GET /auth/currentuser');
    expect(res.body.slowest_routes.map((row: { route: string }) => row.route)).toContain(
      'GET /sites/{site_identifier}',
    );
    const image = res.body.job_kinds.find((row: { kind: string }) => row.kind === 'image');
    expect(image).toMatchObject({ finished: 4, failed: 0, wait_p50_s: 2 });
    expect(image.run_p50_s).toBeCloseTo(5.5, 0);
    await request(t.app)
      .get('/admin/monitoring/performance-metrics')
      .query({ window_minutes: 0 })
      .set(admin.auth)
      .expect(422);
    await request(t.app).get('/admin/monitoring/performance-metrics').set(staffed.editor.auth).expect(403);
  });
});

describe('GET /admin/monitoring/cache-statistics and POST /admin/monitoring/cache-cleanup', () => {
  it('count hits and misses per cache, and drop what expired', async () => {
    await request(t.app)
      .patch(`/sites/${staffed.site.slug}`)
      .set(admin.auth)
      .send({ visibility: 'public' })
      .expect(200);
    const page = await request(t.app)
      .post(`/${staffed.site.slug}/pages/`)
      .set(staffed.admin.auth)
      .send({ slug: 'cached', title: 'Cached', status: 'published' })
      .expect(201);
    await request(t.app).get(`/public/${staffed.site.slug}/pages/${page.body.id}`).expect(200);
    await request(t.app).get(`/public/${staffed.site.slug}/pages/${page.body.id}`).expect(200);
    const stats = await request(t.app).get('/admin/monitoring/cache-statistics').set(admin.auth).expect(200);
    const caches = Object.fromEntries(stats.body.caches.map((cache: { name: string }) => [cache.name, cache]));
    expect(caches.public).toMatchObject({ store: 'memory', entries: 1, evictions: 0 });
    expect(caches.public.hits).toBeGreaterThanOrEqual(1);
    expect(caches.public.misses).toBeGreaterThanOrEqual(1);
    expect(caches.public.hit_ratio).toBeGreaterThan(0);
    expect(caches['access:sessions'].entries).toBeGreaterThanOrEqual(1);
    expect(caches['access:sessions'].invalidations).toBeNull();

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const cleaned = await request(t.app).post('/admin/monitoring/cache-cleanup').set(admin.auth).expect(200);
    expect(cleaned.body.removed.find((row: { name: string }) => row.name === 'public')).toEqual({
      name: 'public',
      removed: 1,
    });
    expect(cleaned.body.total).toBeGreaterThanOrEqual(1);
    const after = await request(t.app).get('/admin/monitoring/cache-statistics').set(admin.auth).expect(200);
    expect(after.body.caches.find((cache: { name: string }) => cache.name === 'public').entries).toBe(0);
    await request(t.app).post('/admin/monitoring/cache-cleanup').set(staffed.admin.auth).expect(403);
    await request(t.app).get('/admin/monitoring/cache-statistics').expect(401);
  });
});

describe('GET /admin/monitoring/rate-limit-stats', () => {
  it('shows each limiter, what it refused, and the keys over their limit', async () => {
    const message = { name: 'Eve', email: 'eve@example.org', subject: 'Hi', message: 'Hello there.' };
    await request(t.app).post('/api/contact').send(message).expect(202);
    await request(t.app).post('/api/contact').send(message).expect(202);
    await request(t.app).post('/api/contact').send(message).expect(429);
    const res = await request(t.app).get('/admin/monitoring/rate-limit-stats').set(admin.auth).expect(200);
    const contact = res.body.limiters.find((limiter: { name: string }) => limiter.name === 'contact');
    expect(contact).toMatchObject({
      limit: 2,
      window_seconds: 3600,
      refused_since_start: 1,
      tracked_keys: 1,
      blocked_keys: 1,
    });
    expect(res.body.limiters.map((limiter: { name: string }) => limiter.name).sort()).toEqual([
      'account',
      'contact',
      'ip',
      'per-ip',
      'per-tenant-jobs',
      'per-token',
      'webhook-signatures',
    ]);
    expect(res.body.blocked).toEqual([
      expect.objectContaining({ limiter: 'contact', subject: expect.stringContaining('127.0.0.1'), points: 3 }),
    ]);
    // The sign-ins of this file count too (ip limiter), so the contact key is among the busiest, not necessarily first.
    expect(res.body.top_offenders).toEqual(
      expect.arrayContaining([expect.objectContaining({ limiter: 'contact', points: 3 })]),
    );
    await request(t.app).get('/admin/monitoring/rate-limit-stats').set(staffed.admin.auth).expect(403);
  });
});
