// Outbound job webhooks through HTTP: a job-creating request names `webhook`
// and `webhook_events`; a receiver on 127.0.0.1 (allowed by
// FETCH_ALLOW_LOOPBACK and JOB_WEBHOOK_HTTP_HOSTS, as the posts from-url tests
// allow loopback) verifies what it got with the `standardwebhooks` package.
// Retries (500 twice, then given up; 410 at once), the SSRF refusals, the
// tenant's secret read and rotated, and each job's deliveries listed with
// their attempts.
import request from 'supertest';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { Actor } from '../../../core/actor.ts';
import type { Resolve } from '../../../core/net/safe-fetch.ts';
import type { WebhookEvent } from '../../../core/jobs/model.ts';
import { sql } from '../../../db/pool.ts';
import { createLogger } from '../../../core/logger.ts';
import { configuredBase } from '../../../core/media/urls.ts';
import { retryStrandedDeliveries } from '../../../core/webhooks/stranded.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { unique, type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, startTestWorker, submitAs, waitForJob } from '../../helpers/jobs.ts';
import { makePdf } from '../../helpers/pdf.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { hang, receiverEnv, startReceiver, type Received, type Receiver } from '../../helpers/webhook-receiver.ts';

// Two retries a second apart: three attempts in all, each of at most 3 s.
const env = receiverEnv;
const suite = jobsSuite(env);
let receiver: Receiver;
let otherAuthor: Caller;
let noJobsScope: Auth;

beforeAll(async () => {
  receiver = await startReceiver();
  const { t, a } = suite;
  otherAuthor = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  noJobsScope = (await serviceAccount(t, a.tenant, ['sites:read'], a.admin)).auth;
  for (const caller of [a.admin, a.editor, a.author]) await giveCredits(t, a.site, 1000, caller.user.id);
});
afterAll(() => receiver.close());

const worker = async (options: { resolve?: Resolve } = {}) =>
  (suite.worker = await startTestWorker(suite.t, env, undefined, options));

/** A fresh path on the receiver, so that each test reads only its own deliveries. */
const hook = () => {
  const path = `/hooks/${unique()}`;
  return { path, url: `${receiver.url}${path}` };
};

const secretOf = async (auth = suite.a.admin.auth) =>
  (await request(suite.t.app).get(`/api/tenants/${suite.a.tenant.id}/webhook-secret`).set(auth).expect(200)).body
    .secret as string;

/** The payload, verified the way a receiver verifies it. */
const verified = (secret: string, delivery: Received) =>
  new Webhook(secret).verify(delivery.body, delivery.headers) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };

const adminActor = (): Actor => ({
  kind: 'user',
  userId: suite.a.admin.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

/** A test job of the admin's, asking for a webhook (jobs of the test kinds are not made through HTTP). */
const submitWithWebhook = (kind: string, input: Record<string, unknown>, url: string, events: WebhookEvent[]) =>
  submitAs(suite.t, adminActor(), suite.a.site, { kind, input, estimatedUnits: 1, webhook: { url, events } });

const deliveriesOf = (jobId: string, auth = suite.a.admin.auth) =>
  request(suite.t.app).get(`/${suite.a.site.slug}/jobs/${jobId}/webhooks`).set(auth);

/** The job's deliveries once none is pending any more. */
const settledDeliveries = async (jobId: string, count: number) =>
  (
    await pollUntil(
      () => deliveriesOf(jobId),
      (res) =>
        res.body.items?.length === count &&
        res.body.items.every((item: { status: string }) => item.status !== 'pending'),
      { tries: 600, everyMs: 50 },
    )
  ).body.items as {
    id: string;
    event: string;
    status: string;
    next_attempt_at: string | null;
    attempts: { attempt: number; response_status: number | null; error: { code: string } | null }[];
  }[];

const reindex = (body?: Record<string, unknown>, auth = suite.a.admin.auth) => {
  const call = request(suite.t.app).post(`/search/admin/sites/${suite.a.site.slug}/reindex`).set(auth);
  return body ? call.send(body) : call;
};

describe('a job-creating request with a webhook', () => {
  it('is told when the job completes, signed so that a Standard Webhooks library verifies it', async () => {
    await worker();
    const { path, url } = hook();
    const submitted = await reindex({ webhook: url }).expect(202);
    expect(submitted.body).toMatchObject({ webhook: url, webhook_events: ['completed'] });
    const [delivery] = await receiver.waitFor(path, 1);
    const payload = verified(await secretOf(), delivery!);
    const job = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/jobs/${submitted.body.id}`)
      .set(suite.a.admin.auth);
    // The job as the API answers it, at its end.
    expect(payload).toEqual({ type: 'job.completed', timestamp: job.body.finished_at, data: job.body });
    expect(job.body.status).toBe('succeeded');
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);

    const [listed] = await settledDeliveries(submitted.body.id, 1);
    expect(listed).toMatchObject({
      id: delivery!.headers['webhook-id'],
      job_id: submitted.body.id,
      event: 'completed',
      url,
      status: 'succeeded',
      occurred_at: job.body.finished_at,
      next_attempt_at: null,
      attempts: [{ attempt: 1, response_status: 200, error: null }],
    });
  });

  it('is told when it starts and how it progresses, when it asks', async () => {
    await worker();
    const { path, url } = hook();
    const job = await submitWithWebhook('test_sleep', { ms: 60_000 }, url, ['start', 'progress', 'completed']);
    // The sleep reports half way at once; its progress goes out within a second, while it still runs.
    await receiver.waitFor(path, 2);
    await request(suite.t.app).post(`/${suite.a.site.slug}/jobs/${job.id}/cancel`).set(suite.a.admin.auth).expect(200);
    const received = await receiver.waitFor(path, 3);
    const secret = await secretOf();
    const [started, progressed, completed] = received.map((delivery) => verified(secret, delivery));
    expect(started).toMatchObject({ type: 'job.started', data: { id: job.id, status: 'running' } });
    expect(started!.timestamp).toBe(started!.data.started_at);
    expect(progressed).toMatchObject({ type: 'job.progress', data: { status: 'running', progress: 0.5 } });
    expect(completed).toMatchObject({ type: 'job.completed', data: { status: 'canceled' } });
    const listed = await settledDeliveries(job.id, 3);
    expect(listed.map((delivery) => [delivery.event, delivery.status])).toEqual([
      ['start', 'succeeded'],
      ['progress', 'succeeded'],
      ['completed', 'succeeded'],
    ]);
    // Three messages, three ids.
    expect(new Set(received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(3);
  });

  it('carries the URLs of the media the job made, at PUBLIC_URL (else the API’s port), which give the file', async () => {
    await worker();
    const { path, url } = hook();
    const submitted = await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/tts`)
      .set(suite.a.editor.auth)
      .send({ text: 'Told by webhook.', webhook: url })
      .expect(202);
    const [delivery] = await receiver.waitFor(path, 1);
    const { data } = verified(await secretOf(), delivery!);
    expect(data).toMatchObject({ id: submitted.body.id, status: 'succeeded', media_id: expect.any(String) });
    // The worker has no request to take a host from: the URLs are where the configuration says clients reach the API.
    const file = new URL(data.media_url as string);
    expect(file.origin).toBe(configuredBase(suite.t.config));
    expect(file.pathname).toBe(`/${suite.a.site.id}/media/${data.media_id as string}/signed-view`);
    expect(data.media_urls).toEqual([data.media_url]);
    expect(Date.parse(data.media_urls_expire_at as string)).toBeGreaterThan(Date.now());
    const fetched = await request(suite.t.app).get(`${file.pathname}${file.search}`).buffer(true).expect(200);
    expect(fetched.headers['content-type']).toMatch(/^audio\//);
  });

  it('tells an upload’s sender when its processing job is done, and refuses a webhook it may not send to', async () => {
    await worker();
    const { path, url } = hook();
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const uploaded = await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/`)
      .set(suite.a.editor.auth)
      .attach('file', png, 'square.png')
      .field('title', 'Square')
      .field('webhook', url)
      .expect(201);
    expect(uploaded.body).toMatchObject({ title: 'Square', status: 'processing', job_id: expect.any(String) });
    const [delivery] = await receiver.waitFor(path, 1);
    expect(verified(await secretOf(), delivery!)).toMatchObject({
      type: 'job.completed',
      data: { id: uploaded.body.job_id, kind: 'media_process', status: 'succeeded' },
    });
    const item = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/media/${uploaded.body.id}`)
      .set(suite.a.editor.auth)
      .expect(200);
    expect(item.body).toMatchObject({ status: 'ready', width: 40 });
    // Refused as a job-creating request refuses it, and nothing is made.
    const count = () =>
      suite.t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
        select count(*)::int as count from media_items where site_id = ${suite.a.site.id}`);
    const before = await count();
    const refused = await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/`)
      .set(suite.a.editor.auth)
      .attach('file', png, 'square.png')
      .field('webhook', 'http://hooks.example.com/upload')
      .expect(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: 'body.webhook' })]);
    await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/`)
      .set(suite.a.editor.auth)
      .attach('file', png, 'square.png')
      .field('webhook_events', 'start')
      .expect(422);
    expect(await count()).toBe(before);
  });

  it('asks for nothing by default: a job without a webhook has no deliveries', async () => {
    await worker();
    const job = await submitAs(suite.t, adminActor(), suite.a.site, {
      kind: 'test_noop',
      input: {},
      estimatedUnits: 1,
    });
    expect(job).toMatchObject({ webhook: null, webhook_events: [] });
    await waitForJob(suite.t, job.id, ['succeeded']);
    const count = await suite.t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from job_webhooks where job_id = ${job.id}`);
    expect(count).toBe(0);
    expect((await deliveriesOf(job.id).expect(200)).body.items).toEqual([]);
  });
});

