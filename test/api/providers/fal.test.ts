// fal through the platform's HTTP API, against the fake written from fal's
// reference (test/helpers/fakes/fal.ts): images and video (variant B) queued
// with our webhook and finished by fal's ED25519-signed delivery to
// PUBLIC_URL, the keys read from its JWKS. Each refusal the adapter reads
// fails the job at once in words of ours; a request that fails at fal fails
// the job in the webhook's transaction; 429, 5xx and no answer pass the job
// on, or have it retried after the wait when fal is the last; a cancel
// reaches fal's queue; a duplicate delivery changes nothing, and one that
// comes before the request's id was recorded is answered 409 for fal to
// deliver again.
import request from 'supertest';
import { infrastructureError, rateLimited, startFakeFal, type Answer, type FakeFal } from '../../helpers/fakes/fal.ts';
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

const kling = 'fal-ai/kling-video/v2.5-turbo/pro/text-to-video';
const seedance = 'fal-ai/bytedance/seedance/v1/pro/fast/text-to-video';

let fake: FakeFal;
beforeAll(async () => {
  fake = await startFakeFal({ retryDelayMs: 100, retries: 3 });
});
const suite = providerSuite(() => ({
  IMAGE_PROVIDERS: 'fal,local',
  FAL_IMAGE_MODELS: 'fal-ai/flux/schnell,fal-ai/flux/dev',
  VIDEO_VARIANT_B_PROVIDERS: 'fal',
  FAL_VIDEO_MODELS: `${kling},${seedance}`,
  FAL_KEY: fake.key,
  FAL_QUEUE_URL: fake.url,
  FAL_JWKS_URL: fake.jwksUrl,
}));
beforeAll(async () => {
  const media = mediaByName(await realMedia(suite.t.config));
  fake.media = (name) => (name.endsWith('.mp4') ? media(name) : undefined);
});
afterEach(() => {
  fake.answers.length = 0;
  fake.requests.length = 0;
  fake.completeOnSubmit = false;
});
afterAll(() => fake.close());

const submits = () => fake.requests.filter((call) => call.method === 'POST');
/** fal's id for the job's request (its webhook URL names the job). */
const requestFor = (jobId: string) =>
  pollUntil(
    async () => [...fake.queued.values()].find((queued) => queued.webhookUrl?.endsWith(`job=${jobId}`)),
    (found) => found !== undefined,
    { tries: 300, everyMs: 100 },
  ).then((found) => found!.id);
const deliveriesOf = (requestId: string) =>
  fake.deliveries.filter((delivery) => delivery.requestId === requestId).map((delivery) => delivery.status);
/** Submits, waits for the job to wait for fal, and answers fal's id for the work. */
async function queued(path: string, body: Record<string, unknown>) {
  const id = await submit(suite, path, body);
  expect(await jobWhen(suite, id, ['waiting'])).toMatchObject({ provider: 'fal' });
  return { id, requestId: await requestFor(id) };
}
const video = (body: Record<string, unknown> = {}) =>
  queued('/media/generatevideo-variantb', { prompt: 'A ferry crossing a grey sea.', ...body });

