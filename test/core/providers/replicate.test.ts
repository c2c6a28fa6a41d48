// The Replicate adapters against the Replicate fake, over real HTTP: what
// they ask of Replicate passes its checks, its answers and errors come back as
// results and JobErrors, and its webhooks — received here as the platform's
// route would, the raw body handed to `verify` — read as deliveries, however
// often and in whatever order they come.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPending, type Call, type VendorSettings } from '../../../core/providers/capabilities.ts';
import { JobError } from '../../../core/jobs/errors.ts';
import { Problem } from '../../../core/errors.ts';
import type { Delivery } from '../../../core/providers/webhooks.ts';
import { replicateImages } from '../../../core/providers/replicate/images.ts';
import { replicateVideo } from '../../../core/providers/replicate/video.ts';
import { replicateSpeech } from '../../../core/providers/replicate/speech.ts';
import { replicateWebhooks } from '../../../core/providers/replicate/webhooks.ts';
import { replicateModels } from '../../../core/providers/replicate/models.ts';
import { makesSize } from '../../../core/providers/models.ts';
import {
  communityVersion,
  signWebhook,
  startFakeReplicate,
  type FakeReplicate,
} from '../../helpers/fakes/replicate.ts';
import { pollUntil } from '../../helpers/poll.ts';

type Received = { delivery?: Delivery; refused?: Problem; headers: Record<string, string | undefined> };

let fake: FakeReplicate;
let settings: VendorSettings;
let webhooks: ReturnType<typeof replicateWebhooks>;
let receiver: http.Server;
let receiverUrl: string;
let received: Received[];

// What the platform's webhook route does with a Replicate delivery: verify the raw body, answer 2xx, or the Problem's status.
async function receive(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = req.headers as Record<string, string | undefined>;
  try {
    received.push({ delivery: await webhooks.verify(headers, Buffer.concat(chunks)), headers });
    res.writeHead(200).end();
  } catch (error) {
    if (!(error instanceof Problem)) throw error;
    received.push({ refused: error, headers });
    res.writeHead(error.status).end();
  }
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => void receive(req, res));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(
  () =>
    new Promise((resolve) => {
      receiver.close(resolve);
      receiver.closeAllConnections();
    }),
);

beforeEach(async () => {
  fake = await startFakeReplicate();
  settings = { apiKey: fake.token, baseUrl: fake.url, timeoutMs: 10_000 };
  webhooks = replicateWebhooks(settings);
  received = [];
});

afterEach(() => fake.close());

const call = (model: string, signal = new AbortController().signal): Call => ({
  model,
  signal,
  webhookUrl: `${receiverUrl}/webhooks/replicate/job-1`,
});

const creates = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/predictions'));
const deliveriesOf = (ref: string, count: number) =>
  pollUntil(
    async () => received.filter((r) => r.delivery?.ref === ref),
    (found) => found.length >= count,
    { tries: 300, everyMs: 20 },
  );
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as JobError,
  );

