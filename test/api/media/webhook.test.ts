// POST /{site}/media/webhook/mediaprovider?provider=replicate|fal&job=<id>:
// where the vendors that take work and call back deliver it. Replicate
// (speech with minimax/speech-02-hd, video with seedance) and fal (images with
// FLUX schnell) run as their strict fakes, which post signed webhooks to the
// app listening on 127.0.0.1 with their mischief: duplicates, late events,
// wrong signatures, stale timestamps, a webhook before the create call has
// returned. The guarantees: the signature is checked before anything is read;
// each event is handled once, however many copies arrive at once; a result
// that comes too early is answered 409 (retried by the vendor) and accepted
// when delivered again; progress and results for work the job no longer waits
// for are acknowledged and ignored; a failure settles the job in the
// webhook's own transaction, its credits released; a success is finished by a
// worker (fetched, encoded, stored, debited once).
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { z } from 'zod';
import { readBalance, userAccount } from '../../../core/credits/accounts.ts';
import type { JobRow } from '../../../core/jobs/model.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { probe } from '../../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import { startFakeFal, type FakeFal } from '../../helpers/fakes/fal.ts';
import { signWebhook, startFakeReplicate, type FakeReplicate } from '../../helpers/fakes/replicate.ts';
import { giveCredits, ledgerFor, localFile, newJob, readJob, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { startListeningApp, testClip, toneMp3, type ListeningApp } from '../../helpers/media.ts';
import { pollUntil } from '../../helpers/poll.ts';

const finished = ['succeeded', 'failed', 'canceled'] as const;
// 24 characters, which Replicate's speech model bills (REPLICATE_SPEECH_PRICES below: 100 credits per 1,000): 3 credits.
const text = 'Hello from the provider.';
const estimate = Math.ceil((100 * text.length) / 1000);
const speechModel = 'minimax/speech-02-hd';

let replicate: FakeReplicate;
let fal: FakeFal;
let listening: ListeningApp;
let t: TestApp;
let env: Record<string, string>;
let worker: WorkerHandle;

beforeAll(async () => {
  replicate = await startFakeReplicate();
  fal = await startFakeFal({ retries: 1, retryDelayMs: 20 });
  const vendors = {
    SPEECH_PROVIDERS: 'replicate',
    VIDEO_PROVIDERS: 'replicate',
    IMAGE_PROVIDERS: 'fal',
    // No REPLICATE_WEBHOOK_SECRET: the account's is read from Replicate, once.
    REPLICATE_API_TOKEN: replicate.token,
    REPLICATE_BASE_URL: replicate.url,
    FAL_KEY: fal.key,
    FAL_QUEUE_URL: fal.url,
    FAL_JWKS_URL: fal.jwksUrl,
    // Each model at a price the assertions below reckon with.
    REPLICATE_SPEECH_PRICES: `${speechModel}=100`,
    REPLICATE_VIDEO_PRICES: 'bytedance/seedance-1-pro-fast=5',
    FAL_IMAGE_PRICES: 'fal-ai/flux/schnell=10',
  };
  // Every fake delivers from 127.0.0.1: its refused signatures must not use up the per-address allowance.
  listening = await startListeningApp({ ...vendors, RATE_LIMIT_WEBHOOK_FAILURES_PER_IP: '100000' });
  t = listening.t;
  env = { ...vendors, PUBLIC_URL: listening.publicUrl };
  worker = await startTestWorker(t, env);
  // What the models' files hold: real audio and video, which the platform decodes.
  const [mp3, clip] = await Promise.all([toneMp3(t.config, 2), testClip(t.config, 2)]);
  replicate.media = (name) => (name.endsWith('.mp3') ? mp3 : name.endsWith('.mp4') ? clip : undefined);
});
afterEach(() => {
  replicate.mischief = {};
  replicate.retryDelaysMs = [100, 200, 400];
  replicate.plans.length = 0;
  fal.completeOnSubmit = false;
});
afterAll(async () => {
  await worker?.stop();
  await listening?.close();
  await replicate?.close();
  await fal?.close();
});

type World = { site: Site; user: Caller };

async function world(credits = 100): Promise<World> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const user = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, credits, user.user.id);
  return { site, user };
}

const hook = (siteIdentifier: string, query: string) => `/${siteIdentifier}/media/webhook/mediaprovider?${query}`;

