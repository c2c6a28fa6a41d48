// The fal adapters (images, video, webhooks and cancel) against the fake of
// fal's queue (test/helpers/fakes/fal.ts) over real HTTP: requests queued with
// our webhook and answered Pending, the webhook verified by fal's ED25519
// scheme and its output collected, fal's errors read as the chain needs them.
import { Problem, problemType } from '../../../core/errors.ts';
import { JobError } from '../../../core/jobs/errors.ts';
import type { Call } from '../../../core/providers/capabilities.ts';
import { makesSize } from '../../../core/providers/models.ts';
import { falClient, type FalSettings } from '../../../core/providers/fal/client.ts';
import { falImages } from '../../../core/providers/fal/images.ts';
import { falModels, kling, seedance, videoFrames } from '../../../core/providers/fal/models.ts';
import { falVideo } from '../../../core/providers/fal/video.ts';
import { falCancelRef, falWebhooks } from '../../../core/providers/fal/webhooks.ts';
import { infrastructureError, rateLimited, startFakeFal, type FakeFal } from '../../helpers/fakes/fal.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.ts';

let fal: FakeFal;
let receiver: Receiver;
let settings: FalSettings;

beforeEach(async () => {
  fal = await startFakeFal();
  receiver = await startReceiver();
  settings = { apiKey: fal.key, baseUrl: fal.url, timeoutMs: 5_000, jwksUrl: fal.jwksUrl };
});

afterEach(async () => {
  await fal.close();
  await receiver.close();
});

const hook = '/webhooks/fal/job-1';
const call = (model: string, signal = new AbortController().signal): Call => ({
  model,
  signal,
  webhookUrl: `${receiver.url}${hook}`,
});
const image = { prompt: 'a lighthouse at dusk', count: 1, width: 1024, height: 768, format: 'png' as const };
const video = { prompt: 'waves on a shore', seconds: 5, width: 1920, height: 1080 };

/** What the receiver got, as the platform's webhook route hands it to verify(). */
const received = (index = 0) => {
  const delivery = receiver.at(hook)[index]!;
  return [delivery.headers, Buffer.from(delivery.body)] as const;
};

/** What the promise was rejected with, checked to be of this class. */
async function rejection<T>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}
const failure = (promise: Promise<unknown>) => rejection(promise, JobError);
const refusal = (promise: Promise<unknown>) => rejection(promise, Problem);

describe('images', () => {
  test('are queued with the webhook and answered Pending; the verified webhook’s pictures are collected', async () => {
    const pending = await falImages(settings).generate({ ...image, count: 2, seed: 7 }, call('fal-ai/flux/dev'));
    expect(pending).toEqual({ pending: true, ref: expect.any(String) });

    const submit = fal.requests.find((request) => request.method === 'POST')!;
    expect(submit.path).toBe('/fal-ai/flux/dev');
    expect(submit.headers.authorization).toBe(`Key ${fal.key}`);
    expect(submit.headers['content-type']).toBe('application/json');
    expect(submit.query.get('fal_webhook')).toBe(`${receiver.url}${hook}`);
    // The body is the model's input itself, not wrapped (DOC-Q; fal-js dispatchRequest).
    expect(submit.body).toEqual({
      prompt: image.prompt,
      image_size: 'landscape_4_3',
      num_images: 2,
      output_format: 'png',
      seed: 7,
    });
    expect(fal.queued.get((pending as { ref: string }).ref)!.ignored).toEqual([]);

    await fal.complete((pending as { ref: string }).ref);
    const delivery = await falWebhooks(settings).verify(...received());
    expect(delivery).toMatchObject({ ref: (pending as { ref: string }).ref, state: 'succeeded' });
    expect(delivery.eventId).toBe(`${delivery.ref}:OK`);

    const files = await falImages(settings).collect!(delivery.output, call('fal-ai/flux/dev'));
    expect(files).toHaveLength(2);
    expect(files[0]!.contentType).toBe('image/png');
    expect(files[0]!.bytes.subarray(1, 4).toString()).toBe('PNG');
  });

  test('a size that is not a preset goes as width and height, and every catalog size passes fal’s schema', async () => {
    const images = falImages(settings);
    await images.generate({ ...image, width: 640, height: 896, format: 'jpeg' }, call('fal-ai/flux/schnell'));
    expect(fal.requests.at(-1)!.body).toMatchObject({ image_size: { width: 640, height: 896 }, output_format: 'jpeg' });

    const spec = falModels.find((model) => model.model === 'fal-ai/flux/schnell')!;
    for (const [width, height] of [
      [1024, 1024],
      [512, 512],
      [576, 1024],
      [1024, 576],
      [640, 896],
    ] as const) {
      expect(makesSize(spec.sizes!, width, height)).toBe(true);
      const { ref } = (await images.generate({ ...image, width, height }, call(spec.model))) as { ref: string };
      await fal.complete(ref);
    }
    const deliveries = receiver.at(hook).map((sent) => JSON.parse(sent.body));
    expect(deliveries.map((body) => body.status)).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);
  });
});