describe('images', () => {
  it('come back in the answer when the model finishes within Prefer: wait, fetched with the token', async () => {
    fake.plans.push({ status: 'succeeded' });
    const images = await replicateImages(settings).generate(
      { prompt: 'a red panda', count: 2, width: 1344, height: 768, format: 'png', seed: 7 },
      call('black-forest-labs/flux-schnell'),
    );
    expect(isPending(images)).toBe(false);
    expect(images).toHaveLength(2);
    expect(
      (images as { bytes: Buffer; contentType?: string }[]).map((i) => [i.bytes.toString(), i.contentType]),
    ).toEqual([
      [expect.stringMatching(/out-0\.png$/), 'image/png'],
      [expect.stringMatching(/out-1\.png$/), 'image/png'],
    ]);
    const [create] = creates();
    expect(create).toMatchObject({
      path: '/v1/models/black-forest-labs/flux-schnell/predictions',
      headers: { authorization: `Bearer ${fake.token}`, prefer: 'wait=5', 'content-type': 'application/json' },
      body: {
        input: {
          prompt: 'a red panda',
          aspect_ratio: '16:9',
          megapixels: '1',
          num_outputs: 2,
          output_format: 'png',
          seed: 7,
        },
        webhook: `${receiverUrl}/webhooks/replicate/job-1`,
        webhook_events_filter: ['completed'],
      },
    });
    expect(Object.keys(create!.body as object).sort()).toEqual(['input', 'webhook', 'webhook_events_filter']);
    const downloads = fake.requests.filter((r) => r.path.startsWith('/delivery/'));
    expect(downloads.map((r) => r.headers.authorization)).toEqual([`Bearer ${fake.token}`, `Bearer ${fake.token}`]);
  });

  it('ask for a quarter-megapixel size as flux makes it, and each catalog size is one the adapter can ask for', async () => {
    fake.plans.push({ status: 'succeeded' });
    await replicateImages(settings).generate(
      { prompt: 'p', count: 1, width: 384, height: 672, format: 'jpeg' },
      call('black-forest-labs/flux-dev'),
    );
    expect(creates()[0]!.body).toMatchObject({
      input: { aspect_ratio: '9:16', megapixels: '0.25', output_format: 'jpg' },
    });
    const flux = replicateModels.find((m) => m.model === 'black-forest-labs/flux-dev')!;
    expect(makesSize(flux.sizes!, 1536, 640)).toBe(true);
    expect(makesSize(flux.sizes!, 1024, 768)).toBe(false);
  });

  it('run a community model by owner/name:version at /v1/predictions', async () => {
    fake.plans.push({ status: 'succeeded' });
    const model = `${communityVersion.model}:${communityVersion.id}`;
    await replicateImages(settings).generate(
      { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'webp' },
      call(model),
    );
    expect(creates()[0]).toMatchObject({ path: '/v1/predictions', body: { version: communityVersion.id } });
  });

  it('still running when the wait ends are Pending, and the webhook finishes them', async () => {
    fake.maxHoldMs = 200;
    const adapter = replicateImages(settings);
    const started = await adapter.generate(
      { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'png' },
      call('black-forest-labs/flux-schnell'),
    );
    expect(started).toEqual({ pending: true, ref: expect.any(String) });
    const ref = (started as { ref: string }).ref;
    await fake.complete(ref, { status: 'succeeded' });
    const [{ delivery }] = (await deliveriesOf(ref, 1)) as [Received];
    expect(delivery).toMatchObject({ ref, state: 'succeeded' });
    const images = await adapter.collect!(delivery!.output, call('black-forest-labs/flux-schnell'));
    expect(images.map((i) => i.bytes.toString())).toEqual([expect.stringMatching(/out-0\.png$/)]);
  });

  it('failing on Replicate within the wait fail the job, the model’s words kept for the log', async () => {
    fake.plans.push({ status: 'failed', error: 'NSFW content detected' });
    const error = await rejection(
      replicateImages(settings).generate(
        { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'png' },
        call('black-forest-labs/flux-schnell'),
      ),
    );
    expect(error).toMatchObject({
      code: 'provider_failed',
      transient: false,
      message: 'The model failed on Replicate.',
    });
    expect(String((error as Error).cause)).toContain('NSFW content detected');
  });

  it('more than the model makes is refused by Replicate (422), a permanent refusal', async () => {
    const error = await rejection(
      replicateImages(settings).generate(
        { prompt: 'p', count: 5, width: 1024, height: 1024, format: 'png' },
        call('black-forest-labs/flux-schnell'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 422 });
    expect(String((error as Error).cause)).toContain('input.num_outputs: Must be less than or equal to 4');
  });
});

describe('video', () => {
  it('is Pending at once, and the verified webhook’s output is collected', async () => {
    const adapter = replicateVideo(settings);
    const started = await adapter.generate(
      { prompt: 'waves', seconds: 5, width: 1248, height: 704 },
      call('bytedance/seedance-1-pro-fast'),
    );
    expect(started).toEqual({ pending: true, ref: expect.any(String) });
    const [create] = creates();
    expect(create!.headers.prefer).toBeUndefined();
    expect(create!.body).toEqual({
      input: { prompt: 'waves', duration: 5, aspect_ratio: '16:9', resolution: '720p' },
      webhook: `${receiverUrl}/webhooks/replicate/job-1`,
      webhook_events_filter: ['completed'],
    });
    const ref = (started as { ref: string }).ref;
    await fake.complete(ref, { status: 'succeeded' });
    const [{ delivery }] = (await deliveriesOf(ref, 1)) as [Received];
    expect(delivery).toEqual({
      eventId: expect.stringMatching(/^msg_/),
      ref,
      state: 'succeeded',
      output: expect.any(String),
    });
    // Only the terminal event was asked for, so no `output` event came.
    expect(fake.deliveries.map((d) => d.event)).toEqual(['completed']);
    const clip = await adapter.collect!(delivery!.output, call('bytedance/seedance-1-pro-fast'));
    expect(clip).toMatchObject({ contentType: 'video/mp4' });
    expect(clip.bytes.toString()).toMatch(/output\.mp4$/);
  });

  it('sends a first frame as a data URL', async () => {
    const image = { bytes: Buffer.from('frame'), contentType: 'image/jpeg' };
    await replicateVideo(settings).generate(
      { prompt: 'p', seconds: 3, width: 704, height: 1248, image },
      call('bytedance/seedance-1-pro-fast'),
    );
    expect(creates()[0]!.body).toMatchObject({
      input: { image: 'data:image/jpeg;base64,ZnJhbWU=', aspect_ratio: '9:16' },
    });
  });

  it('a failure the webhook reports reads as failed, with Replicate’s words', async () => {
    const started = (await replicateVideo(settings).generate(
      { prompt: 'p', seconds: 5, width: 960, height: 960 },
      call('bytedance/seedance-1-pro-fast'),
    )) as { ref: string };
    await fake.complete(started.ref, { status: 'failed', error: 'CUDA out of memory' });
    const [{ delivery }] = (await deliveriesOf(started.ref, 1)) as [Received];
    expect(delivery).toMatchObject({ state: 'failed', error: 'CUDA out of memory' });
  });

  it('an output gone after Replicate’s hour cannot be collected', async () => {
    const adapter = replicateVideo(settings);
    const started = (await adapter.generate(
      { prompt: 'p', seconds: 5, width: 960, height: 960 },
      call('bytedance/seedance-1-pro-fast'),
    )) as { ref: string };
    await fake.complete(started.ref, { status: 'succeeded' });
    const [{ delivery }] = (await deliveriesOf(started.ref, 1)) as [Received];
    fake.expire(started.ref);
    const error = await rejection(adapter.collect!(delivery!.output, call('bytedance/seedance-1-pro-fast')));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 404 });
  });
});