/** Submits speech and waits for the worker to hand it to Replicate: the job waiting for the prediction. */
async function handedOver({ site, user }: World) {
  // Replicate holds the create call (Prefer: wait) for a tenth of a second, then answers it still running.
  replicate.maxHoldMs = 100;
  const res = await request(t.app).post(`/${site.slug}/media/tts`).set(user.auth).send({ text }).expect(202);
  expect(res.body).toMatchObject({
    status: 'queued',
    credits_reserved: estimate,
    input: { providers: [{ vendor: 'replicate', model: speechModel }] },
  });
  const job = await waitForJob(t, res.body.id, ['waiting', ...finished]);
  expect(job).toMatchObject({ status: 'waiting', provider: 'replicate', attempts: 1, provider_result: null });
  const prediction = replicate.predictions.get(job.provider_ref!)!;
  expect(prediction).toMatchObject({ model: speechModel, status: 'starting' });
  return { job, ref: job.provider_ref!, prediction };
}

/** A delivery as Replicate signs one (Standard Webhooks), for the bodies and ids a test makes itself. */
function signed(body: unknown, options: { id?: string; timestamp?: number; secret?: string } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(options.secret ?? replicate.secret, id, timestamp, raw),
    } as Record<string, string>,
  };
}

/** A prediction as Replicate's webhook carries it (the fields the platform reads). */
const prediction = (id: string, status: string, extra: Record<string, unknown> = {}) => ({
  id,
  status,
  output: null,
  error: null,
  ...extra,
});

const succeeded = (ref: string) =>
  prediction(ref, 'succeeded', { output: `${replicate.url}/delivery/${ref}/output.mp3` });

/** POSTs a signed delivery to a site's Replicate webhook, exactly the bytes signed. */
const deliver = (siteIdentifier: string, delivery: { raw: string; headers: Record<string, string> }, jobId?: string) =>
  request(t.app)
    .post(hook(siteIdentifier, `provider=replicate${jobId ? `&job=${jobId}` : ''}`))
    .set(delivery.headers)
    .send(delivery.raw);

