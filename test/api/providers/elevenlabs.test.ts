// ElevenLabs through the platform's HTTP API, against the fake written from
// ElevenLabs' reference (test/helpers/fakes/elevenlabs.ts): POST
// /{site}/media/tts speaks with the voice and model asked, the request
// passing the fake's checks. Each refusal the adapter reads (a voice the
// account lacks, its credits spent, a key it does not take) fails the job
// at once in words of ours; a 429 or 5xx or no answer passes the job to the
// placeholder, or has it retried after the wait when ElevenLabs is the last;
// a cancel aborts the call in flight.
import request from 'supertest';
import {
  somethingWentWrong,
  startFakeElevenLabs,
  systemBusy,
  tooManyConcurrentRequests,
  type FakeElevenLabs,
  type Script,
} from '../../helpers/fakes/elevenlabs.ts';
import { pollUntil } from '../../helpers/poll.ts';
import {
  expectPassedOnToLocal,
  expectRefused,
  jobWhen,
  ledgerKinds,
  providerCalls,
  providerCallsWhen,
  providerSuite,
  readJob,
  submit,
} from './harness.ts';

let fake: FakeElevenLabs;
beforeAll(async () => {
  fake = await startFakeElevenLabs();
});
const suite = providerSuite(() => ({
  SPEECH_PROVIDERS: 'elevenlabs,local',
  ELEVENLABS_SPEECH_MODELS: 'eleven_multilingual_v2,eleven_flash_v2_5',
  ELEVENLABS_API_KEY: fake.apiKey,
  ELEVENLABS_BASE_URL: fake.url,
}));
afterEach(() => {
  fake.next.length = 0;
  fake.requests.length = 0;
  fake.quota = { limit: 1_000_000, used: 0 };
});
afterAll(() => fake.close());

const speak = (body: Record<string, unknown>) => submit(suite, '/media/tts', body);
/** The model alone: ElevenLabs is then the last (and only) provider of the job's plan. */
const onlyElevenLabs = { model: 'eleven_multilingual_v2' };

it('speaks with the voice and model asked, asking ElevenLabs for WAV, encoded into the format the request named', async () => {
  const id = await speak({ text: 'The ferry leaves at nine.', voice: 'female', format: 'ogg' });
  expect(await jobWhen(suite, id)).toMatchObject({
    status: 'succeeded',
    output: { provider: 'elevenlabs', model: 'eleven_multilingual_v2', placeholder: false, format: 'ogg' },
  });
  const [call] = fake.requests;
  // Sarah, one of ElevenLabs' default voices, for our neutral `female`.
  expect(call).toMatchObject({
    method: 'POST',
    path: '/v1/text-to-speech/EXAVITQu4vr4xnSDxMaL',
    headers: { 'xi-api-key': fake.apiKey },
    body: { text: 'The ferry leaves at nine.', model_id: 'eleven_multilingual_v2' },
  });
  expect(call!.query.get('output_format')).toBe('wav_24000');
  expect(await providerCalls(suite, id)).toMatchObject([{ vendor: 'elevenlabs', outcome: 'succeeded' }]);
});

it('uses a model the request names when the operator allows it, and refuses one it does not, naming those it does', async () => {
  const id = await speak({ text: 'Die Fähre fährt um neun.', language: 'de', model: 'eleven_flash_v2_5' });
  expect(await jobWhen(suite, id)).toMatchObject({ status: 'succeeded', output: { model: 'eleven_flash_v2_5' } });
  expect(fake.requests[0]!.body).toMatchObject({ model_id: 'eleven_flash_v2_5', language_code: 'de' });

  const res = await request(suite.t.app)
    .post(`/${suite.site.slug}/media/tts`)
    .set(suite.author.auth)
    .send({ text: 'Hello', model: 'eleven_v3' })
    .expect(422);
  expect(res.body.errors).toEqual([
    { path: 'body.model', message: 'one of eleven_multilingual_v2, eleven_flash_v2_5, local' },
  ]);
});