describe('video', () => {
  test('Kling is queued Pending with a string duration and an aspect ratio; the video is collected', async () => {
    const pending = (await falVideo(settings).generate({ ...video, seconds: 7 }, call(kling))) as { ref: string };
    expect(fal.requests.at(-1)!.path).toBe(`/${kling}`);
    expect(fal.requests.at(-1)!.body).toEqual({ prompt: video.prompt, duration: '10', aspect_ratio: '16:9' });

    await fal.complete(pending.ref);
    const delivery = await falWebhooks(settings).verify(...received());
    const file = await falVideo(settings).collect!(delivery.output, call(kling));
    expect(file.contentType).toBe('video/mp4');
    expect(file.bytes.subarray(4, 8).toString()).toBe('ftyp');
  });

  test('every frame and length the catalog lists passes fal’s schema for both models', async () => {
    const videos = falVideo(settings);
    for (const model of [kling, seedance]) {
      const spec = falModels.find((entry) => entry.model === model)!;
      for (const [index, frame] of videoFrames[model]!.entries()) {
        const [width, height] = frame.size.split('x').map(Number) as [number, number];
        const seconds = spec.seconds![index % spec.seconds!.length]!;
        const { ref } = (await videos.generate({ ...video, width, height, seconds, seed: 3 }, call(model))) as {
          ref: string;
        };
        expect(fal.queued.get(ref)!.ignored).toEqual([]);
        await fal.complete(ref);
      }
    }
    const statuses = receiver.at(hook).map((sent) => JSON.parse(sent.body).status);
    expect(statuses).toEqual(statuses.map(() => 'OK'));
    expect(fal.requests.at(-1)!.body).toMatchObject({ resolution: '1080p', aspect_ratio: '21:9', seed: 3 });
  });

  test('a first frame is refused before anything is sent: these models make video from text only', async () => {
    const error = await failure(
      falVideo(settings).generate({ ...video, image: { bytes: Buffer.from('x') } }, call(seedance)),
    );
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false });
    expect(fal.requests).toHaveLength(0);
  });
});

