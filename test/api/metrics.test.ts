// GET /metrics: Prometheus text for a scraper holding METRICS_TOKEN or a
// global admin; 401 for a missing or wrong token, 403 for anyone else. The
// job figures are read from the database at each scrape.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Actor } from '../../core/actor.ts';
import type { TestApp } from '../helpers/app.ts';
import { serviceAccount, type Caller } from '../helpers/factories.ts';
import type { Auth, Staffed } from '../helpers/identity.ts';
import { giveCredits, jobsSuite, newJob, startTestWorker, submitAs, waitForJob } from '../helpers/jobs.ts';

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

const jobNames = [
  'cap_jobs_queued',
  'cap_jobs_queued_oldest_age_seconds',
  'cap_jobs',
  'cap_job_duration_seconds',
  'cap_job_failures',
  'cap_workers_alive',
];

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition (comments skipped). */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The one sample with this name whose labels include these; undefined when none. */
function sample(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0];
}

async function scrape(auth: Auth = scraper) {
  const res = await request(t.app).get('/metrics').set(auth).expect(200);
  return { res, samples: parseSamples(res.text) };
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
  it('answers the scraper holding METRICS_TOKEN with the job metrics in Prometheus text', async () => {
    const { res } = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const name of jobNames) {
      expect(res.text).toContain(`# HELP ${name} `);
      expect(res.text).toContain(`# TYPE ${name} gauge`);
    }
    // The process's own runtime metrics come along under their prefix.
    expect(res.text).toMatch(/^cap_process_/m);
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

  it('reports a failed job by kind and code, durations of successes, and live workers', async () => {
    suite.worker = await startTestWorker(t);
    const failed = await submit('test_fail', { transient: false });
    const succeeded = await submit('test_noop', {});
    expect((await waitForJob(t, failed.id, ['failed', 'succeeded'])).status).toBe('failed');
    expect((await waitForJob(t, succeeded.id, ['succeeded', 'failed'])).status).toBe('succeeded');

    const { samples } = await scrape();
    expect(sample(samples, 'cap_job_failures', { kind: 'test_fail', code: 'provider_rejected' })?.value).toBe(1);
    expect(sample(samples, 'cap_jobs', { kind: 'test_fail', status: 'failed' })?.value).toBe(1);
    for (const quantile of ['0.5', '0.95', '1']) {
      expect(
        sample(samples, 'cap_job_duration_seconds', { kind: 'test_noop', quantile })?.value,
      ).toBeGreaterThanOrEqual(0);
    }
    expect(sample(samples, 'cap_workers_alive')?.value).toBeGreaterThanOrEqual(1);

    await suite.worker.stop();
    suite.worker = undefined;
    expect(sample((await scrape()).samples, 'cap_workers_alive')?.value).toBe(0);
  });
});
