// Site statistics from real traffic: requests made through HTTP are counted
// in memory, written by a flush, and read back as counts, error rates and
// percentiles; public reads as views; the site's own tables as content,
// jobs and diagnostics; and the pipeline's health.
import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '../../../core/logger.ts';
import { StatisticsRecorder } from '../../../core/statistics/recorder.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { assignToSite, newSite, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';
import { newJob } from '../../helpers/jobs.ts';

let t: TestApp;
let admin: Caller;
let a: Staffed;
let b: Staffed;
let pageId: string;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  await assignToSite(t, a.site, a.author.user.id);
  await request(t.app).patch(`/sites/${a.site.slug}`).set(admin.auth).send({ visibility: 'public' }).expect(200);
  const page = await request(t.app)
    .post(`/${a.site.slug}/pages/`)
    .set(a.admin.auth)
    .send({ slug: 'home', title: 'Home', status: 'published' })
    .expect(201);
  pageId = page.body.id;
  // Traffic: 20 reads of the site, 5 misses, 3 public reads of the page, and some of another tenant's site.
  for (let i = 0; i < 20; i++) await request(t.app).get(`/sites/${a.site.slug}`).set(a.editor.auth).expect(200);
  for (let i = 0; i < 5; i++)
    await request(t.app).get(`/${a.site.slug}/elements/${crypto.randomUUID()}`).set(a.editor.auth).expect(404);
  for (let i = 0; i < 3; i++) await request(t.app).get(`/public/${a.site.slug}/pages/${pageId}`).expect(200);
  for (let i = 0; i < 7; i++) await request(t.app).get(`/sites/${b.site.slug}`).set(b.admin.auth).expect(200);
  await t.services.statistics.flush(t.services.db);
});
afterAll(async () => {
  await stopTestApp(t);
});