describe('webhooks', () => {
  async function submitted(model = 'fal-ai/flux/schnell') {
    return ((await falImages(settings).generate(image, call(model))) as { ref: string }).ref;
  }

  test('a duplicate delivery reads the same, so the platform sees it as one event', async () => {
    await fal.complete(await submitted(), { mode: 'duplicate' });
    const webhooks = falWebhooks(settings);
    const [first, second] = [await webhooks.verify(...received(0)), await webhooks.verify(...received(1))];
    expect(receiver.at(hook)).toHaveLength(2);
    expect(second).toEqual(first);
  });

  test('a delivery the platform did not take is sent again, and reads the same', async () => {
    receiver.answer(hook, 503);
    await fal.complete(await submitted());
    expect(receiver.at(hook)).toHaveLength(2);
    const webhooks = falWebhooks(settings);
    expect(await webhooks.verify(...received(1))).toEqual(await webhooks.verify(...received(0)));
  });

  test('headers are read whatever their case', async () => {
    await fal.complete(await submitted());
    const [headers, body] = received();
    const spelled = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [
        name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase()),
        value,
      ]),
    );
    expect(spelled['X-Fal-Webhook-Signature']).toBeDefined();
    expect(await falWebhooks(settings).verify(spelled, body)).toMatchObject({ state: 'succeeded' });
  });

  test('a webhook that arrives before the submit is answered reads the same', async () => {
    fal.completeOnSubmit = true;
    const ref = await submitted();
    expect(receiver.at(hook)).toHaveLength(1);
    expect(await falWebhooks(settings).verify(...received())).toMatchObject({ ref, state: 'succeeded' });
  });

  test('a failed request is delivered as failed, with fal’s words for the log', async () => {
    const ref = await submitted();
    fal.queued.get(ref)!.input.num_inference_steps = 28; // schnell takes at most 12
    await fal.complete(ref);
    const delivery = await falWebhooks(settings).verify(...received());
    expect(delivery).toMatchObject({ ref, state: 'failed', eventId: `${ref}:ERROR` });
    expect(delivery.error).toContain('Invalid status code: 422');
    expect(delivery.error).toContain('body.num_inference_steps');
  });

  test.each([
    ['a bad signature', 'bad-signature', 'does not match'],
    ['a stale timestamp', 'stale', 'more than 5 minutes'],
    ['a key not in fal’s JWKS', 'unknown-key', 'does not match'],
  ] as const)('a webhook with %s is refused as invalid-signature', async (_, mode, words) => {
    await fal.complete(await submitted(), { mode });
    const problem = await refusal(falWebhooks(settings).verify(...received()));
    expect(problem.status).toBe(401);
    expect(problem.type).toBe(problemType('invalid-signature'));
    expect(problem.message).toContain(words);
  });

  test('missing headers, or a body changed after signing, are refused', async () => {
    await fal.complete(await submitted());
    const [headers, body] = received();
    const webhooks = falWebhooks(settings);
    const { 'x-fal-webhook-signature': _, ...unsigned } = headers;
    expect((await refusal(webhooks.verify(unsigned, body))).status).toBe(401);
    const changed = Buffer.from(body.toString().replace('"OK"', '"ERROR"'));
    expect((await refusal(webhooks.verify(headers, changed))).status).toBe(401);
  });

  test('a rotated key is picked up by fetching the keys again, once', async () => {
    const webhooks = falWebhooks(settings);
    await fal.complete(await submitted());
    await webhooks.verify(...received(0));
    expect(fal.jwksFetches).toBe(1);

    fal.rotateKey({ drop: true });
    await fal.complete(await submitted());
    // A minute on (the delivery's timestamp still within its 5 minutes), a failed check may fetch the keys again.
    const later = Date.now() + 61_000;
    expect(await webhooks.verify(...received(1), later)).toMatchObject({ state: 'succeeded' });
    expect(fal.jwksFetches).toBe(2);

    // Forged deliveries do not each fetch the keys again.
    await fal.complete(await submitted(), { mode: 'unknown-key' });
    await refusal(webhooks.verify(...received(2), later + 1_000));
    expect(fal.jwksFetches).toBe(2);
  });

  test('keys that cannot be fetched answer 503, so fal delivers again later', async () => {
    fal.jwksAnswers.push(infrastructureError('runner_disconnected'));
    await fal.complete(await submitted());
    const problem = await refusal(falWebhooks(settings).verify(...received()));
    expect(problem.status).toBe(503);
  });
});

describe('cancel', () => {
  test('reaches fal on the app’s cancel URL, without the model’s subpath', async () => {
    const { ref } = (await falImages(settings).generate(image, call('fal-ai/flux/dev'))) as { ref: string };
    await falWebhooks(settings).cancel(falCancelRef('fal-ai/flux/dev', ref), new AbortController().signal);
    const cancel = fal.requests.at(-1)!;
    expect([cancel.method, cancel.path]).toEqual(['PUT', `/fal-ai/flux/requests/${ref}/cancel`]);
    expect(cancel.headers.authorization).toBe(`Key ${fal.key}`);
    expect(fal.queued.get(ref)!.canceled).toBe(true);
  });

  test('a request already ended, or unknown to fal, counts as canceled', async () => {
    const webhooks = falWebhooks(settings);
    const { ref } = (await falVideo(settings).generate(video, call(kling))) as { ref: string };
    await fal.complete(ref);
    await webhooks.cancel(falCancelRef(kling, ref), new AbortController().signal);
    await webhooks.cancel(falCancelRef(kling, 'no-such-request'), new AbortController().signal);
    expect(fal.requests.filter((request) => request.method === 'PUT')).toHaveLength(2);
  });

  test('a ref without its model is refused before anything is sent', async () => {
    const error = await failure(falWebhooks(settings).cancel('only-an-id', new AbortController().signal));
    expect(error.code).toBe('provider_rejected');
    expect(fal.requests).toHaveLength(0);
  });
});