const recorded = (source: string, eventId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from webhook_events where source = ${source} and event_id = ${eventId}`);

const deliveriesOf = (ref: string) => replicate.deliveries.filter((delivery) => delivery.prediction === ref);

const balanceOf = async ({ site, user }: World) =>
  readBalance(t.services.db, await userAccount(t.services.db, site, user.user.id));

const mediaRow = z.object({
  storage_key: z.string(),
  mime_type: z.string(),
  duration_seconds: z.number().nullable(),
  kind: z.string(),
  status: z.string(),
});

/** The job unchanged by a delivery that must not touch it. */
async function expectUnchanged(before: JobRow) {
  expect(await readJob(t, before.id)).toEqual(before);
}

describe('Replicate', () => {
  it('is handed the speech with the webhook naming the site and the job; its signed webhook finishes it: audio fetched, stored, debited once', async () => {
    const w = await world();
    const { job, ref, prediction: created } = await handedOver(w);
    expect(created.webhook).toBe(`${listening.publicUrl}${hook(w.site.id, `provider=replicate&job=${job.id}`)}`);
    const create = replicate.requests.find((r) => r.method === 'POST' && r.path.endsWith('/predictions'));
    expect(create).toMatchObject({
      path: `/v1/models/${speechModel}/predictions`,
      headers: { authorization: `Bearer ${replicate.token}`, prefer: 'wait=50' },
      body: {
        input: { text, voice_id: 'Wise_Woman', speed: 1, language_boost: 'English' },
        webhook: created.webhook,
        webhook_events_filter: ['completed'],
      },
    });
    expect(job.stage).toBe('waiting for the provider');
    expect(await ledgerFor(t, job.id)).toEqual([{ kind: 'reservation', amount: 0, reserved_change: estimate }]);

    await replicate.complete(ref, { status: 'succeeded' });
    expect(deliveriesOf(ref).map((d) => [d.event, d.answered])).toEqual([['completed', 200]]);
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done).toMatchObject({ status: 'succeeded', provider: 'replicate', attempts: 2, error: null });
    expect(done.output).toMatchObject({ provider: 'replicate', model: speechModel, placeholder: false, format: 'mp3' });
    // The output file was fetched from Replicate with the token, as its files need.
    expect(replicate.requests.find((r) => r.path === `/delivery/${ref}/output.mp3`)?.headers.authorization).toBe(
      `Bearer ${replicate.token}`,
    );
    const media = await t.services.db.one(sql.type(mediaRow)`
      select storage_key, mime_type, duration_seconds, kind, status from media_items where id = ${done.media_id}`);
    expect(media).toMatchObject({ kind: 'audio', status: 'ready', mime_type: 'audio/mpeg' });
    const probed = await probe(t.config, localFile(t, media.storage_key));
    expect(probed.formatName).toBe('mp3');
    expect(probed.durationSeconds).toBeGreaterThanOrEqual(1.9);
    expect(probed.durationSeconds).toBeLessThanOrEqual(2.3);
    // By the characters spoken, whatever the audio's length.
    const charged = estimate;
    expect(done.credits_charged).toBe(charged);
    expect((await ledgerFor(t, job.id)).filter((entry) => entry.kind === 'debit')).toEqual([
      { kind: 'debit', amount: -charged, reserved_change: -charged },
    ]);
    expect(await balanceOf(w)).toEqual({ balance: 100 - charged, reserved: 0, available: 100 - charged });
    expect(
      await t.services.db.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
        select outcome from job_attempts where job_id = ${job.id} order by attempt`),
    ).toEqual(['waiting', 'succeeded']);
  });

  it('answers a repeated webhook-id 200 duplicate and changes nothing; another event for the finished job is ignored', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    // Replicate sends the same message twice (its webhook docs: identical webhooks can come more than once).
    replicate.mischief = { duplicate: true };
    await replicate.complete(ref, { status: 'succeeded' });
    const [first, again] = deliveriesOf(ref);
    expect([first!.answered, again!.answered]).toEqual([200, 200]);
    expect(again!.webhookId).toBe(first!.webhookId);
    expect(await recorded('replicate', first!.webhookId)).toBe(1);
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done.status).toBe('succeeded');

    // After it finished, the same message once more.
    const late = await deliver(w.site.slug, signed(succeeded(ref), { id: first!.webhookId }), job.id).expect(200);
    expect(late.body).toEqual({ received: true, outcome: 'duplicate', job_id: null });
    // Other events for the same work, a success or a failure: acknowledged, ignored.
    for (const body of [succeeded(ref), prediction(ref, 'failed', { error: 'late' })]) {
      const other = await deliver(w.site.slug, signed(body), job.id).expect(200);
      expect(other.body).toEqual({ received: true, outcome: 'ignored', job_id: job.id });
    }
    await expectUnchanged(done);
    expect((await ledgerFor(t, job.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
    expect(await balanceOf(w)).toEqual({
      balance: 100 - done.credits_charged,
      reserved: 0,
      available: 100 - done.credits_charged,
    });
  });

  it('acknowledges and ignores progress, and an event that comes after completed (out of order)', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    const progress = await deliver(w.site.slug, signed(prediction(ref, 'processing')), job.id).expect(200);
    expect(progress.body).toEqual({ received: true, outcome: 'ignored', job_id: job.id });
    await expectUnchanged(job);

    // An `output` event after `completed`: no order is promised.
    replicate.mischief = { late: 'output' };
    await replicate.complete(ref, { status: 'succeeded' });
    expect(deliveriesOf(ref).map((d) => [d.event, d.answered])).toEqual([
      ['completed', 200],
      ['output', 200],
    ]);
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await ledgerFor(t, job.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  });

  it('completes the job exactly once under concurrent deliveries, copies of one message and conflicting ones', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    // The prediction ends at Replicate, but its own webhook is refused (a wrong signature) and not retried:
    // the test delivers the message itself, eight times at once.
    replicate.mischief = { signature: 'wrong' };
    replicate.retryDelaysMs = [];
    await replicate.complete(ref, { status: 'succeeded' });
    expect(deliveriesOf(ref).map((d) => d.answered)).toEqual([401]);
    const message = deliveriesOf(ref)[0]!.webhookId;
    const deliveries = Array.from({ length: 8 }, (_, i) =>
      i % 2 === 0 ? signed(succeeded(ref), { id: message }) : signed(prediction(ref, 'failed', { error: `race ${i}` })),
    );
    const answers = await Promise.all(deliveries.map((delivery) => deliver(w.site.slug, delivery, job.id)));
    expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));
    const outcomes = answers.map((res) => res.body.outcome as string);
    // One acts; the other three copies of the message are duplicates; whatever came after the one that acted is ignored.
    expect(outcomes.filter((outcome) => outcome === 'accepted' || outcome === 'failed')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === 'ignored')).toHaveLength(4);
    const done = await waitForJob(t, job.id, [...finished]);
    const debits = (await ledgerFor(t, job.id)).filter((entry) => entry.kind === 'debit');
    if (outcomes.includes('accepted')) {
      expect(done.status).toBe('succeeded');
      expect(debits).toHaveLength(1);
    } else {
      expect(done).toMatchObject({ status: 'failed', error: { code: 'provider_failed' } });
      expect(debits).toHaveLength(0);
    }
    expect((await balanceOf(w)).reserved).toBe(0);
  });

  it('settles a failure in the webhook’s own transaction: provider_failed in plain words, credits released', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    await replicate.complete(ref, { status: 'failed', error: 'CUDA out of memory' });
    expect(deliveriesOf(ref).map((d) => d.answered)).toEqual([200]);
    // Settled by the time the webhook was answered: no worker ran for it.
    const done = await readJob(t, job.id);
    expect(done).toMatchObject({
      status: 'failed',
      attempts: 1,
      credits_charged: 0,
      media_id: null,
      error: { code: 'provider_failed', message: 'Replicate could not make the result.', transient: false },
    });
    expect(done.finished_at).not.toBeNull();
    expect(await ledgerFor(t, job.id)).toEqual([
      { kind: 'reservation', amount: 0, reserved_change: estimate },
      { kind: 'release', amount: 0, reserved_change: -estimate },
    ]);
    expect(await balanceOf(w)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });

  it('fails the job at once when the delivered output cannot be used: a file elsewhere (not fetched), none, or not audio', async () => {
    const w = await world();
    const cases = [
      // Another host than Replicate's: accepted, and its file never fetched.
      {
        output: `http://127.0.0.2:${new URL(replicate.url).port}/delivery/x/output.mp3`,
        outcome: 'accepted',
      },
      // No output at all (Replicate removes it after an hour): failed in the webhook, never handed to Replicate again.
      { output: null, outcome: 'failed' },
    ];
    for (const { output, outcome } of cases) {
      const { job, ref } = await handedOver(w);
      const before = replicate.requests.length;
      const res = await deliver(w.site.slug, signed(prediction(ref, 'succeeded', { output })), job.id).expect(200);
      expect(res.body).toEqual({ received: true, outcome, job_id: job.id });
      const done = await waitForJob(t, job.id, [...finished]);
      expect(replicate.requests.slice(before).filter((r) => r.path.endsWith('/predictions'))).toEqual([]);
      expect(done).toMatchObject({
        status: 'failed',
        credits_charged: 0,
        media_id: null,
        error: { code: 'provider_invalid_response', transient: false },
      });
      expect(replicate.requests.slice(before).filter((r) => r.path.startsWith('/delivery/'))).toEqual([]);
    }
    // A file that is no audio (a model whose file the fake does not fill): fails at once, not after retries.
    const { job, ref } = await handedOver(w);
    const saved = replicate.media;
    replicate.media = undefined;
    try {
      await replicate.complete(ref, { status: 'succeeded' });
    } finally {
      replicate.media = saved;
    }
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done).toMatchObject({
      status: 'failed',
      attempts: 2,
      credits_charged: 0,
      error: { code: 'provider_invalid_response', transient: false },
    });
    expect(await balanceOf(w)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });

  it('tells Replicate when a waiting job is canceled, and ignores the canceled prediction’s webhook', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    const canceled = await request(t.app)
      .post(`/${w.site.slug}/jobs/${job.id}/cancel`)
      .set(w.user.auth)
      .send({})
      .expect(200);
    expect(canceled.body.status).toBe('canceled');
    const told = await pollUntil(
      async () => deliveriesOf(ref),
      (found) => found.length > 0,
      { tries: 300, everyMs: 50 },
    );
    expect(replicate.requests.some((r) => r.method === 'POST' && r.path === `/v1/predictions/${ref}/cancel`)).toBe(
      true,
    );
    expect(told.map((d) => d.answered)).toEqual([200]);
    const res = await deliver(w.site.slug, signed(succeeded(ref)), job.id).expect(200);
    expect(res.body).toEqual({ received: true, outcome: 'ignored', job_id: job.id });
    expect(await readJob(t, job.id)).toMatchObject({
      status: 'canceled',
      credits_charged: 0,
      media_id: null,
      provider_result: null,
    });
    expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(await balanceOf(w)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });

  it('answers a webhook that comes before the worker recorded the prediction’s id 409 (Replicate retries), and accepts it delivered again', async () => {
    const w = await world();
    // The video prediction ends, and its webhook goes out, before Replicate has answered the create call.
    replicate.plans.push({ status: 'succeeded', early: true });
    const res = await request(t.app)
      .post(`/${w.site.slug}/media/generatevideo`)
      .set(w.user.auth)
      .send({ prompt: 'A storm over the sea.' })
      .expect(202);
    const waiting = await waitForJob(t, res.body.id, ['waiting', ...finished]);
    expect(waiting).toMatchObject({ status: 'waiting', provider: 'replicate' });
    const ref = waiting.provider_ref!;
    expect(deliveriesOf(ref).map((d) => d.answered)).toEqual([409, 409, 409, 409]);
    expect(await recorded('replicate', deliveriesOf(ref)[0]!.webhookId)).toBe(0);
    // Replicate's next retry comes once the job waits for it.
    await replicate.redeliver(ref);
    expect(deliveriesOf(ref).at(-1)!.answered).toBe(200);
    const done = await waitForJob(t, res.body.id, [...finished]);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { provider: 'replicate', model: 'bytedance/seedance-1-pro-fast', placeholder: false },
    });
    expect((await ledgerFor(t, done.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  });

  it('says when to deliver again (Retry-After) while the job runs without the vendor’s id, and records nothing', async () => {
    const w = await world();
    const running = await newJob(t, w.site, { userId: w.user.user.id, status: 'running' });
    const early = signed(prediction('r8-not-recorded-yet', 'failed', { error: 'x' }));
    const res = await deliver(w.site.slug, early, running.id).expect(409);
    expect(res.headers['retry-after']).toBe('2');
    expect(await recorded('replicate', early.headers['webhook-id']!)).toBe(0);
    // Without the job in its URL the same delivery is simply unknown.
    await deliver(w.site.slug, early).expect(404);
  });

  it('ignores the webhook of work answered at once (within Prefer: wait): the job no longer waits for it', async () => {
    const w = await world();
    replicate.plans.push({ status: 'succeeded', early: true });
    const res = await request(t.app).post(`/${w.site.slug}/media/tts`).set(w.user.auth).send({ text }).expect(202);
    const done = await waitForJob(t, res.body.id, [...finished]);
    // Replicate answered the create call with the finished prediction: no waiting.
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, provider_ref: null });
    const ref = [...replicate.predictions.values()].at(-1)!.id;
    // Its webhook went out while the job ran (409s); delivered now, it is acknowledged and ignored.
    expect(deliveriesOf(ref).every((d) => d.answered === 409)).toBe(true);
    const late = await deliver(w.site.slug, signed(succeeded(ref)), done.id).expect(200);
    expect(late.body).toEqual({ received: true, outcome: 'ignored', job_id: done.id });
    await expectUnchanged(done);
  });
});

