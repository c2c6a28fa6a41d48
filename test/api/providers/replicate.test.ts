// Replicate through the platform's HTTP API, against the fake written from
// Replicate's reference (test/helpers/fakes/replicate.ts): images and speech
// held under `Prefer: wait` and used at once, or finished by the signed
// webhook Replicate posts to PUBLIC_URL; video always by webhook (variant A).
// Each refusal the adapter reads fails the job at once in words of ours; a
// prediction that fails at Replicate fails the job in the webhook's
// transaction; 429, 5xx and no answer pass the job on, or have it retried
// after the wait when Replicate is the last; a cancel reaches Replicate; a
// duplicate webhook changes nothing, and one that comes before the
// prediction's id was recorded is answered 409 for Replicate to retry.
import request from 'supertest';
import { startFakeReplicate, type FakeReplicate } from '../../helpers/fakes/replicate.ts';
import { pollUntil } from '../../helpers/poll.ts';
import {
  expectPassedOnToLocal,
  expectRefused,
  jobWhen,
  ledgerKinds,
  mediaByName,
  providerCalls,
  providerSuite,
  readJob,
  realMedia,
  submit,
} from './harness.ts';

let fake: FakeReplicate;
beforeAll(async () => {
  fake = await startFakeReplicate();
});
const suite = providerSuite(() => ({
  IMAGE_PROVIDERS: 'replicate,local',
  REPLICATE_IMAGE_MODELS: 'black-forest-labs/flux-schnell,black-forest-labs/flux-dev',
  VIDEO_VARIANT_A_PROVIDERS: 'replicate',
  SPEECH_PROVIDERS: 'replicate,local',
  REPLICATE_BASE_URL: fake.url,
  REPLICATE_API_TOKEN: fake.token,
  // No REPLICATE_WEBHOOK_SECRET: the platform reads the account's from Replicate, as an operator's would.
}));
beforeAll(async () => {
  fake.media = mediaByName(await realMedia(suite.t.config));
});
afterEach(() => {
  fake.plans.length = 0;
  fake.answers.length = 0;
  fake.requests.length = 0;
  fake.mischief = {};
  fake.maxHoldMs = 60_000;
});
afterAll(() => fake.close());

const creates = () => fake.requests.filter((call) => call.method === 'POST' && call.path.endsWith('/predictions'));
/** The prediction Replicate runs for the job (its webhook names the job). */
const predictionFor = (jobId: string) =>
  pollUntil(
    async () => [...fake.predictions.values()].find((p) => p.webhook?.endsWith(`job=${jobId}`)),
    (found) => found !== undefined,
    { tries: 300, everyMs: 100 },
  ).then((found) => found!);
const deliveriesOf = (prediction: string) =>
  fake.deliveries.filter((delivery) => delivery.prediction === prediction).map((delivery) => delivery.answered);
const video = () => submit(suite, '/media/generatevideo-varianta', { prompt: 'A ferry crossing a grey sea.' });