describe('fal’s errors, as the chain reads them', () => {
  const submit = () => falImages(settings).generate(image, call('fal-ai/flux/dev'));

  test('a wrong key is refused for good, in a plain sentence', async () => {
    settings.apiKey = 'someone-else:secret';
    const error = await failure(submit());
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 401 });
    expect(error.message).toBe('fal refused the key (401); check FAL_KEY.');
    expect(String((error.cause as Error).message)).toContain('No user found');
  });

  test('no key, or no webhook URL, is a configuration error and nothing is sent', async () => {
    expect(
      (await failure(falImages({ ...settings, apiKey: undefined }).generate(image, call('fal-ai/flux/dev')))).code,
    ).toBe('not_configured');
    const noHook = { ...call('fal-ai/flux/dev'), webhookUrl: undefined };
    expect((await failure(falImages(settings).generate(image, noHook))).code).toBe('not_configured');
    expect(fal.requests).toHaveLength(0);
  });

  test('a model id that is not fal’s shape is refused before anything is sent', async () => {
    for (const model of ['fal-ai/../admin', 'fal-ai', 'fal-ai/flux/dev?x=1'])
      expect((await failure(falImages(settings).generate(image, call(model)))).code).toBe('provider_rejected');
    expect(fal.requests).toHaveLength(0);
  });

  test('a model fal lacks is refused for good', async () => {
    const error = await failure(falImages(settings).generate(image, call('fal-ai/schnell')));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 404 });
  });

  test.each([
    [429, 'with Retry-After', rateLimited(7), 7_000],
    [429, 'without Retry-After', rateLimited(), undefined],
    [503, 'runner_scheduling_failure', infrastructureError('runner_scheduling_failure'), undefined],
    [504, 'request_timeout', infrastructureError('request_timeout'), undefined],
  ])('a %i (%s) is transient, with the wait fal named', async (status, _, answer, retryAfterMs) => {
    fal.answers.push(answer);
    const error = await failure(submit());
    expect(error).toMatchObject({ code: 'provider_unavailable', transient: true, status, retryAfterMs });
    expect(error.message).not.toContain('{');
  });

  test('a model error fal says not to retry is permanent, and content policy is told as such', async () => {
    fal.answers.push({
      status: 500,
      body: { detail: [{ loc: ['body'], msg: 'The model failed', type: 'internal_error' }] },
      headers: { 'x-fal-retryable': 'false' },
    });
    expect(await failure(submit())).toMatchObject({ code: 'provider_rejected', transient: false, status: 500 });
    fal.answers.push({
      status: 422,
      body: { detail: [{ loc: ['body', 'prompt'], msg: 'Flagged', type: 'content_policy_violation' }] },
    });
    expect((await failure(submit())).message).toBe('fal refused the prompt under its content policy.');
  });

  test('an answer that never comes times out, transient', async () => {
    fal.answers.push({ hang: true });
    const error = await failure(falImages({ ...settings, timeoutMs: 300 }).generate(image, call('fal-ai/flux/dev')));
    expect(error).toMatchObject({ code: 'provider_timeout', transient: true });
  });

  test('a slow answer within the time is read', async () => {
    fal.answers.push({ delayMs: 200 });
    expect(await submit()).toMatchObject({ pending: true });
  });

  test('a canceled job aborts the call in flight', async () => {
    fal.answers.push({ hang: true });
    const controller = new AbortController();
    const generating = falImages(settings).generate(image, call('fal-ai/flux/dev', controller.signal));
    await pollUntil(
      async () => fal.requests.length,
      (count) => count > 0,
    );
    const reason = new Error('canceled by the tenant');
    controller.abort(reason);
    await expect(generating).rejects.toBe(reason);
  });
});