describe('Replicate deliveries refused', () => {
  it.each([
    ['a wrong signature', { signature: 'wrong' as const }],
    ['a stale timestamp', { timestampOffsetSeconds: -10 * 60 }],
  ])('answers %s 401, retried by Replicate, changing nothing until one verifies', async (_name, mischief) => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    replicate.mischief = mischief;
    await replicate.complete(ref, { status: 'succeeded' });
    expect(deliveriesOf(ref).map((d) => d.answered)).toEqual([401, 401, 401, 401]);
    expect(await recorded('replicate', deliveriesOf(ref)[0]!.webhookId)).toBe(0);
    await expectUnchanged(job);
    replicate.mischief = {};
    await replicate.redeliver(ref);
    expect(deliveriesOf(ref).at(-1)!.answered).toBe(200);
    expect((await waitForJob(t, job.id, [...finished])).status).toBe('succeeded');
  });

  it('answers 401 to a tampered body, a future timestamp, missing headers or another version, recording none', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    const body = prediction(ref, 'failed', { error: 'x' });

    const wrongKey = signed(body, { secret: `whsec_${Buffer.from('another secret 0123456789').toString('base64')}` });
    const res = await deliver(w.site.slug, wrongKey, job.id).expect(401);
    expect(res.body).toMatchObject({ status: 401, type: expect.stringMatching(/invalid-signature$/) });
    // Signed, then the body changed.
    const tampered = signed(body);
    await deliver(w.site.slug, { ...tampered, raw: tampered.raw.replace('"failed"', '"succeeded"') }, job.id).expect(
      401,
    );
    const future = signed(body, { timestamp: Math.floor(Date.now() / 1000) + 600 });
    await deliver(w.site.slug, future, job.id).expect(401);
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const delivery = signed(body);
      delete delivery.headers[header];
      const missing = await deliver(w.site.slug, delivery, job.id).expect(401);
      expect(missing.body.type).toMatch(/invalid-signature$/);
    }
    const unversioned = signed(body);
    unversioned.headers['webhook-signature'] = unversioned.headers['webhook-signature']!.replace(/^v1,/, 'v2,');
    await deliver(w.site.slug, unversioned, job.id).expect(401);
    for (const delivery of [wrongKey, tampered, future])
      expect(await recorded('replicate', delivery.headers['webhook-id']!)).toBe(0);
    await expectUnchanged(job);
  });

  it('accepts a delivery when one of several signatures matches (a rotated secret)', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    const delivery = signed(prediction(ref, 'failed', { error: 'rotated' }));
    delivery.headers['webhook-signature'] =
      `v1,${Buffer.alloc(32).toString('base64')} ${delivery.headers['webhook-signature']}`;
    await deliver(w.site.slug, delivery, job.id).expect(200, { received: true, outcome: 'failed', job_id: job.id });
  });

  it('answers 422 to a signed body that is not a prediction, JSON or not, recording none', async () => {
    const w = await world();
    const { job, ref } = await handedOver(w);
    const cases = [
      signed({ status: 'succeeded', output: 'x' }),
      signed({ id: ref, status: 'done' }),
      signed('{"id": '),
    ];
    for (const delivery of cases) {
      await deliver(w.site.slug, delivery, job.id).expect(422);
      expect(await recorded('replicate', delivery.headers['webhook-id']!)).toBe(0);
    }
    await expectUnchanged(job);
  });

  it('checks the signature before reading the body: an unsigned body that is not JSON is a 401', async () => {
    const w = await world();
    const res = await deliver(w.site.slug, {
      raw: '{"id": ',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_garbled',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
    });
    expect(res.status).toBe(401);
    expect(res.body.type).toMatch(/invalid-signature$/);
  });

  it('answers 404 to an unknown prediction or another site’s job, recording nothing, and handles the same id corrected', async () => {
    const w = await world();
    const other = await world();
    const { job, ref } = await handedOver(w);
    const unknown = signed(prediction('r8-nobody', 'failed', { error: 'x' }));
    await deliver(w.site.slug, unknown).expect(404);
    expect(await recorded('replicate', unknown.headers['webhook-id']!)).toBe(0);
    // The right prediction at another site's webhook (even naming the job) is not found either.
    const wrongSite = signed(prediction(ref, 'failed', { error: 'x' }));
    await deliver(other.site.slug, wrongSite, job.id).expect(404);
    await deliver('no-such-site', wrongSite).expect(404);
    expect(await recorded('replicate', wrongSite.headers['webhook-id']!)).toBe(0);
    await expectUnchanged(job);
    // A corrected delivery under the same id is still handled.
    const corrected = signed(prediction(ref, 'failed', { error: 'boom' }), { id: unknown.headers['webhook-id']! });
    await deliver(w.site.slug, corrected).expect(200, { received: true, outcome: 'failed', job_id: job.id });
    expect(await recorded('replicate', unknown.headers['webhook-id']!)).toBe(1);
    expect(await readJob(t, job.id)).toMatchObject({ status: 'failed', error: { code: 'provider_failed' } });
  });

  it('speaks no other protocol: a delivery naming no vendor, or the retired mediaprovider one, is a 422', async () => {
    const w = await world();
    const delivery = signed({ job_ref: 'prov-1', status: 'failed' });
    for (const query of ['', 'provider=mediaprovider'])
      await request(t.app).post(hook(w.site.slug, query)).set(delivery.headers).send(delivery.raw).expect(422);
  });

  it('answers 404 for a vendor not configured here (no token, no signing secret): no job can wait for it', async () => {
    const bare = await startTestApp();
    try {
      const tenant = await newTenant(bare);
      const site = await newSite(bare, tenant);
      const delivery = signed(prediction('r8-x', 'failed'));
      const res = await request(bare.app)
        .post(hook(site.slug, 'provider=replicate'))
        .set(delivery.headers)
        .send(delivery.raw)
        .expect(404);
      expect(res.body.detail).toMatch(/not configured/);
    } finally {
      await stopTestApp(bare);
    }
  });

  it('keeps JSON bodies parsed for a site whose slug is webhook', async () => {
    const tenant = await newTenant(t);
    const site = await newSite(t, tenant, 'webhook');
    const admin = await signedIn(t, { tenant, role: 'admin' });
    await request(t.app)
      .put(`/${site.slug}/transactions/cost-settings`)
      .set(admin.auth)
      .send({ settings: [{ kind: 'speech', price: 2 }] })
      .expect(200);
  });
});