describe('images', () => {
  it('makes images with flux-schnell held under Prefer: wait, asking for what the model takes', async () => {
    fake.plans.push({ status: 'succeeded' });
    const id = await submit(suite, '/media/generate', { prompt: 'A lighthouse', size: '1344x768' });
    expect(await jobWhen(suite, id)).toMatchObject({
      status: 'succeeded',
      output: { provider: 'replicate', model: 'black-forest-labs/flux-schnell', placeholder: false, count: 1 },
    });
    const [create] = creates();
    expect(create).toMatchObject({
      path: '/v1/models/black-forest-labs/flux-schnell/predictions',
      headers: { prefer: 'wait=50' },
      body: {
        input: { prompt: 'A lighthouse', aspect_ratio: '16:9', megapixels: '1', num_outputs: 1, output_format: 'png' },
        webhook: `${suite.publicUrl}/${suite.site.id}/media/webhook/mediaprovider?provider=replicate&job=${id}`,
        webhook_events_filter: ['completed'],
      },
    });
    expect(await providerCalls(suite, id)).toMatchObject([{ vendor: 'replicate', outcome: 'succeeded' }]);
  });

  it('waits for the webhook when the model outlasts the hold, and finishes the job from it', async () => {
    fake.maxHoldMs = 100;
    const id = await submit(suite, '/media/generate', { prompt: 'A lighthouse', count: 2 });
    expect(await jobWhen(suite, id, ['waiting'])).toMatchObject({ provider: 'replicate' });
    const prediction = await predictionFor(id);
    await fake.complete(prediction.id, { status: 'succeeded' });
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({ status: 'succeeded', output: { provider: 'replicate', count: 2 } });
    expect(done.media_ids).toHaveLength(2);
    expect(deliveriesOf(prediction.id)).toEqual([200]);
    expect(await providerCalls(suite, id)).toMatchObject([{ vendor: 'replicate', outcome: 'pending' }]);
  });

  it('uses a model the request names when the operator allows it, and refuses one it does not', async () => {
    fake.plans.push({ status: 'succeeded' });
    const id = await submit(suite, '/media/generate', { prompt: 'A fox', model: 'black-forest-labs/flux-dev' });
    expect(await jobWhen(suite, id)).toMatchObject({
      status: 'succeeded',
      output: { model: 'black-forest-labs/flux-dev' },
    });
    expect(creates().map((call) => call.path)).toEqual(['/v1/models/black-forest-labs/flux-dev/predictions']);

    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/generate`)
      .set(suite.author.auth)
      .send({ prompt: 'A fox', model: 'black-forest-labs/flux-1.1-pro' })
      .expect(422);
    expect(res.body.errors).toEqual([
      { path: 'body.model', message: 'one of black-forest-labs/flux-schnell, black-forest-labs/flux-dev, local' },
    ]);
  });

  // Replicate's error answers (its OpenAPI document's problem bodies, and those its clients observed).
  it.each([
    [401, 'Unauthenticated', 'You did not pass a valid authentication token', /refused the API token/],
    [
      402,
      'Payment Required',
      'You have insufficient credit to run this model. Go to https://replicate.com/account/billing to set up billing.',
      /no credit left/,
    ],
    [404, 'Not Found', 'Model not found: black-forest-labs/flux-schnell', /does not know this model/],
    [422, 'Input validation failed', '- input.prompt: Does not match pattern', /refused the input/],
  ])(
    'fails the job at once when Replicate answers %i, in plain words, its credits released',
    async (status, title, detail, words) => {
      fake.answers.push({ status, title, detail });
      const done = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }));
      await expectRefused(suite, done, words, detail);
      expect(await providerCalls(suite, done.id)).toMatchObject([
        { vendor: 'replicate', outcome: 'failed', error_code: 'provider_rejected', http_status: status },
      ]);
    },
  );

  it.each([
    [
      '429 with Retry-After',
      { status: 429 as const, retryAfterSeconds: 20, header: true, body: 'replicate' as const },
      429,
    ],
    [
      '429 naming its wait in the body only',
      { status: 429 as const, retryAfterSeconds: 20, header: false, body: 'rate-limit-doc' as const },
      429,
    ],
    ['429 naming no wait', { status: 429, title: 'Too Many Requests', detail: 'Request was throttled.' }, 429],
    ['503', { status: 503, title: 'Service Unavailable', detail: 'Replicate is down for maintenance.' }, 503],
  ])('passes the job to the next provider when Replicate answers %s', async (_, answer, status) => {
    fake.answers.push(answer);
    await expectPassedOnToLocal(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }), 'replicate', {
      code: 'provider_unavailable',
      status: status,
    });
  });

  it('passes the job on when Replicate does not answer within AI_TIMEOUT_MS', async () => {
    fake.answers.push({ hang: true });
    await suite.withWorker({ AI_TIMEOUT_MS: '1000' }, async () => {
      await expectPassedOnToLocal(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }), 'replicate', {
        code: 'provider_timeout',
      });
    });
  });
});

describe('speech', () => {
  it('speaks with MiniMax on Replicate, the audio back within the hold', async () => {
    fake.plans.push({ status: 'succeeded' });
    const id = await submit(suite, '/media/tts', { text: 'The ferry leaves at nine.', voice: 'male' });
    expect(await jobWhen(suite, id)).toMatchObject({
      status: 'succeeded',
      output: { provider: 'replicate', model: 'minimax/speech-02-hd', placeholder: false },
    });
    expect(creates()[0]).toMatchObject({
      path: '/v1/models/minimax/speech-02-hd/predictions',
      body: { input: { text: 'The ferry leaves at nine.', voice_id: 'Deep_Voice_Man', language_boost: 'English' } },
    });
  });

  it('refuses at submit a speech model the operator does not allow, naming those it does', async () => {
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/tts`)
      .set(suite.author.auth)
      .send({ text: 'Hello', model: 'minimax/speech-02-turbo' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.model', message: 'one of minimax/speech-02-hd, local' }]);
  });

  it('retries the job after the wait a 429 named when Replicate is the only provider left (the model named)', async () => {
    fake.answers.push({ status: 429, retryAfterSeconds: 2, header: true, body: 'replicate' });
    fake.plans.push({ status: 'succeeded' });
    const id = await submit(suite, '/media/tts', { text: 'Wait for it.', model: 'minimax/speech-02-hd' });
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, output: { provider: 'replicate' } });
    const [limited, spoke] = await providerCalls(suite, id);
    expect([limited, spoke]).toMatchObject([
      { vendor: 'replicate', outcome: 'failed', http_status: 429 },
      { vendor: 'replicate', outcome: 'succeeded' },
    ]);
    const retriedAfter = Date.parse(spoke!.started_at) - (Date.parse(limited!.started_at) + limited!.duration_ms);
    expect(retriedAfter).toBeGreaterThanOrEqual(1900);
  });
  it('tells the tenant a 5xx in words of ours while the job waits for its retry', async () => {
    const detail = 'upstream connect error or disconnect/reset before headers, reset reason: overflow';
    fake.answers.push({ status: 503, title: 'Service Unavailable', detail });
    fake.plans.push({ status: 'succeeded' });
    const id = await submit(suite, '/media/tts', { text: 'Again.', model: 'minimax/speech-02-hd' });
    const waiting = await pollUntil(
      () => readJob(suite, id),
      (job) => job.error !== null || job.status === 'succeeded',
      { tries: 300, everyMs: 50 },
    );
    expect(waiting).toMatchObject({
      status: 'queued',
      error: { code: 'provider_unavailable', message: 'Replicate answered 503.', transient: true },
    });
    expect(await jobWhen(suite, id)).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});

describe('video (variant A)', () => {
  it('asks Seedance for a clip without holding the request, and finishes the job from the webhook', async () => {
    const id = await video();
    expect(await jobWhen(suite, id, ['waiting'])).toMatchObject({ provider: 'replicate' });
    const [create] = creates();
    expect(create!.headers.prefer).toBeUndefined();
    expect(create).toMatchObject({
      path: '/v1/models/bytedance/seedance-1-pro-fast/predictions',
      body: { input: { prompt: 'A ferry crossing a grey sea.', aspect_ratio: '16:9', resolution: '720p' } },
    });
    const prediction = await predictionFor(id);
    await fake.complete(prediction.id, { status: 'succeeded' });
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { provider: 'replicate', model: 'bytedance/seedance-1-pro-fast', placeholder: false, codec: 'h264' },
    });
    expect(done.credits_charged).toBeGreaterThan(0);
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'debit', 'release']);
  });

  it('fails the job in the webhook’s transaction when the prediction fails, in words of ours, its credits released', async () => {
    const id = await video();
    const prediction = await predictionFor(id);
    await jobWhen(suite, id, ['waiting']);
    await fake.complete(prediction.id, { status: 'failed', error: 'CUDA error: out of memory' });
    expect(deliveriesOf(prediction.id)).toEqual([200]);
    const done = await readJob(suite, id);
    expect(done).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_failed', message: 'Replicate could not make the result.' },
    });
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
  });

  it('handles a webhook delivered twice once: one video, one debit', async () => {
    fake.mischief = { duplicate: true };
    const id = await video();
    const prediction = await predictionFor(id);
    await jobWhen(suite, id, ['waiting']);
    await fake.complete(prediction.id, { status: 'succeeded' });
    const done = await jobWhen(suite, id);
    expect(deliveriesOf(prediction.id)).toEqual([200, 200]);
    expect(done).toMatchObject({ status: 'succeeded', media_id: expect.any(String) });
    expect((await ledgerKinds(suite, id)).filter((kind) => kind === 'debit')).toHaveLength(1);
  });

  it('answers a webhook that comes before the prediction’s id was recorded 409, and takes Replicate’s retry', async () => {
    // Replicate ends the prediction, and posts (and retries) its webhook, before it answers the create call.
    fake.plans.push({ status: 'succeeded', early: true });
    const id = await video();
    expect(await jobWhen(suite, id, ['waiting'])).toMatchObject({ provider: 'replicate' });
    const prediction = await predictionFor(id);
    const early = deliveriesOf(prediction.id);
    expect(early.length).toBeGreaterThan(0);
    expect(new Set(early)).toEqual(new Set([409]));
    // Replicate's later retry of the same message is taken, and finishes the job; one more changes nothing.
    await fake.redeliver(prediction.id);
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({ status: 'succeeded', output: { provider: 'replicate' } });
    await fake.redeliver(prediction.id);
    expect(deliveriesOf(prediction.id).slice(early.length)).toEqual([200, 200]);
    expect((await ledgerKinds(suite, id)).filter((kind) => kind === 'debit')).toHaveLength(1);
    expect((await readJob(suite, id)).media_ids).toHaveLength(1);
  });

  it('cancels the prediction at Replicate when the job is canceled, and releases its credits', async () => {
    const id = await video();
    const prediction = await predictionFor(id);
    await jobWhen(suite, id, ['waiting']);
    const canceled = await request(suite.t.app)
      .post(`/${suite.site.slug}/jobs/${id}/cancel`)
      .set(suite.author.auth)
      .expect(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', credits_charged: 0 });
    const told = await pollUntil(
      async () => fake.requests.filter((call) => call.path === `/v1/predictions/${prediction.id}/cancel`),
      (calls) => calls.length > 0,
      { tries: 300, everyMs: 100 },
    );
    expect(told).toMatchObject([{ method: 'POST', headers: { authorization: `Bearer ${fake.token}` } }]);
    expect(prediction.status).toBe('canceled');
    // Replicate's `completed` webhook for the canceled prediction is acknowledged; the job stays canceled.
    await pollUntil(
      async () => deliveriesOf(prediction.id),
      (answered) => answered.length > 0,
      { tries: 300, everyMs: 100 },
    );
    expect(deliveriesOf(prediction.id)).toEqual([200]);
    expect(await readJob(suite, id)).toMatchObject({ status: 'canceled', media_ids: [] });
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
  });
});