describe('output files', () => {
  test('a file on a host that is not fal’s is refused, and not fetched', async () => {
    const images = falImages(settings);
    for (const url of [
      'https://example.com/a.png',
      'http://v3.fal.media/a.png',
      'https://fal.media.example.com/a.png',
      fal.foreignUrl('a.png'),
    ]) {
      const error = await failure(images.collect!({ images: [{ url }] }, call('fal-ai/flux/dev')));
      expect(error).toMatchObject({ code: 'provider_invalid_response', transient: false });
    }
    expect(fal.requests).toHaveLength(0);
  });

  test('a file over the size cap is refused', async () => {
    fal.files.set('big.mp4', { bytes: Buffer.alloc(64 * 1024), contentType: 'video/mp4' });
    const error = await failure(falClient(settings).file(`${fal.url}/files/big.mp4`, call(kling), 16 * 1024));
    expect(error.code).toBe('provider_invalid_response');
  });

  test('a delivery without images or video is garbage', async () => {
    expect((await failure(falImages(settings).collect!({ images: [] }, call('fal-ai/flux/dev')))).code).toBe(
      'provider_invalid_response',
    );
    expect((await failure(falVideo(settings).collect!({}, call(kling)))).code).toBe('provider_invalid_response');
  });
});

describe('the queue’s other calls', () => {
  test('status and result follow the URLs the submit answered', async () => {
    const client = falClient(settings);
    const signal = new AbortController().signal;
    const request = await client.submit('fal-ai/flux/dev', { prompt: 'x' }, `${receiver.url}${hook}`, signal);
    expect(request.statusUrl).toBe(`${fal.url}/fal-ai/flux/requests/${request.requestId}/status`);
    expect(await client.status(request, signal)).toMatchObject({ status: 'IN_QUEUE' });
    fal.start(request.requestId);
    expect(await client.status(request, signal)).toMatchObject({ status: 'IN_PROGRESS' });
    await fal.complete(request.requestId);
    expect(await client.result(request, signal)).toMatchObject({
      images: [expect.objectContaining({ url: expect.any(String) })],
    });
  });
});

describe('the fake refuses what fal refuses', () => {
  const submitUrl = () => `${fal.url}/fal-ai/flux/dev`;
  const json = { 'content-type': 'application/json' };
  // What fal answers, as plain JSON.
  type Answered = { detail: string | { loc: unknown; type: string }[]; request_id: string; response_url: string };
  const read = async (response: Response) => (await response.json()) as Answered;

  test('no key, a Bearer key, or an unknown key: 401 with fal’s detail', async () => {
    const none = await fetch(submitUrl(), { method: 'POST', headers: json, body: '{"prompt":"x"}' });
    expect([none.status, await none.json()]).toEqual([401, { detail: 'No user found for Key ID and Secret' }]);
    const bearer = await fetch(submitUrl(), {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${fal.key}` },
      body: '{"prompt":"x"}',
    });
    expect(bearer.status).toBe(401);
    expect((await read(bearer)).detail).toContain('Invalid Key Authorization header format');
  });

  test('an app fal lacks: 404 naming it; status on the model’s subpath: not a route', async () => {
    const auth = { authorization: `Key ${fal.key}` };
    const unknown = await fetch(`${fal.url}/fal-ai/schnell`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: '{}',
    });
    expect([unknown.status, await unknown.json()]).toEqual([404, { detail: 'Application "schnell" not found' }]);
    const subpath = await fetch(`${fal.url}/fal-ai/flux/dev/requests/some-id/status`, { headers: auth });
    expect(subpath.status).not.toBe(200);
  });

  test('an input the model refuses ends the request with a 422 in fal’s shape', async () => {
    const auth = { authorization: `Key ${fal.key}` };
    const answer = await fetch(`${fal.url}/fal-ai/kling-video/v2.5-turbo/pro/text-to-video`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: JSON.stringify({ prompt: 'x', duration: 5, aspect_ratio: '4:3' }),
    });
    const { request_id: id, response_url: responseUrl } = await read(answer);
    await fal.complete(id);
    const result = await fetch(responseUrl, { headers: auth });
    expect(result.status).toBe(422);
    expect((await read(result)).detail).toEqual([
      expect.objectContaining({ loc: ['body', 'duration'], type: 'literal_error' }),
      expect.objectContaining({ loc: ['body', 'aspect_ratio'], type: 'literal_error' }),
    ]);
  });

  test('a body that is not JSON is refused at submit', async () => {
    const answer = await fetch(submitUrl(), {
      method: 'POST',
      headers: { authorization: `Key ${fal.key}`, 'content-type': 'text/plain' },
      body: 'prompt=x',
    });
    expect(answer.status).toBe(422);
    expect((await read(answer)).detail[0]).toMatchObject({ loc: ['body'], type: 'model_attributes_type' });
  });
});