describe('GET /{site}/site-statistics/endpoints', () => {
  it('counts each route by its manifest key, with errors and percentiles', async () => {
    const res = await request(t.app).get(`/${a.site.slug}/site-statistics/endpoints`).set(a.editor.auth).expect(200);
    const byRoute = new Map(res.body.items.map((item: { route: string }) => [item.route, item]));
    expect(byRoute.get('GET /sites/{site_identifier}')).toMatchObject({
      count: 20,
      errors_4xx: 0,
      errors_5xx: 0,
      error_rate: 0,
    });
    expect(byRoute.get('GET /{site_identifier}/elements/{element_id}')).toMatchObject({ count: 5, errors_4xx: 5 });
    expect(byRoute.get('GET /public/{site_identifier}/pages/{page_id}')).toMatchObject({ count: 3 });
    const reads = byRoute.get('GET /sites/{site_identifier}') as {
      p50_ms: number;
      p95_ms: number;
      p99_ms: number;
      avg_ms: number;
    };
    expect(reads.p50_ms).toBeGreaterThan(0);
    expect(reads.p50_ms).toBeLessThanOrEqual(reads.p95_ms);
    expect(reads.p95_ms).toBeLessThanOrEqual(reads.p99_ms);
    // The setup's own two writes (the page, the site made public) count too; another tenant's traffic does not.
    expect(res.body.items.reduce((sum: number, item: { count: number }) => sum + item.count, 0)).toBe(30);
  });

  it('adds up what several processes wrote for the same minute', async () => {
    const other = new StatisticsRecorder(60, createLogger('silent'));
    for (let i = 0; i < 4; i++) other.request(a.site.id, 'GET /sites/{site_identifier}', 200, 3);
    other.request(a.site.id, 'GET /sites/{site_identifier}', 503, 40);
    expect(await other.flush(t.services.db)).toEqual({ requests: 5, views: 0 });
    const res = await request(t.app).get(`/${a.site.slug}/site-statistics/endpoints`).set(a.editor.auth).expect(200);
    const reads = res.body.items.find((item: { route: string }) => item.route === 'GET /sites/{site_identifier}');
    expect(reads).toMatchObject({ count: 25, errors_5xx: 1, error_rate: 0.04 });
    // Rows stay one per minute, site, route and status class.
    const rows = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from request_stats where site_id = ${a.site.id} and route = 'GET /sites/{site_identifier}'
        and status_class = 2`);
    expect(rows).toBeLessThanOrEqual(2);
  });

  it('refuses whom it should', async () => {
    await request(t.app).get(`/${a.site.slug}/site-statistics/endpoints`).expect(401);
    await request(t.app).get(`/${a.site.slug}/site-statistics/endpoints`).set(a.author.auth).expect(403);
    await request(t.app).get(`/${a.site.slug}/site-statistics/endpoints`).set(b.admin.auth).expect(404);
    await request(t.app)
      .get(`/${a.site.slug}/site-statistics/endpoints`)
      .query({ from: 'last week' })
      .set(a.admin.auth)
      .expect(422);
    await request(t.app)
      .get(`/${a.site.slug}/site-statistics/endpoints`)
      .query({ from: '2026-02-01', to: '2026-01-01' })
      .set(a.admin.auth)
      .expect(422);
  });
});

describe('GET /{site}/site-statistics/overview and /monthly', () => {
  it('sums requests, views, content, jobs and credits of the period', async () => {
    await newJob(t, a.site, { status: 'failed' });
    const res = await request(t.app).get(`/${a.site.slug}/site-statistics/overview`).set(a.admin.auth).expect(200);
    expect(res.body).toMatchObject({
      site_id: a.site.id,
      content: { pages: 1, published_pages: 1, elements: 0, media_items: 0, media_bytes: 0 },
      public_views: { total: 3, by_kind: { page: 3 } },
      top_pages: [{ page_id: pageId, title: 'Home', path: '/home', views: 3 }],
      search: { requests: 0 },
      jobs: { total: 1, by_status: { failed: 1 } },
      credits_spent: 0,
    });
    expect(res.body.requests.total).toBeGreaterThanOrEqual(33);
    expect(res.body.requests.errors_4xx).toBe(5);
    expect(res.body.period.time_zone).toBe('UTC');
    // A period before any of it: nothing.
    const empty = await request(t.app)
      .get(`/${a.site.slug}/site-statistics/overview`)
      .query({ from: '2020-01-01', to: '2020-02-01' })
      .set(a.admin.auth)
      .expect(200);
    expect(empty.body).toMatchObject({
      requests: { total: 0, p50_ms: null },
      public_views: { total: 0 },
      jobs: { total: 0 },
    });
  });

  it('gives the last twelve months, this one with the traffic', async () => {
    const res = await request(t.app).get(`/${a.site.slug}/site-statistics/monthly`).set(a.editor.auth).expect(200);
    expect(res.body.months).toHaveLength(12);
    const now = res.body.months.at(-1);
    expect(now.month).toBe(new Date().toISOString().slice(0, 7));
    expect(now.requests).toBeGreaterThanOrEqual(33);
    expect(now.public_views).toBe(3);
    expect(res.body.months[0].requests).toBe(0);
  });
});

describe('GET /{site}/site-statistics/sites', () => {
  it('shows tenant admins their tenant’s sites, global admins every site', async () => {
    const second = await newSite(t, a.tenant);
    const mine = await request(t.app).get(`/${a.site.slug}/site-statistics/sites`).set(a.admin.auth).expect(200);
    const ids = mine.body.sites.map((row: { site_id: string }) => row.site_id);
    expect(ids.sort()).toEqual([a.site.id, second.id].sort());
    expect(mine.body.sites[0]).toMatchObject({ site_id: a.site.id, public_views: 3, content: { published_pages: 1 } });
    const all = await request(t.app).get(`/${a.site.slug}/site-statistics/sites`).set(admin.auth).expect(200);
    expect(all.body.sites.map((row: { site_id: string }) => row.site_id)).toEqual(
      expect.arrayContaining([a.site.id, b.site.id]),
    );
    await request(t.app).get(`/${a.site.slug}/site-statistics/sites`).set(a.editor.auth).expect(403);
  });
});

describe('GET /{site}/site-statistics/diagnostic', () => {
  it('names what may be wrong', async () => {
    const fresh = await staffedTenant(t);
    await t.services.db.query(sql.typeAlias('void')`
      insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status, updated_at)
      values (${fresh.tenant.id}, ${fresh.site.id}, 'image', 'image/png', 'x/y.png', 'processing', now() - interval '1 hour')`);
    const res = await request(t.app)
      .get(`/${fresh.site.slug}/site-statistics/diagnostic`)
      .set(fresh.admin.auth)
      .expect(200);
    const checks = Object.fromEntries(res.body.checks.map((check: { check: string }) => [check.check, check]));
    expect(checks.published_pages).toMatchObject({ status: 'problem', count: 0 });
    expect(checks.media_stuck_processing).toMatchObject({ status: 'problem', count: 1 });
    expect(checks.failed_jobs_24h).toMatchObject({ status: 'ok', count: 0 });
    expect(checks.search_index.status).toBe('unavailable');
    expect(checks.statistics_flush.status).toBe('ok');
    const healthy = await request(t.app)
      .get(`/${a.site.slug}/site-statistics/diagnostic`)
      .set(a.admin.auth)
      .expect(200);
    const ours = Object.fromEntries(healthy.body.checks.map((check: { check: string }) => [check.check, check]));
    expect(ours.published_pages.status).toBe('ok');
    expect(ours.failed_jobs_24h).toMatchObject({ status: 'warning', count: 1 });
  });
});

describe('GET /{site}/site-statistics/health', () => {
  it('says when the counters were last written, without a token', async () => {
    const res = await request(t.app).get(`/${a.site.slug}/site-statistics/health`).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ status: 'ok', flush_interval_seconds: 60 });
    expect(res.body.lag_seconds).toBeLessThan(60);
    expect(res.body.processes.map((row: { process: string }) => row.process)).toContain(t.services.statistics.process);
    // This request and the ones before it since the flush are still in memory.
    expect(res.body.pending.requests).toBeGreaterThan(0);
    await request(t.app).get(`/no-such-site-${Date.now()}/site-statistics/health`).expect(404);
  });
});
