// Jobs of a site through HTTP: list (filters, pagination, who sees what), one
// job (its public fields, `Prefer: wait`), cancel (queue, credits, a running
// run told to stop) and the server-sent event stream.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import request from 'supertest';
import { z } from 'zod';
import type { Actor } from '../../../core/actor.ts';
import { jobSchema as jobSchema, type JobStatus } from '../../../core/jobs/model.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { assignToSite, newSite, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, idsOf, type Auth, type Staffed } from '../../helpers/identity.ts';
import {
  giveCredits,
  jobsSuite,
  ledgerFor,
  newJob,
  readJob,
  startTestWorker,
  submitAs,
  waitForJob,
} from '../../helpers/jobs.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let author: Caller;
let otherAuthor: Caller;
let admin: Caller;
let reader: Auth;
let writer: Auth;
let noJobsScope: Auth;

const missing = '00000000-0000-4000-8000-000000000000';

const suite = jobsSuite();

beforeAll(async () => {
  ({ t, a, b, admin } = suite);
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  otherAuthor = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  reader = (await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read'], a.admin)).auth;
  writer = (await serviceAccount(t, a.tenant, ['sites:read', 'jobs:read', 'jobs:write'], a.admin)).auth;
  noJobsScope = (await serviceAccount(t, a.tenant, ['sites:read'], a.admin)).auth;
  for (const caller of [a.editor, author, otherAuthor]) await giveCredits(t, a.site, 1000, caller.user.id);
});

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

const submit = (caller: Caller, kind: string, input: Record<string, unknown>, units = 3, site: Site = a.site) =>
  submitAs(t, actorOf(caller), site, { kind, input, estimatedUnits: units });

/** A fresh site of tenant A reached by its editor and both authors, so lists hold only this test's jobs. */
async function freshSite(): Promise<Site> {
  const site = await newSite(t, a.tenant);
  for (const caller of [a.editor, author, otherAuthor]) await assignToSite(t, site, caller.user.id);
  return site;
}

const queueEntries = (jobId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from graphile_worker.jobs where key = ${`job:${jobId}`}`);

const attemptsOf = (jobId: string) =>
  t.services.db.any(sql.type(z.object({ attempt: z.number(), outcome: z.string().nullable() }))`
    select attempt, outcome from job_attempts where job_id = ${jobId} order by attempt`);

/** Polls the job's attempts until the last one has an outcome, or the deadline passes. */
async function waitForAttemptOutcome(jobId: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const attempts = await attemptsOf(jobId);
    if ((attempts.length > 0 && attempts.at(-1)?.outcome) || Date.now() > deadline) return attempts;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls until the API process watches `count` jobs' notifications (a waiting request or stream has subscribed). */
async function waitForWatched(count: number, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (t.services.jobEvents.watched !== count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return t.services.jobEvents.watched;
}

type SseEvent = { id?: string; event?: string; data?: string };

/** Reads a whole event stream as text (supertest would otherwise buffer by content type). */
const readStream = (req: request.Test) =>
  req.buffer(true).parse((res, callback) => {
    let data = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (data += chunk));
    res.on('end', () => callback(null, data));
  });

function parseEvents(raw: string): SseEvent[] {
  return raw
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const event: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        event[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
      }
      return event;
    });
}

describe('GET /{site}/jobs/', () => {
  it('lists the site’s jobs oldest first, filtered by status and kind, by slug or id', async () => {
    const site = await freshSite();
    const made = [
      await newJob(t, site, { kind: 'speech', status: 'queued' }),
      await newJob(t, site, { kind: 'test_noop', status: 'succeeded' }),
      await newJob(t, site, { kind: 'speech', status: 'failed' }),
      await newJob(t, site, { kind: 'test_noop', status: 'queued' }),
      await newJob(t, site, { kind: 'speech', status: 'running' }),
    ];
    await newJob(t, a.site, { kind: 'speech' }); // another site of the same tenant: not listed
    const ids = made.map((job) => job.id);
    const all = await request(t.app).get(`/${site.slug}/jobs/`).set(a.editor.auth).expect(200);
    expect(idsOf(all.body)).toEqual(ids);
    expect(all.body.next_cursor).toBeNull();
    expect(all.body).not.toHaveProperty('total');
    expect(idsOf((await request(t.app).get(`/${site.id}/jobs/`).set(a.editor.auth).expect(200)).body)).toEqual(ids);

    const list = async (query: string) =>
      idsOf((await request(t.app).get(`/${site.slug}/jobs/?${query}`).set(a.editor.auth).expect(200)).body);
    expect(await list('status=queued')).toEqual([ids[0], ids[3]]);
    expect(await list('status=failed')).toEqual([ids[2]]);
    expect(await list('kind=test_noop')).toEqual([ids[1], ids[3]]);
    expect(await list('kind=speech&status=queued')).toEqual([ids[0]]);
    expect(await list('status=canceled')).toEqual([]);
    expect(await list('kind=image')).toEqual([]);
  });

  it('pages through five jobs two at a time without repeats, and counts them with include_total', async () => {
    const site = await freshSite();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newJob(t, site, { kind: i % 2 ? 'test_noop' : 'speech' })).id);
    // One at a time with next_cursor: the whole list, in order, each once (and a bad cursor is a 400).
    expect(await expectPaginates(t, a.editor.auth, `/${site.slug}/jobs/`)).toEqual(ids);

    const counted = await request(t.app)
      .get(`/${site.slug}/jobs/?limit=2&include_total=true`)
      .set(a.editor.auth)
      .expect(200);
    expect(counted.body.total).toBe(5);
    expect(counted.body.items).toHaveLength(2);
    const filtered = await request(t.app)
      .get(`/${site.slug}/jobs/?kind=speech&include_total=true`)
      .set(a.editor.auth)
      .expect(200);
    expect(filtered.body.total).toBe(3);
  });

  it('refuses a bad status or kind filter (422) and a garbage cursor (400)', async () => {
    const bad = await request(t.app).get(`/${a.site.slug}/jobs/?status=done`).set(a.editor.auth).expect(422);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(JSON.stringify(bad.body.errors)).toContain('status');
    await request(t.app).get(`/${a.site.slug}/jobs/?kind=Not%20A%20Kind`).set(a.editor.auth).expect(422);
    await request(t.app).get(`/${a.site.slug}/jobs/?limit=0`).set(a.editor.auth).expect(422);
    await request(t.app).get(`/${a.site.slug}/jobs/?cursor=garbage`).set(a.editor.auth).expect(400);
  });

  it('shows authors only the jobs they submitted; editors, admins and service accounts all', async () => {
    const site = await freshSite();
    const mine = [
      await newJob(t, site, { userId: author.user.id }),
      await newJob(t, site, { userId: author.user.id, status: 'succeeded' }),
    ];
    const theirs = await newJob(t, site, { userId: otherAuthor.user.id });
    const bots = await newJob(t, site, { userId: null });
    const every = [mine[0]!.id, mine[1]!.id, theirs.id, bots.id];

    const listed = async (auth: Auth) =>
      idsOf((await request(t.app).get(`/${site.id}/jobs/?include_total=true`).set(auth).expect(200)).body);
    expect(await listed(author.auth)).toEqual([mine[0]!.id, mine[1]!.id]);
    expect(await listed(otherAuthor.auth)).toEqual([theirs.id]);
    for (const auth of [a.editor.auth, a.admin.auth, admin.auth, reader, writer])
      expect(await listed(auth)).toEqual(every);
    const total = await request(t.app).get(`/${site.id}/jobs/?include_total=true`).set(author.auth).expect(200);
    expect(total.body.total).toBe(2);

    // Another's job is not found for an author, whichever endpoint.
    await request(t.app).get(`/${site.slug}/jobs/${mine[0]!.id}`).set(author.auth).expect(200);
    await request(t.app).get(`/${site.slug}/jobs/${theirs.id}`).set(author.auth).expect(404);
    await request(t.app).get(`/${site.slug}/jobs/${bots.id}`).set(author.auth).expect(404);
    await request(t.app).get(`/${site.slug}/jobs/${theirs.id}/events`).set(author.auth).expect(404);
    await request(t.app).post(`/${site.slug}/jobs/${theirs.id}/cancel`).set(author.auth).expect(404);
    expect((await readJob(t, theirs.id)).status).toBe('queued');
    // An author of the tenant not assigned to the site does not reach it at all.
    await request(t.app).get(`/${site.slug}/jobs/`).set(a.author.auth).expect(404);
  });

  it('refuses a service account without jobs:read (403)', async () => {
    const res = await request(t.app).get(`/${a.site.slug}/jobs/`).set(noJobsScope).expect(403);
    expect(res.body.detail).toContain('jobs:read');
  });
});

describe('GET /{site}/jobs/{job_id}', () => {
  it('answers the public fields of the Job and none of the internal ones', async () => {
    const submitted = await submit(a.editor, 'test_noop', { note: 'fields' }, 4);
    try {
      const res = await request(t.app).get(`/${a.site.slug}/jobs/${submitted.id}`).set(a.editor.auth).expect(200);
      expect(res.headers['location']).toBe(`/${a.site.slug}/jobs/${submitted.id}`);
      expect(res.headers['preference-applied']).toBeUndefined();
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(jobSchema.shape).sort());
      for (const internal of [
        'tenant_id',
        'account_id',
        'provider_ref',
        'provider_result',
        'locked_by',
        'actor_id',
        'idempotency_key',
      ]) {
        expect(res.body).not.toHaveProperty(internal);
      }
      expect(jobSchema.safeParse(res.body).success).toBe(true);
      expect(res.body).toMatchObject({
        id: submitted.id,
        site_id: a.site.id,
        user_id: a.editor.user.id,
        kind: 'test_noop',
        status: 'queued',
        progress: 0,
        stage: expect.any(String),
        input: { note: 'fields' },
        output: null,
        error: null,
        attempts: 0,
        max_attempts: expect.any(Number),
        credits_reserved: 4,
        credits_charged: 0,
        provider: null,
        media_id: null,
        media_ids: [],
        created_at: expect.any(String),
        started_at: null,
        waiting_at: null,
        finished_at: null,
        canceled_at: null,
        updated_at: expect.any(String),
      });
      // By id too, and for the site's other readers.
      await request(t.app).get(`/${a.site.id}/jobs/${submitted.id}`).set(a.admin.auth).expect(200);
      await request(t.app).get(`/${a.site.id}/jobs/${submitted.id}`).set(reader).expect(200);
      await request(t.app).get(`/${a.site.id}/jobs/${submitted.id}`).set(admin.auth).expect(200);
    } finally {
      await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    }
  });

  it('is 404 across tenants and for an unknown job, 422 for a job id that is not a uuid', async () => {
    const job = await newJob(t, a.site);
    await request(t.app).get(`/${a.site.slug}/jobs/${job.id}`).set(b.editor.auth).expect(404);
    await request(t.app).get(`/${b.site.slug}/jobs/${job.id}`).set(b.editor.auth).expect(404);
    await request(t.app).get(`/${b.site.slug}/jobs/${job.id}`).set(b.admin.auth).expect(404);
    await request(t.app).get(`/${a.site.slug}/jobs/${missing}`).set(a.editor.auth).expect(404);
    const bad = await request(t.app).get(`/${a.site.slug}/jobs/not-a-uuid`).set(a.editor.auth).expect(422);
    expect(JSON.stringify(bad.body.errors)).toContain('job_id');
    await request(t.app).get(`/${a.site.slug}/jobs/${job.id}`).set(noJobsScope).expect(403);
  });

  it('with Prefer: wait answers once the job has finished', async () => {
    const submitted = await submit(a.editor, 'test_sleep', { ms: 800 });
    const waiting = request(t.app)
      .get(`/${a.site.slug}/jobs/${submitted.id}`)
      .set(a.editor.auth)
      .set('Prefer', 'wait=20')
      .then((res) => res);
    // The worker starts once the request is waiting, so the job cannot finish before it asks.
    expect(await waitForWatched(1)).toBe(1);
    suite.worker = await startTestWorker(t);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: submitted.id,
      status: 'succeeded',
      output: { slept: 800 },
      progress: 1,
      credits_charged: 1,
    });
    expect(res.headers['preference-applied']).toBe('wait=20');
  });

  it('with Prefer: wait answers a job still queued when the wait runs out', async () => {
    const submitted = await submit(a.editor, 'test_noop', {});
    try {
      const res = await request(t.app)
        .get(`/${a.site.slug}/jobs/${submitted.id}`)
        .set(a.editor.auth)
        .set('Prefer', 'wait=1')
        .expect(200);
      expect(res.body).toMatchObject({ id: submitted.id, status: 'queued' });
      expect(res.headers['preference-applied']).toBe('wait=1');
    } finally {
      await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    }
  });

  it('with Prefer: wait answers as soon as the job is canceled meanwhile', async () => {
    const submitted = await submit(a.editor, 'test_noop', {});
    const waiting = request(t.app)
      .get(`/${a.site.slug}/jobs/${submitted.id}`)
      .set(a.editor.auth)
      .set('Prefer', 'wait=50')
      .then((res) => res);
    expect(await waitForWatched(1)).toBe(1);
    await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: submitted.id, status: 'canceled', error: { code: 'canceled' } });
    expect(res.headers['preference-applied']).toBe('wait=50');
    expect(await waitForWatched(0)).toBe(0);
  });
});

describe('POST /{site}/jobs/{job_id}/cancel', () => {
  const balanceOf = async (caller: Caller) =>
    (await request(t.app).get(`/${a.site.slug}/transactions/credits/balance`).set(caller.auth).expect(200)).body as {
      balance: number;
      reserved: number;
      available: number;
    };

  it('cancels a queued job: off the queue, credits released, 409 the second time', async () => {
    const before = await balanceOf(author);
    const submitted = await submit(author, 'test_sleep', { ms: 10 }, 7);
    expect(await queueEntries(submitted.id)).toBe(1);
    expect(await balanceOf(author)).toEqual({
      ...before,
      user_id: author.user.id,
      reserved: before.reserved + 7,
      available: before.available - 7,
    });

    const res = await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(author.auth).expect(200);
    expect(res.body).toMatchObject({
      id: submitted.id,
      status: 'canceled',
      error: { code: 'canceled' },
      credits_charged: 0,
    });
    expect(res.body.canceled_at).toEqual(expect.any(String));
    expect(res.body.finished_at).toEqual(expect.any(String));
    expect(res.body).not.toHaveProperty('tenant_id');
    expect(await queueEntries(submitted.id)).toBe(0);
    expect(await ledgerFor(t, submitted.id)).toEqual([
      { kind: 'reservation', amount: 0, reserved_change: 7 },
      { kind: 'release', amount: 0, reserved_change: -7 },
    ]);
    const after = await balanceOf(author);
    expect(after).toMatchObject({ balance: before.balance, reserved: 0, available: before.balance });

    const again = await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(author.auth).expect(409);
    expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(await ledgerFor(t, submitted.id)).toHaveLength(2);
    const finished = await newJob(t, a.site, { status: 'succeeded' });
    await request(t.app).post(`/${a.site.id}/jobs/${finished.id}/cancel`).set(a.editor.auth).expect(409);
  });

  it('lets editors and service accounts with jobs:write cancel; jobs:read alone is 403', async () => {
    const first = await submit(author, 'test_noop', {});
    const second = await submit(author, 'test_noop', {});
    await request(t.app).post(`/${a.site.slug}/jobs/${first.id}/cancel`).set(reader).expect(403);
    await request(t.app).post(`/${a.site.slug}/jobs/${first.id}/cancel`).set(noJobsScope).expect(403);
    expect((await readJob(t, first.id)).status).toBe('queued');
    await request(t.app).post(`/${a.site.slug}/jobs/${first.id}/cancel`).set(writer).expect(200);
    await request(t.app).post(`/${a.site.slug}/jobs/${second.id}/cancel`).set(a.editor.auth).expect(200);
    await request(t.app).post(`/${a.site.slug}/jobs/${missing}/cancel`).set(a.editor.auth).expect(404);
    await request(t.app).post(`/${a.site.slug}/jobs/not-a-uuid/cancel`).set(a.editor.auth).expect(422);
  });

  it('stops a running job: canceled, its attempt closed as canceled, nothing debited', async () => {
    suite.worker = await startTestWorker(t);
    const submitted = await submit(a.editor, 'test_sleep', { ms: 20_000 }, 5);
    expect((await waitForJob(t, submitted.id, ['running', 'succeeded', 'failed'])).status).toBe('running');

    const res = await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    expect(res.body).toMatchObject({ status: 'canceled', error: { code: 'canceled' } });
    // The run is aborted well before its 20 s sleep would end.
    const attempts = await waitForAttemptOutcome(submitted.id);
    expect(attempts).toEqual([{ attempt: 1, outcome: 'canceled' }]);
    const job = await readJob(t, submitted.id);
    expect(job).toMatchObject({ status: 'canceled', credits_charged: 0, locked_by: null });
    expect((await ledgerFor(t, submitted.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(
      (await request(t.app).get(`/${a.site.slug}/jobs/${submitted.id}`).set(a.editor.auth).expect(200)).body.status,
    ).toBe('canceled');
    expect(await balanceOf(a.editor)).toMatchObject({ reserved: 0 });
  });
});

describe('GET /{site}/jobs/{job_id}/events', () => {
  it('sends one event for a finished job and ends', async () => {
    const job = await newJob(t, a.site, { status: 'succeeded', kind: 'test_noop' });
    const res = await readStream(request(t.app).get(`/${a.site.slug}/jobs/${job.id}/events`).set(a.editor.auth)).expect(
      200,
    );
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEvents(res.body as string);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'job', id: '1' });
    expect(JSON.parse(events[0]!.data!)).toMatchObject({ id: job.id, status: 'succeeded' });
  });

  it('streams a running job’s changes until it succeeds', async () => {
    const submitted = await submit(a.editor, 'test_sleep', { ms: 1500 });
    const streaming = readStream(
      request(t.app).get(`/${a.site.id}/jobs/${submitted.id}/events`).set(a.editor.auth),
    ).then((res) => res);
    // The worker starts once the stream is watching, so every state is seen.
    expect(await waitForWatched(1)).toBe(1);
    suite.worker = await startTestWorker(t);
    const res = await streaming;
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEvents(res.body as string);
    expect(events.every((event) => event.event === 'job')).toBe(true);
    expect(events.map((event) => event.id)).toEqual(events.map((_, i) => String(i + 1)));
    const jobs = events.map(
      (event) => JSON.parse(event.data!) as { id: string; status: JobStatus; progress: number; stage: string },
    );
    expect(jobs.every((job) => job.id === submitted.id)).toBe(true);
    const statuses = jobs.map((job) => job.status);
    expect(statuses[0]).toBe('queued');
    expect(statuses).toContain('running');
    // Progress is streamed too: the running job's stage "sleeping" at one half.
    expect(jobs).toEqual(
      expect.arrayContaining([expect.objectContaining({ status: 'running', progress: 0.5, stage: 'sleeping' })]),
    );
    expect(statuses.at(-1)).toBe('succeeded');
    expect(statuses.indexOf('running')).toBeLessThan(statuses.indexOf('succeeded'));
    expect(statuses.filter((status) => status === 'succeeded')).toHaveLength(1);
    expect(jobs.at(-1)).toMatchObject({ progress: 1, output: { slept: 1500 } });
    // No two consecutive events carry the same state.
    for (let i = 1; i < events.length; i++) expect(events[i]!.data).not.toBe(events[i - 1]!.data);
  });

  it('ends the stream with the canceled state when the job is canceled meanwhile', async () => {
    const submitted = await submit(a.editor, 'test_noop', {});
    const streaming = readStream(
      request(t.app).get(`/${a.site.slug}/jobs/${submitted.id}/events`).set(a.editor.auth),
    ).then((res) => res);
    expect(await waitForWatched(1)).toBe(1);
    await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    const res = await streaming;
    expect(res.status).toBe(200);
    const statuses = parseEvents(res.body as string).map(
      (event) => (JSON.parse(event.data!) as { status: string }).status,
    );
    expect(statuses).toEqual(['queued', 'canceled']);
    expect(await waitForWatched(0)).toBe(0);
  });

  it('stops watching the job when the client goes away', async () => {
    const submitted = await submit(a.editor, 'test_noop', {});
    const server = http.createServer(t.app).listen(0, '127.0.0.1');
    try {
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      const req = http.get({
        host: '127.0.0.1',
        port,
        path: `/${a.site.slug}/jobs/${submitted.id}/events`,
        headers: a.editor.auth,
      });
      const [res] = (await once(req, 'response')) as [http.IncomingMessage];
      expect(res.statusCode).toBe(200);
      res.resume();
      expect(await waitForWatched(1)).toBe(1);
      req.destroy();
      expect(await waitForWatched(0)).toBe(0);
    } finally {
      server.closeAllConnections();
      server.close();
      await request(t.app).post(`/${a.site.slug}/jobs/${submitted.id}/cancel`).set(a.editor.auth).expect(200);
    }
  });
});

describe('access to the four endpoints', () => {
  const endpoints = (site: string, jobId: string) => [
    () => request(t.app).get(`/${site}/jobs/`),
    () => request(t.app).get(`/${site}/jobs/${jobId}`),
    () => request(t.app).post(`/${site}/jobs/${jobId}/cancel`),
    () => request(t.app).get(`/${site}/jobs/${jobId}/events`),
  ];

  it('is 401 without a token or with a bad one', async () => {
    const job = await newJob(t, a.site);
    for (const call of endpoints(a.site.slug, job.id)) {
      const res = await call().expect(401);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      await call().set('Authorization', 'Bearer not-a-token').expect(401);
    }
    expect((await readJob(t, job.id)).status).toBe('queued');
  });

  it('is 404 for another tenant’s site, by slug or id, and for its job under one’s own site', async () => {
    const job = await newJob(t, a.site);
    for (const site of [a.site.slug, a.site.id]) {
      for (const call of endpoints(site, job.id)) await call().set(b.editor.auth).expect(404);
      for (const call of endpoints(site, job.id)) await call().set(b.admin.auth).expect(404);
    }
    for (const call of endpoints(b.site.slug, job.id).slice(1)) await call().set(b.admin.auth).expect(404);
    expect((await readJob(t, job.id)).status).toBe('queued');
  });

  it('is 403 for a service account of the tenant lacking the jobs scopes', async () => {
    const job = await newJob(t, a.site);
    for (const call of endpoints(a.site.slug, job.id)) await call().set(noJobsScope).expect(403);
    expect((await readJob(t, job.id)).status).toBe('queued');
  });
});