describe('speech', () => {
  it('comes back in the answer, the voice and language in MiniMax’s names', async () => {
    fake.plans.push({ status: 'succeeded' });
    const speech = await replicateSpeech(settings).synthesize(
      { text: 'Hallo Welt', voice: 'male', language: 'de-DE', speed: 1.25 },
      call('minimax/speech-02-hd'),
    );
    expect(speech).toMatchObject({ speedApplied: true, characters: 10 });
    expect((speech as { audio: Buffer }).audio.toString()).toMatch(/output\.mp3$/);
    expect(creates()[0]!.body).toMatchObject({
      input: { text: 'Hallo Welt', voice_id: 'Deep_Voice_Man', speed: 1.25, language_boost: 'German' },
    });
  });
});

describe('webhooks', () => {
  async function finishedVideo() {
    const started = (await replicateVideo(settings).generate(
      { prompt: 'p', seconds: 5, width: 1248, height: 704 },
      call('bytedance/seedance-1-pro-fast'),
    )) as { ref: string };
    await fake.complete(started.ref, { status: 'succeeded' });
    return started.ref;
  }

  it('a duplicate reads the same: the same event id, the same delivery', async () => {
    fake.mischief = { duplicate: true };
    const ref = await finishedVideo();
    const [first, second] = (await deliveriesOf(ref, 2)) as [Received, Received];
    expect(second.delivery).toEqual(first.delivery);
  });

  it('an event after completed reads as running, for the same work', async () => {
    fake.mischief = { late: 'output' };
    const ref = await finishedVideo();
    const [completed, late] = (await deliveriesOf(ref, 2)) as [Received, Received];
    expect(completed.delivery).toMatchObject({ state: 'succeeded' });
    expect(late.delivery).toMatchObject({ ref, state: 'running' });
    expect(late.delivery!.eventId).not.toBe(completed.delivery!.eventId);
  });

  it.each([
    ['a wrong signature', { signature: 'wrong' as const }, 'does not match'],
    ['a stale timestamp', { timestampOffsetSeconds: -6 * 60 }, 'more than 300 seconds away'],
  ])('%s is refused with 401 invalid-signature, and Replicate retries it', async (_, mischief, words) => {
    fake.mischief = mischief;
    await finishedVideo();
    // Replicate retries a terminal webhook answered 4xx (its webhook docs, "Retries"): the first two answers.
    const answers = await pollUntil(
      async () => fake.deliveries.map((d) => d.answered),
      (found) => found.length >= 2,
      { tries: 300, everyMs: 20 },
    );
    expect(answers.slice(0, 2)).toEqual([401, 401]);
    const refused = received.filter((r) => r.refused);
    expect(refused[0]!.refused).toMatchObject({
      status: 401,
      type: '/problems/invalid-signature',
      title: 'Invalid webhook signature',
    });
    expect(refused[0]!.refused!.message).toContain(words);
    expect(received.some((r) => r.delivery)).toBe(false);
  });

  it('one that arrives before the create call has returned names the ref the call then returns', async () => {
    fake.plans.push({ status: 'succeeded', early: true });
    const started = (await replicateVideo(settings).generate(
      { prompt: 'p', seconds: 5, width: 1248, height: 704 },
      call('bytedance/seedance-1-pro-fast'),
    )) as { ref: string };
    expect(received.map((r) => r.delivery?.ref)).toEqual([started.ref]);
    expect(received[0]!.delivery).toMatchObject({ state: 'succeeded' });
  });

  it('are verified with the account’s secret, read once from Replicate; a configured one is used as given', async () => {
    await finishedVideo();
    await finishedVideo();
    await pollUntil(
      async () => received.length,
      (n) => n >= 2,
      { tries: 300, everyMs: 20 },
    );
    expect(fake.requests.filter((r) => r.path === '/v1/webhooks/default/secret')).toHaveLength(1);

    const configured = replicateWebhooks(settings, { secret: fake.secret });
    const body = JSON.stringify({ id: 'p1', status: 'processing', output: null, error: null });
    const now = Date.now();
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now / 1000)),
      'webhook-signature': `v1,bm9wZQ== ${signWebhook(fake.secret, 'msg_1', Math.floor(now / 1000), body)}`,
    };
    await expect(configured.verify(headers, Buffer.from(body), now)).resolves.toEqual({
      eventId: 'msg_1',
      ref: 'p1',
      state: 'running',
      output: null,
    });
    expect(fake.requests.filter((r) => r.path === '/v1/webhooks/default/secret')).toHaveLength(1);
    await expect(configured.verify(headers, Buffer.from(`${body} `), now)).rejects.toMatchObject({ status: 401 });
    await expect(
      configured.verify({ ...headers, 'webhook-signature': undefined }, Buffer.from(body), now),
    ).rejects.toMatchObject({ status: 401 });
  });

  it('a signed body that is not a prediction is a 422', async () => {
    const configured = replicateWebhooks(settings, { secret: fake.secret });
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(now),
      'webhook-signature': signWebhook(fake.secret, 'msg_2', now, '{"hello":1}'),
    };
    await expect(configured.verify(headers, Buffer.from('{"hello":1}'))).rejects.toMatchObject({ status: 422 });
  });

  it('cancel reaches Replicate, whose canceled webhook then reads as canceled', async () => {
    const started = (await replicateVideo(settings).generate(
      { prompt: 'p', seconds: 5, width: 1248, height: 704 },
      call('bytedance/seedance-1-pro-fast'),
    )) as { ref: string };
    await webhooks.cancel(started.ref, new AbortController().signal);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: `/v1/predictions/${started.ref}/cancel` });
    expect(fake.predictions.get(started.ref)!.status).toBe('canceled');
    const [{ delivery }] = (await deliveriesOf(started.ref, 1)) as [Received];
    expect(delivery).toMatchObject({ state: 'canceled' });
  });
});