describe('delivery attempts', () => {
  it('retries after a 500 with the same webhook-id, each attempt signed anew', async () => {
    await worker();
    const { path, url } = hook();
    receiver.answer(path, 500);
    const job = await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [first, second] = await receiver.waitFor(path, 2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    const secret = await secretOf();
    expect(verified(secret, second!)).toEqual(verified(secret, first!));
    const [listed] = await settledDeliveries(job.id, 1);
    expect(listed).toMatchObject({
      status: 'succeeded',
      attempts: [
        { attempt: 1, response_status: 500, error: { code: 'http_status' } },
        { attempt: 2, response_status: 200, error: null },
      ],
    });
  });

  it('gives up once its retries are spent (JOB_WEBHOOK_RETRY_SECONDS)', async () => {
    await worker();
    const { path, url } = hook();
    receiver.answer(path, 500, 502, 503, 504);
    const job = await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [listed] = await settledDeliveries(job.id, 1);
    expect(listed).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(listed!.attempts.map((attempt) => attempt.response_status)).toEqual([500, 502, 503]);
    expect(receiver.at(path)).toHaveLength(3);
  });

  describe('whose queue entry gave up (its task failed each run, the database away, say)', () => {
    /** A pending delivery of a queued job, due five minutes ago, with `attempts` made; its queue entry spent, or none. */
    const strandedDelivery = async (url: string, attempts: number, entry: 'spent' | 'none') => {
      // The job itself asks for nothing: only the row below is delivered.
      const job = await submitAs(suite.t, adminActor(), suite.a.site, {
        kind: 'test_noop',
        input: {},
        estimatedUnits: 1,
      });
      const { db } = suite.t.services;
      const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        insert into job_webhooks (tenant_id, job_id, event, url, payload, occurred_at, attempts, created_at)
        values (${suite.a.tenant.id}, ${job.id}, 'completed', ${url}, '{"type":"job.completed"}', now(), ${attempts},
                now() - interval '5 minutes')
        returning id`);
      if (entry === 'spent') {
        await db.query(sql.typeAlias('void')`
          select from graphile_worker.add_job('webhook__deliver', json_build_object('webhook_id', ${id}::uuid),
                                              job_key => ${`webhook:${id}`}, max_attempts => 5)`);
        await db.query(sql.typeAlias('void')`
          update graphile_worker._private_jobs set attempts = max_attempts, last_error = 'the database was away'
          where key = ${`webhook:${id}`}`);
      }
      return id;
    };
    const sweep = () => retryStrandedDeliveries(suite.t.services.db, suite.t.config, createLogger('silent'));
    const deliveryOf = async (id: string) =>
      (
        await deliveriesOf(
          await suite.t.services.db.oneFirst(sql.type(z.object({ job_id: z.uuid() }))`
          select job_id from job_webhooks where id = ${id}`),
        ).expect(200)
      ).body.items.find((item: { id: string }) => item.id === id) as {
        status: string;
        next_attempt_at: string | null;
        attempts: { attempt: number; response_status: number | null; error: { code: string } | null }[];
      };

    it('is recorded as an attempt that sent nothing, and sent again on the retry schedule', async () => {
      const { path, url } = hook();
      const id = await strandedDelivery(url, 0, 'spent');
      expect(await sweep()).toBe(1);
      const swept = await deliveryOf(id);
      expect(swept).toMatchObject({
        status: 'pending',
        attempts: [{ attempt: 1, response_status: null, error: { code: 'not_sent' } }],
      });
      expect(swept.next_attempt_at).not.toBeNull();
      // Its queue entry can run again: the next sweep leaves it alone.
      expect(await sweep()).toBe(0);
      await worker();
      const [received] = await receiver.waitFor(path, 1);
      expect(received!.headers['webhook-id']).toBe(id);
      const sent = await pollUntil(
        () => deliveryOf(id),
        (delivery) => delivery.status !== 'pending',
        { tries: 600, everyMs: 50 },
      );
      expect(sent.status).toBe('succeeded');
      expect(
        sent.attempts.map((attempt) => [attempt.attempt, attempt.response_status, attempt.error?.code ?? null]),
      ).toEqual([
        [1, null, 'not_sent'],
        [2, 200, null],
      ]);
    });

    it('fails once the retry schedule is spent, with or without a queue entry left', async () => {
      const { url } = hook();
      // Two waits (JOB_WEBHOOK_RETRY_SECONDS 1,1): a third attempt is the last.
      const spent = await strandedDelivery(url, 2, 'spent');
      const lost = await strandedDelivery(url, 2, 'none');
      expect(await sweep()).toBe(2);
      for (const id of [spent, lost]) {
        const delivery = await deliveryOf(id);
        expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
        expect(delivery.attempts).toEqual([
          expect.objectContaining({ attempt: 3, error: expect.objectContaining({ code: 'not_sent' }) }),
        ]);
      }
      expect(await sweep()).toBe(0);
    });
  });

  it('does not follow a redirect: it counts as a failed attempt', async () => {
    await worker();
    const { path, url } = hook();
    receiver.answer(path, 307);
    const job = await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [listed] = await settledDeliveries(job.id, 1);
    expect(listed!.attempts.map((attempt) => attempt.response_status)).toEqual([307, 200]);
    expect(receiver.at(`${path}/moved`)).toEqual([]);
  });

  it('retries a receiver that does not answer in time', async () => {
    await worker();
    const { path, url } = hook();
    receiver.answer(path, hang);
    const job = await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [listed] = await settledDeliveries(job.id, 1);
    expect(listed).toMatchObject({
      status: 'succeeded',
      attempts: [
        { attempt: 1, response_status: null, error: { code: 'fetch_timeout' } },
        { attempt: 2, response_status: 200, error: null },
      ],
    });
  });

  it('stops at a 410 Gone', async () => {
    await worker();
    const { path, url } = hook();
    receiver.answer(path, 410, 200);
    const job = await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [listed] = await settledDeliveries(job.id, 1);
    expect(listed).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      attempts: [{ attempt: 1, response_status: 410, error: { code: 'gone' } }],
    });
    expect(receiver.at(path)).toHaveLength(1);
  });

  // A URL written with a private address is refused at submit (below); these jobs did not come through HTTP.
  it('never reaches a private address, written as one or resolved from a name, and records why', async () => {
    const resolve: Resolve = async () => [{ address: '192.168.7.7', family: 4 }];
    await worker({ resolve });
    const literal = await submitWithWebhook('test_noop', {}, 'https://10.0.0.8/hook', ['completed']);
    const named = await submitWithWebhook('test_noop', {}, 'https://hooks.internal.test/hook', ['completed']);
    for (const job of [literal, named]) {
      const [listed] = await settledDeliveries(job.id, 1);
      expect(listed).toMatchObject({
        status: 'failed',
        next_attempt_at: null,
        attempts: [{ attempt: 1, response_status: null, error: { code: 'address_not_allowed' } }],
      });
    }
  });
});

describe('the webhook fields of job-creating requests', () => {
  it.each([
    ['not a URL', { webhook: 'hooks here' }, 'body.webhook'],
    ['another scheme', { webhook: 'ftp://hooks.example.com/x' }, 'body.webhook'],
    ['http to a host not allowed', { webhook: 'http://hooks.example.com/x' }, 'body.webhook'],
    ['a private address', { webhook: 'https://10.0.0.8/hook' }, 'body.webhook'],
    ['a link-local address', { webhook: 'https://[fe80::1]/hook' }, 'body.webhook'],
    ['an unknown event', { webhook: 'https://hooks.example.com/x', webhook_events: ['done'] }, 'body.webhook_events.0'],
    ['no events', { webhook: 'https://hooks.example.com/x', webhook_events: [] }, 'body.webhook_events'],
    ['events without a webhook', { webhook_events: ['start'] }, 'body.webhook_events'],
  ])('refuses %s with a 422', async (_case, body, path) => {
    const res = await reindex(body).expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });

  it('names the setting that allows a plain-http webhook when it refuses one', async () => {
    const res = await reindex({ webhook: 'http://hooks.example.com/x' }).expect(422);
    expect(res.body.detail).toBe(
      'The webhook must be an https URL; plain http is sent only to the hosts JOB_WEBHOOK_HTTP_HOSTS names (add hooks.example.com).',
    );
    expect(res.body.errors).toEqual([
      { path: 'body.webhook', message: expect.stringContaining('JOB_WEBHOOK_HTTP_HOSTS') },
    ]);
  });

  // The jobs made here never run (no worker) and are canceled, which they did not ask to be told.
  it('are taken beside a route’s own fields, which keep their meaning and stay out of the job’s input', async () => {
    const res = await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/tts`)
      .set(suite.a.editor.auth)
      .send({ text: 'Hello there.', webhook: 'https://hooks.example.com/tts', webhook_events: ['start', 'progress'] })
      .expect(202);
    expect(res.body).toMatchObject({
      kind: 'speech',
      webhook: 'https://hooks.example.com/tts',
      webhook_events: ['start', 'progress'],
    });
    expect(res.body.input).not.toHaveProperty('webhook');
    await request(suite.t.app)
      .post(`/${suite.a.site.slug}/media/tts`)
      .set(suite.a.editor.auth)
      .send({ webhook: 'x' })
      .expect(422);
    await request(suite.t.app)
      .post(`/${suite.a.site.slug}/jobs/${res.body.id}/cancel`)
      .set(suite.a.editor.auth)
      .expect(200);
  });

  it('are form fields of a multipart upload, the events comma-separated', async () => {
    const upload = (fields: Record<string, string>) => {
      let call = request(suite.t.app)
        .post(`/${suite.a.site.slug}/posts/from-pdf`)
        .set(suite.a.editor.auth)
        .attach('file', makePdf([[{ text: 'A line of text.' }]]), 'a.pdf');
      for (const [name, value] of Object.entries(fields)) call = call.field(name, value);
      return call;
    };
    const res = await upload({ webhook: 'https://hooks.example.com/pdf', webhook_events: 'start, progress' }).expect(
      202,
    );
    expect(res.body).toMatchObject({ webhook: 'https://hooks.example.com/pdf', webhook_events: ['start', 'progress'] });
    await request(suite.t.app)
      .post(`/${suite.a.site.slug}/jobs/${res.body.id}/cancel`)
      .set(suite.a.editor.auth)
      .expect(200);
    const refused = await upload({ webhook: 'http://hooks.example.com/pdf' }).expect(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: 'body.webhook' })]);
  });
});

