// GET /metrics: Prometheus text for a scraper holding METRICS_TOKEN or a
// global admin; 401 for a missing or wrong token, 403 for anyone else. The
// queue gauges are read from the database at each scrape; the process's own
// metrics (runtime under prom-client's standard names, HTTP requests, jobs
// settled) come after them. A worker serves its own on WORKER_METRICS_PORT.
// Every exposition is read by a strict reader of the text format.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import type { Actor } from '../../core/actor.ts';
import { serveWorkerMetrics } from '../../worker/metrics-server.ts';
import { createLogger } from '../../core/logger.ts';
import type { TestApp } from '../helpers/app.ts';
import { startWorkerProcess, stopProcess } from '../helpers/processes.ts';
import { serviceAccount, type Caller } from '../helpers/factories.ts';
import type { Auth, Staffed } from '../helpers/identity.ts';
import { giveCredits, jobsSuite, newJob, startTestWorker, submitAs, waitForJob } from '../helpers/jobs.ts';
import { parsePrometheusText, sampleOf, type Exposition } from '../helpers/prometheus-text.ts';

const metricsToken = 'metrics-scraper-token-0123456789';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let admin: Caller;
let bot: Auth;

const suite = jobsSuite({ METRICS_TOKEN: metricsToken });

beforeAll(async () => {
  ({ t, a, b, admin } = suite);
  bot = (await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read', 'jobs:write'], a.admin)).auth;
  await giveCredits(t, a.site, 1000, a.editor.user.id);
});

const scraper = { Authorization: `Bearer ${metricsToken}` };

// The gauges read from the database: what an autoscaler and a dashboard of the queue read.
const gaugeNames = ['cap_jobs_queued', 'cap_jobs_queued_oldest_age_seconds', 'cap_jobs', 'cap_workers_alive'];
// The process's own, counted as things happen (core/metrics/process.ts).
const processNames = {
  cap_jobs_finished_total: 'counter',
  cap_job_failures_total: 'counter',
  cap_job_wait_seconds: 'histogram',
  cap_job_run_seconds: 'histogram',
  cap_http_requests_total: 'counter',
  cap_http_request_duration_seconds: 'histogram',
};
// A few of prom-client's default metrics, under the names stock Node.js dashboards query.
const standardNames = ['process_cpu_user_seconds_total', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes'];

const sample = (exposition: Exposition, name: string, labels: Record<string, string> = {}) =>
  sampleOf(exposition, name, labels);
/** A sample's value, 0 when it is not there yet (a counter not yet moved). */
const valueOf = (exposition: Exposition, name: string, labels: Record<string, string>) =>
  sample(exposition, name, labels)?.value ?? 0;

async function scrape(auth: Auth = scraper) {
  const res = await request(t.app).get('/metrics').set(auth).expect(200);
  return { res, samples: parsePrometheusText(res.text) };
}

/**
 * Scrapes until `done` holds of the samples (2 s at most): a request is counted when its response
 * closes, and a job when its worker has committed it, both a moment after the client has seen it.
 */
async function scrapeUntil(done: (samples: Exposition) => boolean) {
  let scraped = await scrape();
  for (let tries = 0; !done(scraped.samples) && tries < 20; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    scraped = await scrape();
  }
  return scraped;
}

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});
const submit = (kind: string, input: Record<string, unknown>) =>
  submitAs(t, actorOf(a.editor), a.site, { kind, input, estimatedUnits: 2 });

/** A kind of job no other test makes. */
const uniqueKind = (prefix: string) => `${prefix}_${randomBytes(4).toString('hex')}`;