describe('failures', () => {
  const image = (adapterSettings = settings, signal?: AbortSignal) =>
    replicateImages(adapterSettings).generate(
      { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'png' },
      call('black-forest-labs/flux-schnell', signal),
    );

  it.each([
    ['Retry-After', { header: true, body: 'replicate' as const }, 7_000],
    ['only retry_after in the body', { header: false, body: 'replicate' as const }, 7_000],
    ['only the rate-limit page’s "resets in ~7s"', { header: false, body: 'rate-limit-doc' as const }, 7_000],
  ])('a 429 with %s is transient, with the wait it named', async (_, shape, wait) => {
    fake.answers.push({ status: 429, retryAfterSeconds: 7, ...shape });
    expect(await rejection(image())).toMatchObject({
      code: 'provider_unavailable',
      transient: true,
      status: 429,
      retryAfterMs: wait,
    });
  });

  it('a 5xx is transient', async () => {
    fake.answers.push({ status: 503, title: 'Service Unavailable', detail: 'Try again.' });
    expect(await rejection(image())).toMatchObject({ transient: true, status: 503 });
  });

  it.each([
    [401, 'a token Replicate refuses', () => ({ ...settings, apiKey: 'r8_wrong' })],
    [
      402,
      'an account out of credit',
      () => (
        fake.answers.push({
          status: 402,
          title: 'Payment Required',
          detail: 'You have insufficient credit to run this model.',
        }),
        settings
      ),
    ],
  ])('%i (%s) is a permanent refusal', async (status, _, prepare) => {
    expect(await rejection(image(prepare()))).toMatchObject({ code: 'provider_rejected', transient: false, status });
  });

  it('an unknown official model is a 404, an unknown version a 422, not a model id at all is not sent', async () => {
    const generate = (model: string) =>
      rejection(
        replicateImages(settings).generate(
          { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'png' },
          call(model),
        ),
      );
    expect(await generate('nobody/nothing')).toMatchObject({ code: 'provider_rejected', status: 404 });
    expect(await generate(`nobody/nothing:${'b'.repeat(64)}`)).toMatchObject({
      code: 'provider_rejected',
      status: 422,
    });
    expect(await generate('not a model')).toMatchObject({ code: 'provider_rejected' });
    expect(creates()).toHaveLength(2);
  });

  it('a hanging answer times out, transiently', async () => {
    fake.answers.push({ hang: true });
    expect(await rejection(image({ ...settings, timeoutMs: 1_000 }))).toMatchObject({
      code: 'provider_timeout',
      transient: true,
    });
  });

  it('an abort mid-call stops it with the abort’s reason', async () => {
    fake.answers.push({ hang: true });
    const controller = new AbortController();
    const pending = rejection(image(settings, controller.signal));
    await pollUntil(
      async () => fake.requests.length,
      (n) => n >= 1,
    );
    controller.abort(new Error('canceled by the tenant'));
    expect(await pending).toMatchObject({ message: 'canceled by the tenant' });
  });

  it.each([
    'https://evil.example/out-0.png',
    'http://replicate.delivery/out-0.png',
    'https://replicate.delivery.evil.example/out-0.png',
    'https://replicate.delivery:8443/out-0.png',
    'http://127.0.0.1:1/out-0.png',
  ])('an output on a host that is not Replicate’s is not fetched: %s', async (url) => {
    const before = fake.requests.length;
    const error = await rejection(replicateImages(settings).collect!([url], call('black-forest-labs/flux-schnell')));
    expect(error).toMatchObject({ code: 'provider_invalid_response', transient: false });
    expect(fake.requests).toHaveLength(before);
  });

  it('no webhook URL, no key: nothing is sent', async () => {
    const noWebhook = { model: 'black-forest-labs/flux-schnell', signal: new AbortController().signal };
    const request = { prompt: 'p', count: 1, width: 1024, height: 1024, format: 'png' as const };
    expect(await rejection(replicateImages(settings).generate(request, noWebhook))).toMatchObject({
      code: 'not_configured',
    });
    expect(await rejection(image({ ...settings, apiKey: undefined }))).toMatchObject({ code: 'not_configured' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('the fake refuses what Replicate refuses', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (response) => ({
      status: response.status,
      type: response.headers.get('content-type'),
      body: (await response.json()) as { [key: string]: any },
    }));
  const schnell = '/v1/models/black-forest-labs/flux-schnell/predictions';

  it('a missing or wrong token: 401, as recorded from Replicate', async () => {
    const answer = await post(schnell, { input: { prompt: 'p' } }, { authorization: 'Token nope' });
    expect(answer).toEqual({
      status: 401,
      type: 'application/problem+json',
      body: { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 },
    });
  });

  it('a top-level field the endpoint does not take, or a missing one: 422 with invalid_fields', async () => {
    expect(await post(schnell, { version: 'x', input: { prompt: 'p' } })).toMatchObject({
      status: 422,
      body: {
        title: 'Input validation failed',
        detail: '- Additional property version is not allowed\n',
        invalid_fields: [
          {
            type: 'additional_property_not_allowed',
            field: '',
            description: 'Additional property version is not allowed',
          },
        ],
      },
    });
    expect(
      await post('/v1/predictions', { model: 'black-forest-labs/flux-schnell', input: { prompt: 'p' } }),
    ).toMatchObject({
      status: 422,
      body: { detail: '- version is required\n- Additional property model is not allowed\n' },
    });
  });

  it('input against the model’s schema: required, maximum, enum, type — but an unknown key passes', async () => {
    const answer = await post(schnell, { input: { num_inference_steps: 5, output_format: 'gif', num_outputs: '2' } });
    expect(answer).toMatchObject({ status: 422 });
    expect(answer.body.invalid_fields).toEqual([
      { type: 'required', field: 'input', description: 'prompt is required' },
      { type: 'number_lte', field: 'input.num_inference_steps', description: 'Must be less than or equal to 4' },
      {
        type: 'enum',
        field: 'input.output_format',
        description: 'output_format must be one of the following: "webp", "jpg", "png"',
      },
      {
        type: 'invalid_type',
        field: 'input.num_outputs',
        description: 'Invalid type. Expected: integer, given: string',
      },
    ]);
    expect(answer.body.detail).toContain(
      '- input: prompt is required\n- input.num_inference_steps: Must be less than or equal to 4\n',
    );
    expect(await post(schnell, { input: { prompt: 'p', not_in_the_schema: 1 } })).toMatchObject({ status: 201 });
  });

  it('webhook events outside the enum, a webhook that is not https, a bad Prefer, another content type', async () => {
    expect(await post(schnell, { input: { prompt: 'p' }, webhook_events_filter: ['done'] })).toMatchObject({
      status: 422,
      body: { invalid_fields: [{ type: 'enum', field: 'webhook_events_filter.0' }] },
    });
    expect(await post(schnell, { input: { prompt: 'p' }, webhook: 'http://example.com/hook' })).toMatchObject({
      status: 422,
    });
    expect(await post(schnell, { input: { prompt: 'p' } }, { prefer: 'wait=61' })).toMatchObject({ status: 400 });
    expect(await post(schnell, 'input=p', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({
      status: 415,
    });
  });

  it('a duration outside seedance’s 2–12 seconds, an unknown model', async () => {
    expect(
      await post('/v1/models/bytedance/seedance-1-pro-fast/predictions', { input: { prompt: 'p', duration: 15 } }),
    ).toMatchObject({
      status: 422,
      body: { invalid_fields: [{ type: 'number_lte', field: 'input.duration' }] },
    });
    expect(await post('/v1/models/nobody/nothing/predictions', { input: { prompt: 'p' } })).toMatchObject({
      status: 404,
      body: { title: 'Not Found', detail: 'Model not found: nobody/nothing', status: 404 },
    });
  });

  it('Prefer: wait answers 201 with the output when finished in time, 202 while not', async () => {
    fake.maxHoldMs = 100;
    fake.plans.push({ status: 'succeeded' }, { status: 'pending' });
    const finished = await post(schnell, { input: { prompt: 'p' } }, { prefer: 'wait=5' });
    expect(finished).toMatchObject({
      status: 201,
      body: { status: 'succeeded', version: 'hidden', output: [expect.stringContaining('/out-0.webp')] },
    });
    const running = await post(schnell, { input: { prompt: 'p' } }, { prefer: 'wait' });
    expect(running).toMatchObject({ status: 202, body: { status: 'starting', output: null } });
  });

  it('its files need the token', async () => {
    fake.plans.push({ status: 'succeeded' });
    const { body } = await post(schnell, { input: { prompt: 'p' } }, { prefer: 'wait=5' });
    expect((await fetch(body.output[0])).status).toBe(401);
  });
});