describe('GET /{site_identifier}/jobs/{job_id}/webhooks', () => {
  it('is for those who may read the job', async () => {
    const job = await submitAs(suite.t, adminActor(), suite.a.site, {
      kind: 'test_noop',
      input: {},
      estimatedUnits: 1,
    });
    await deliveriesOf(job.id).expect(200);
    await deliveriesOf(job.id, suite.a.editor.auth).expect(200);
    await request(suite.t.app).get(`/${suite.a.site.slug}/jobs/${job.id}/webhooks`).expect(401);
    await deliveriesOf(job.id, noJobsScope).expect(403);
    // Another tenant's admin, and an author who did not submit it: not found.
    await deliveriesOf(job.id, suite.b.admin.auth).expect(404);
    await deliveriesOf(job.id, otherAuthor.auth).expect(404);
    await request(suite.t.app).get(`/${suite.a.site.slug}/jobs/not-a-job/webhooks`).set(suite.a.admin.auth).expect(422);
    await request(suite.t.app)
      .get(`/${suite.a.site.slug}/jobs/${job.id}/webhooks?limit=0`)
      .set(suite.a.admin.auth)
      .expect(422);
  });
});

describe('the tenant’s webhook secret', () => {
  const secretPath = () => `/api/tenants/${suite.a.tenant.id}/webhook-secret`;
  const rotate = (body: Record<string, unknown>, auth = suite.a.admin.auth) =>
    request(suite.t.app).post(`${secretPath()}/rotate`).set(auth).send(body);

  it('is read by the tenant’s admins, and the same until rotated', async () => {
    const read = await request(suite.t.app).get(secretPath()).set(suite.a.admin.auth).expect(200);
    expect(read.body).toMatchObject({ tenant_id: suite.a.tenant.id, previous_expires_at: null });
    expect(read.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await secretOf(suite.admin.auth)).toBe(read.body.secret);
    await request(suite.t.app).get(secretPath()).expect(401);
    await request(suite.t.app).get(secretPath()).set(suite.a.editor.auth).expect(403);
    await request(suite.t.app).get(secretPath()).set(suite.b.admin.auth).expect(404);
    await request(suite.t.app).get('/api/tenants/not-a-tenant/webhook-secret').set(suite.a.admin.auth).expect(422);
    await request(suite.t.app)
      .get('/api/tenants/00000000-0000-4000-8000-000000000000/webhook-secret')
      .set(suite.admin.auth)
      .expect(404);
  });

  it('rotated without a grace period, signs with the new one only: the old one no longer verifies', async () => {
    await worker();
    const old = await secretOf();
    const rotated = await rotate({ grace_period_seconds: 0 }).expect(200);
    expect(rotated.body.secret).not.toBe(old);
    expect(rotated.body).toMatchObject({ previous_expires_at: null });
    expect(await secretOf()).toBe(rotated.body.secret);
    const { path, url } = hook();
    await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [delivery] = await receiver.waitFor(path, 1);
    expect(verified(rotated.body.secret, delivery!)).toMatchObject({ type: 'job.completed' });
    expect(() => verified(old, delivery!)).toThrow();
  });

  it('rotated with a grace period, signs with both meanwhile', async () => {
    await worker();
    const old = await secretOf();
    const rotated = await rotate({}).expect(200);
    expect(Date.parse(rotated.body.previous_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const { path, url } = hook();
    await submitWithWebhook('test_noop', {}, url, ['completed']);
    const [delivery] = await receiver.waitFor(path, 1);
    expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verified(rotated.body.secret, delivery!)).toEqual(verified(old, delivery!));
  });

  it('is rotated by the tenant’s admins only, with a valid body', async () => {
    await request(suite.t.app).post(`${secretPath()}/rotate`).send({}).expect(401);
    await rotate({}, suite.a.editor.auth).expect(403);
    await rotate({}, noJobsScope).expect(403);
    await rotate({}, suite.b.admin.auth).expect(404);
    await rotate({ grace_period_seconds: -1 }).expect(422);
    await rotate({ grace_period_seconds: 8 * 86_400 }).expect(422);
    await rotate({ grace: 5 }).expect(422);
    await rotate({ grace_period_seconds: 0 }, suite.admin.auth).expect(200);
  });
});