describe('images', () => {
  it('queues FLUX with the webhook, and finishes the job from fal’s signed delivery', async () => {
    const { id, requestId } = await queued('/media/generate', { prompt: 'A lighthouse', count: 2 });
    const [submitted] = submits();
    expect(submitted).toMatchObject({
      path: '/fal-ai/flux/schnell',
      headers: { authorization: `Key ${fake.key}` },
      body: { prompt: 'A lighthouse', image_size: 'square_hd', num_images: 2, output_format: 'png' },
    });
    expect(submitted!.query.get('fal_webhook')).toBe(
      `${suite.publicUrl}/${suite.site.id}/media/webhook/mediaprovider?provider=fal&job=${id}`,
    );
    expect(fake.queued.get(requestId)!.ignored).toEqual([]);
    expect(await fake.complete(requestId)).toMatchObject([{ status: 200 }]);
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { provider: 'fal', model: 'fal-ai/flux/schnell', placeholder: false, count: 2 },
    });
    expect(done.media_ids).toHaveLength(2);
    expect(await providerCalls(suite, id)).toMatchObject([{ vendor: 'fal', outcome: 'pending' }]);
  });

  it('uses a model the request names when the operator allows it, and refuses one it does not', async () => {
    await queued('/media/generate', { prompt: 'A fox', model: 'fal-ai/flux/dev' });
    expect(submits().map((call) => call.path)).toEqual(['/fal-ai/flux/dev']);
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/generate`)
      .set(suite.author.auth)
      .send({ prompt: 'A fox', model: 'fal-ai/flux-pro/v1.1' })
      .expect(422);
    expect(res.body.errors).toEqual([
      { path: 'body.model', message: 'one of fal-ai/flux/schnell, fal-ai/flux/dev, local' },
    ]);
  });

  // fal's error answers (DOC-ERR, DOC-REQERR; the bodies its clients observed), and what the tenant reads.
  const validation = (type: string, msg: string) => ({ detail: [{ loc: ['body', 'prompt'], msg, type }] });
  it.each([
    ['401, a key it does not know', 401, { detail: 'No user found for Key ID and Secret' }, {}, /refused the key/],
    ['404, a model it lacks', 404, { detail: 'Application "flux" not found' }, {}, /does not know this model/],
    [
      '422, the content policy',
      422,
      validation('content_policy_violation', 'The content could not be processed because it contained NSFW material.'),
      {},
      /under its content policy/,
    ],
    [
      '422, an input it refuses',
      422,
      validation('string_too_long', 'String should have at most 10000 characters'),
      {},
      /refused the request’s input/,
    ],
    [
      '500 it says not to retry',
      500,
      { detail: 'Internal error: the model crashed on this input' },
      { 'x-fal-retryable': 'false' },
      /refused the request \(500\)/,
    ],
  ])('fails the job at once on %s, in plain words, its credits released', async (_, status, body, headers, words) => {
    fake.answers.push({ status, body, headers });
    const done = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }));
    const vendorWords = typeof body.detail === 'string' ? body.detail : body.detail[0]!.msg;
    await expectRefused(suite, done, words, vendorWords);
    expect(await providerCalls(suite, done.id)).toMatchObject([
      { vendor: 'fal', outcome: 'failed', error_code: 'provider_rejected', http_status: status },
    ]);
  });

  it('fails the job in the webhook’s transaction when fal reports the request failed, its credits released', async () => {
    const { id, requestId } = await queued('/media/generate', { prompt: 'A harbour' });
    const failure = { status: 422, body: validation('image_generation_failed', 'The model ran out of memory.') };
    expect(await fake.complete(requestId, { fail: failure })).toMatchObject([{ status: 200 }]);
    const done = await readJob(suite, id);
    expect(done).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_failed', message: 'fal could not make the result.' },
    });
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
  });

  it.each<[string, Answer, number]>([
    ['429 with Retry-After', rateLimited(20), 429],
    ['429 without Retry-After', rateLimited(), 429],
    ['503, no runner', infrastructureError('runner_scheduling_failure'), 503],
    ['504, timed out', infrastructureError('request_timeout'), 504],
  ])('passes the job to the next provider when fal answers %s', async (_, answer, status) => {
    fake.answers.push(answer);
    await expectPassedOnToLocal(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }), 'fal', {
      code: 'provider_unavailable',
      status: status,
    });
  });

  it('passes the job on when fal does not answer within AI_TIMEOUT_MS', async () => {
    fake.answers.push({ hang: true });
    await suite.withWorker({ AI_TIMEOUT_MS: '1000' }, async () => {
      await expectPassedOnToLocal(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }), 'fal', {
        code: 'provider_timeout',
      });
    });
  });
});

describe('video (variant B)', () => {
  it('asks Kling for a clip of the length it makes, and finishes the job from the delivery', async () => {
    const { id, requestId } = await video();
    expect(submits()[0]).toMatchObject({
      path: `/${kling}`,
      body: { prompt: 'A ferry crossing a grey sea.', duration: '5', aspect_ratio: '16:9' },
    });
    expect(fake.queued.get(requestId)!.ignored).toEqual([]);
    await fake.complete(requestId);
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { provider: 'fal', model: kling, placeholder: false, codec: 'h264' },
    });
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'debit', 'release']);
  });

  it('uses a video model the request names when the operator allows it, and refuses one it does not', async () => {
    await video({ model: seedance });
    expect(submits()[0]).toMatchObject({
      path: `/${seedance}`,
      body: { aspect_ratio: '16:9', resolution: '720p' },
    });
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/generatevideo-variantb`)
      .set(suite.author.auth)
      .send({ prompt: 'A ferry.', model: 'fal-ai/veo3' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.model', message: `one of ${kling}, ${seedance}` }]);
  });

  it('retries the job after the wait a 429 named, since no provider follows', async () => {
    fake.answers.push(rateLimited(2));
    const id = await submit(suite, '/media/generatevideo-variantb', { prompt: 'A ferry.' });
    const requestId = await requestFor(id);
    await jobWhen(suite, id, ['waiting']);
    const [limited, queuedCall] = await providerCalls(suite, id);
    expect([limited, queuedCall]).toMatchObject([
      { vendor: 'fal', outcome: 'failed', http_status: 429 },
      { vendor: 'fal', outcome: 'pending' },
    ]);
    const retriedAfter = Date.parse(queuedCall!.started_at) - (Date.parse(limited!.started_at) + limited!.duration_ms);
    expect(retriedAfter).toBeGreaterThanOrEqual(1900);
    await fake.complete(requestId);
    expect(await jobWhen(suite, id)).toMatchObject({ status: 'succeeded', output: { provider: 'fal' } });
  });

  it('handles a delivery made twice once: one video, one debit', async () => {
    const { id, requestId } = await video();
    await fake.complete(requestId, { mode: 'duplicate' });
    const done = await jobWhen(suite, id);
    expect(deliveriesOf(requestId)).toEqual([200, 200]);
    expect(done).toMatchObject({ status: 'succeeded', media_id: expect.any(String) });
    expect((await ledgerKinds(suite, id)).filter((kind) => kind === 'debit')).toHaveLength(1);
  });

  it('answers a delivery that comes before the request’s id was recorded 409, and takes fal’s next one', async () => {
    // fal completes the request, and delivers (and retries) its webhook, before it answers the submit.
    fake.completeOnSubmit = true;
    const id = await submit(suite, '/media/generatevideo-variantb', { prompt: 'A ferry.' });
    await jobWhen(suite, id, ['waiting']);
    const requestId = await requestFor(id);
    const early = deliveriesOf(requestId);
    expect(early.length).toBeGreaterThan(0);
    expect(new Set(early)).toEqual(new Set([409]));
    // fal delivers again later (DOC-WH "Retry policy"): taken, and the job finishes.
    await fake.complete(requestId);
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({ status: 'succeeded', output: { provider: 'fal' } });
    expect(deliveriesOf(requestId).slice(early.length)).toEqual([200]);
    expect((await ledgerKinds(suite, id)).filter((kind) => kind === 'debit')).toHaveLength(1);
  });

  it('cancels the request on fal’s queue when the job is canceled, and releases its credits', async () => {
    const { id, requestId } = await video();
    const canceled = await request(suite.t.app)
      .post(`/${suite.site.slug}/jobs/${id}/cancel`)
      .set(suite.author.auth)
      .expect(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', credits_charged: 0 });
    const told = await pollUntil(
      async () => fake.requests.filter((call) => call.method === 'PUT'),
      (calls) => calls.length > 0,
      { tries: 300, everyMs: 100 },
    );
    // DOC-Q: cancel is on the app's path, without the model's subpath.
    expect(told).toMatchObject([
      { path: `/fal-ai/kling-video/requests/${requestId}/cancel`, headers: { authorization: `Key ${fake.key}` } },
    ]);
    expect(fake.queued.get(requestId)!.canceled).toBe(true);
    expect(await readJob(suite, id)).toMatchObject({ status: 'canceled', media_ids: [] });
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
  });
});