describe('GET /metrics', () => {
  it('answers the scraper holding METRICS_TOKEN with Prometheus text: the queue gauges, the process’s own, standard names', async () => {
    const { res, samples } = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of gaugeNames) expect(samples.families.get(name)?.type).toBe('gauge');
    for (const [name, type] of Object.entries(processNames)) expect(samples.families.get(name)?.type).toBe(type);
    for (const name of standardNames) expect(sample(samples, name)).toBeDefined();
    // Every name is either prom-client's standard one or under the platform's one prefix, never both.
    for (const name of samples.families.keys()) expect(name).toMatch(/^(process_|nodejs_|cap_)/);
    expect(res.text).not.toMatch(/cap_process_|cap_nodejs_/);
  });

  it('answers a global admin’s access token too', async () => {
    const { res, samples } = await scrape(admin.auth);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(sample(samples, 'cap_workers_alive')).toBeDefined();
  });

  it('is 401 without a token or with a wrong one', async () => {
    const none = await request(t.app).get('/metrics').expect(401);
    expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
    for (const header of [
      `Bearer ${metricsToken}x`,
      `Bearer ${metricsToken.slice(0, -1)}`,
      'Bearer not-a-token',
      `Basic ${metricsToken}`,
      metricsToken,
      'Bearer ',
    ]) {
      await request(t.app).get('/metrics').set('Authorization', header).expect(401);
    }
  });

  it('is 403 for signed-in users who are not global admins and for service accounts', async () => {
    for (const auth of [a.admin.auth, a.editor.auth, a.author.auth, b.admin.auth, bot]) {
      const res = await request(t.app).get('/metrics').set(auth).expect(403);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('counts queued jobs per kind, with the age of the oldest, and jobs per kind and state', async () => {
    const kind = uniqueKind('queued');
    await newJob(t, a.site, { kind });
    await newJob(t, b.site, { kind });
    await newJob(t, a.site, { kind, status: 'succeeded' });
    const { samples } = await scrape();
    expect(sample(samples, 'cap_jobs_queued', { kind })?.value).toBe(2);
    expect(sample(samples, 'cap_jobs_queued_oldest_age_seconds', { kind })?.value).toBeGreaterThanOrEqual(0);
    expect(sample(samples, 'cap_jobs', { kind, status: 'queued' })?.value).toBe(2);
    expect(sample(samples, 'cap_jobs', { kind, status: 'succeeded' })?.value).toBe(1);
    expect(sample(samples, 'cap_jobs', { kind, status: 'failed' })).toBeUndefined();

    // Read afresh at each scrape: one more queued, and a kind with none queued is gone.
    await newJob(t, a.site, { kind });
    const other = uniqueKind('done');
    await newJob(t, a.site, { kind: other, status: 'succeeded' });
    const again = (await scrape()).samples;
    expect(sample(again, 'cap_jobs_queued', { kind })?.value).toBe(3);
    expect(sample(again, 'cap_jobs_queued', { kind: other })).toBeUndefined();
    expect(sample(again, 'cap_jobs', { kind: other, status: 'succeeded' })?.value).toBe(1);
  });

  it('counts the jobs a worker settles by kind and outcome, with their wait and run times; and live workers', async () => {
    const before = (await scrape()).samples;
    suite.worker = await startTestWorker(t);
    const failed = await submit('test_fail', { transient: false });
    const succeeded = await submit('test_noop', {});
    const canceled = await submit('test_sleep', { ms: 20_000 });
    expect((await waitForJob(t, failed.id, ['failed', 'succeeded'])).status).toBe('failed');
    expect((await waitForJob(t, succeeded.id, ['succeeded', 'failed'])).status).toBe('succeeded');
    await waitForJob(t, canceled.id, ['running']);
    // Let it run past the smallest bucket of run time, which its cancel must then not land in.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await request(t.app).post(`/${a.site.slug}/jobs/${canceled.id}/cancel`).set(a.editor.auth).expect(200);
    // Counted once the worker has let go of the run (worker/jobs/run.ts discard).
    const finished = (exposition: Exposition, kind: string, outcome: string) =>
      valueOf(exposition, 'cap_jobs_finished_total', { kind, outcome }) -
      valueOf(before, 'cap_jobs_finished_total', { kind, outcome });
    const { samples } = await scrapeUntil(
      (now) =>
        finished(now, 'test_fail', 'failed') > 0 &&
        finished(now, 'test_noop', 'succeeded') > 0 &&
        finished(now, 'test_sleep', 'canceled') > 0,
    );
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(samples, name, labels) - valueOf(before, name, labels);
    expect(moved('cap_jobs_finished_total', { kind: 'test_fail', outcome: 'failed' })).toBe(1);
    expect(moved('cap_jobs_finished_total', { kind: 'test_noop', outcome: 'succeeded' })).toBe(1);
    expect(moved('cap_jobs_finished_total', { kind: 'test_sleep', outcome: 'canceled' })).toBe(1);
    expect(moved('cap_job_failures_total', { kind: 'test_fail', code: 'provider_rejected' })).toBe(1);
    for (const kind of ['test_fail', 'test_noop', 'test_sleep']) {
      expect(moved('cap_job_wait_seconds_count', { kind })).toBe(1);
      expect(moved('cap_job_run_seconds_count', { kind })).toBe(1);
      expect(moved('cap_job_run_seconds_bucket', { kind, le: '+Inf' })).toBe(1);
    }
    // The canceled job's run is the time up to its cancel: more than the smallest bucket.
    expect(moved('cap_job_run_seconds_bucket', { kind: 'test_sleep', le: '0.1' })).toBe(0);
    expect(sample(samples, 'cap_jobs', { kind: 'test_fail', status: 'failed' })?.value).toBe(1);
    expect(sample(samples, 'cap_workers_alive')?.value).toBeGreaterThanOrEqual(1);

    await suite.worker.stop();
    suite.worker = undefined;
    expect(sample((await scrape()).samples, 'cap_workers_alive')?.value).toBe(0);
  });

  it('counts HTTP requests under their route’s key and status, never the URL asked', async () => {
    const route = 'GET /{site_identifier}/jobs/';
    const before = (await scrape()).samples;
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(a.editor.auth).expect(200);
    await request(t.app).get(`/${a.site.slug}/jobs/`).set(a.editor.auth).expect(200);
    await request(t.app).get(`/${a.site.slug}/jobs/`).expect(401);
    await request(t.app)
      .get(`/no-such-path-${randomBytes(4).toString('hex')}`)
      .expect(404);
    const counted = (exposition: Exposition, labels: Record<string, string>) =>
      valueOf(exposition, 'cap_http_requests_total', labels) - valueOf(before, 'cap_http_requests_total', labels);
    const { res, samples } = await scrapeUntil(
      (now) =>
        counted(now, { route, status: '200' }) >= 2 &&
        counted(now, { route, status: '401' }) >= 1 &&
        counted(now, { route: 'unmatched', status: '404' }) >= 1,
    );
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(samples, name, labels) - valueOf(before, name, labels);
    expect(moved('cap_http_requests_total', { route, status: '200' })).toBe(2);
    expect(moved('cap_http_requests_total', { route, status: '401' })).toBe(1);
    expect(moved('cap_http_request_duration_seconds_count', { route, status_class: '2xx' })).toBe(2);
    expect(moved('cap_http_request_duration_seconds_bucket', { route, status_class: '4xx', le: '+Inf' })).toBe(1);
    expect(moved('cap_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    // The scrapes themselves are counted too, under their own key.
    expect(moved('cap_http_requests_total', { route: 'GET /metrics', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(res.text).not.toContain(a.site.slug);
    expect(res.text).not.toContain('no-such-path');
  });
});

describe('a worker’s own metrics (WORKER_METRICS_PORT)', () => {
  const logger = createLogger('silent');
  const get = (port: number, path: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers });

  it('serves the process’s metrics in Prometheus text to the holder of METRICS_TOKEN, and no database gauges', async () => {
    const server = await serveWorkerMetrics({ port: 0, token: metricsToken, logger });
    try {
      const res = await get(server.port, '/metrics', scraper);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const samples = parsePrometheusText(await res.text());
      for (const name of standardNames) expect(sample(samples, name)).toBeDefined();
      for (const [name, type] of Object.entries(processNames)) expect(samples.families.get(name)?.type).toBe(type);
      // The jobs this process's worker settled above are its own.
      expect(
        valueOf(samples, 'cap_jobs_finished_total', { kind: 'test_noop', outcome: 'succeeded' }),
      ).toBeGreaterThanOrEqual(1);
      for (const name of gaugeNames) expect(samples.families.has(name)).toBe(false);

      expect((await get(server.port, '/metrics')).status).toBe(401);
      expect((await get(server.port, '/metrics', { Authorization: `Bearer ${metricsToken}x` })).status).toBe(401);
      expect((await get(server.port, '/other', scraper)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('is served by `npm run worker` on WORKER_METRICS_PORT, and closed when it stops', async () => {
    // A port free now, for the child to listen on.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const worker = await startWorkerProcess(t, {
      WORKER_METRICS_PORT: String(port),
      METRICS_TOKEN: metricsToken,
      LOG_LEVEL: 'info',
    });
    // Its heartbeat comes before its shutdown handler; the line that it started, after.
    for (let tries = 0; !worker.output().includes('"worker started"') && tries < 100; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(worker.output()).toContain(`"port":${port},"msg":"worker metrics served at /metrics"`);
    try {
      const res = await get(port, '/metrics', scraper);
      expect(res.status).toBe(200);
      const samples = parsePrometheusText(await res.text());
      for (const name of standardNames) expect(sample(samples, name)).toBeDefined();
      for (const [name, type] of Object.entries(processNames)) expect(samples.families.get(name)?.type).toBe(type);
      expect((await get(port, '/metrics')).status).toBe(401);
    } finally {
      expect(await stopProcess(worker)).toBe(0);
    }
    await expect(get(port, '/metrics', scraper)).rejects.toThrow();
  });

  it('is open when no METRICS_TOKEN is set (a port for the scraper alone)', async () => {
    const server = await serveWorkerMetrics({ port: 0, logger });
    try {
      const res = await get(server.port, '/metrics');
      expect(res.status).toBe(200);
      expect(parsePrometheusText(await res.text()).families.get('cap_jobs_finished_total')?.type).toBe('counter');
    } finally {
      await server.close();
    }
  });
});

describe('a job’s log lines', () => {
  it('carry its id once, as job_id; graphile-worker’s queue entry is queue_job_id', async () => {
    const lines: string[] = [];
    suite.worker = await startTestWorker(t, {}, undefined, {
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
    });
    const succeeded = await submit('test_noop', {});
    const failed = await submit('test_fail', { transient: false });
    await waitForJob(t, succeeded.id, ['succeeded', 'failed']);
    await waitForJob(t, failed.id, ['failed', 'succeeded']);
    await suite.worker.stop();
    suite.worker = undefined;
    for (const id of [succeeded.id, failed.id]) {
      // The platform's lines (graphile-worker's own, `component` named, hold the id inside the queue entry's payload).
      const own = lines.filter((line) => line.includes(id) && !('component' in (JSON.parse(line) as object)));
      expect(own.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(
        expect.arrayContaining([id === succeeded.id ? 'job settled' : 'job attempt failed']),
      );
      for (const line of own) {
        // JSON.parse would keep only the last of two: count them in the text.
        expect(line.match(/"job_id":/g)).toHaveLength(1);
        expect(JSON.parse(line)).toMatchObject({ job_id: id, queue_job_id: expect.any(String) });
      }
    }
  });
});