describe('refusals: the job fails at once, in words of ours, its credits released', () => {
  it('a voice the account does not have', async () => {
    const done = await jobWhen(suite, await speak({ text: 'Hello.', voice: 'NoSuchVoice0000000001' }));
    await expectRefused(
      suite,
      done,
      /^ElevenLabs has no voice "NoSuchVoice0000000001" for this account\.$/,
      'was not found',
    );
    expect(await providerCalls(suite, done.id)).toMatchObject([
      { vendor: 'elevenlabs', outcome: 'failed', error_code: 'provider_rejected', http_status: 404 },
    ]);
  });

  it('the account’s credits spent', async () => {
    fake.quota = { limit: 5, used: 0 };
    const done = await jobWhen(suite, await speak({ text: 'A sentence longer than five credits.' }));
    await expectRefused(suite, done, /has not enough credits left/, 'exceeds your quota');
  });

  it('a key ElevenLabs does not take', async () => {
    fake.next.push({
      kind: 'status',
      status: 401,
      body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } },
    });
    const done = await jobWhen(suite, await speak({ text: 'Hello.' }));
    await expectRefused(suite, done, /refused the API key/, 'Invalid API key');
  });
});

it.each<[string, Script, number]>([
  ['429, too many at once, with Retry-After', tooManyConcurrentRequests('7'), 429],
  ['429, too busy, without Retry-After', systemBusy(), 429],
  ['500', somethingWentWrong(), 500],
])('passes the job to the placeholder when ElevenLabs answers %s', async (_, script, status) => {
  fake.next.push(script);
  await expectPassedOnToLocal(suite, await speak({ text: 'Hello there.' }), 'elevenlabs', {
    code: 'provider_unavailable',
    status: status,
  });
});

it('passes the job on when ElevenLabs does not answer within AI_TIMEOUT_MS', async () => {
  fake.next.push({ kind: 'hang' });
  await suite.withWorker({ AI_TIMEOUT_MS: '1000' }, async () => {
    await expectPassedOnToLocal(suite, await speak({ text: 'Hello there.' }), 'elevenlabs', {
      code: 'provider_timeout',
    });
  });
});

it('retries the job after the wait a 429 named when ElevenLabs is the last of its plan', async () => {
  fake.next.push(systemBusy('2'));
  const id = await speak({ text: 'Wait for it.', ...onlyElevenLabs });
  const done = await jobWhen(suite, id);
  expect(done).toMatchObject({ status: 'succeeded', attempts: 2, output: { provider: 'elevenlabs' } });
  const [limited, spoke] = await providerCalls(suite, id);
  expect([limited, spoke]).toMatchObject([
    { vendor: 'elevenlabs', outcome: 'failed', http_status: 429 },
    { vendor: 'elevenlabs', outcome: 'succeeded' },
  ]);
  const retriedAfter = Date.parse(spoke!.started_at) - (Date.parse(limited!.started_at) + limited!.duration_ms);
  expect(retriedAfter).toBeGreaterThanOrEqual(1900);
});

it('aborts the call in flight when the job is canceled, and releases its credits', async () => {
  // ElevenLabs never answers; only the cancel ends the call (AI_TIMEOUT_MS is a minute).
  fake.next.push({ kind: 'hang' });
  const id = await speak({ text: 'Never said.', ...onlyElevenLabs });
  await pollUntil(
    async () => fake.requests.length,
    (count) => count > 0,
    { tries: 300, everyMs: 100 },
  );
  const canceled = await request(suite.t.app)
    .post(`/${suite.site.slug}/jobs/${id}/cancel`)
    .set(suite.author.auth)
    .expect(200);
  expect(canceled.body).toMatchObject({ status: 'canceled', credits_charged: 0 });
  expect(await providerCallsWhen(suite, id, (calls) => calls.length > 0)).toMatchObject([
    { vendor: 'elevenlabs', outcome: 'canceled' },
  ]);
  expect(await readJob(suite, id)).toMatchObject({ status: 'canceled', media_id: null });
  expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
});