describe('fal', () => {
  /** Submits two images and waits for the worker to queue them at fal: the job waiting for fal's request. */
  async function queuedAtFal({ site, user }: World) {
    const res = await request(t.app)
      .post(`/${site.slug}/media/generate`)
      .set(user.auth)
      .send({ prompt: 'Two foxes', size: '1024x768', count: 2 })
      .expect(202);
    const job = await waitForJob(t, res.body.id, ['waiting', ...finished]);
    expect(job).toMatchObject({ status: 'waiting', provider: 'fal', provider_result: null });
    return { job, ref: job.provider_ref! };
  }

  it('queues the images with fal’s webhook, and its signed delivery finishes them, debited once', async () => {
    const w = await world();
    const { job, ref } = await queuedAtFal(w);
    const queued = fal.queued.get(ref)!;
    expect(queued).toMatchObject({
      model: 'fal-ai/flux/schnell',
      input: { prompt: 'Two foxes', image_size: 'landscape_4_3', num_images: 2, output_format: 'png' },
      webhookUrl: `${listening.publicUrl}${hook(w.site.id, `provider=fal&job=${job.id}`)}`,
      ignored: [],
    });
    const sent = await fal.complete(ref);
    expect(sent.map((s) => s.status)).toEqual([200]);
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done).toMatchObject({
      status: 'succeeded',
      credits_charged: 20,
      output: { provider: 'fal', model: 'fal-ai/flux/schnell', placeholder: false, count: 2 },
    });
    expect(done.media_ids).toHaveLength(2);
    expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);
  });

  it('handles a repeated delivery once: the copy is answered 200 and changes nothing', async () => {
    const w = await world();
    const { job, ref } = await queuedAtFal(w);
    const sent = await fal.complete(ref, { mode: 'duplicate' });
    expect(sent.map((s) => s.status)).toEqual([200, 200]);
    const done = await waitForJob(t, job.id, [...finished]);
    expect(done.status).toBe('succeeded');
    expect(await recorded('fal', `${ref}:OK`)).toBe(1);
    expect((await ledgerFor(t, job.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  });

  it.each([
    ['a wrong signature', 'bad-signature' as const],
    ['a stale timestamp', 'stale' as const],
    ['a key not in fal’s JWKS', 'unknown-key' as const],
  ])('answers %s 401, retried by fal, changing nothing until one verifies', async (_name, mode) => {
    const w = await world();
    const { job, ref } = await queuedAtFal(w);
    const refused = await fal.complete(ref, { mode });
    expect(refused.map((s) => s.status)).toEqual([401, 401]);
    expect(await recorded('fal', `${ref}:OK`)).toBe(0);
    await expectUnchanged(job);
    expect((await fal.complete(ref)).map((s) => s.status)).toEqual([200]);
    expect((await waitForJob(t, job.id, [...finished])).status).toBe('succeeded');
  });

  it('settles fal’s failure in the webhook’s own transaction, credits released', async () => {
    const w = await world();
    const { job, ref } = await queuedAtFal(w);
    const sent = await fal.complete(ref, {
      fail: { status: 422, body: { detail: [{ loc: ['body', 'prompt'], msg: 'Unsafe prompt', type: 'value_error' }] } },
    });
    expect(sent.map((s) => s.status)).toEqual([200]);
    expect(await readJob(t, job.id)).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_failed', message: 'fal could not make the result.' },
    });
    expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(await balanceOf(w)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });
});
