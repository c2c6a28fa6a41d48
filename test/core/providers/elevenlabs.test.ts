// The ElevenLabs speech adapter against a fake of ElevenLabs written from its
// reference (test/helpers/fakes/elevenlabs.ts), over real HTTP: what it sends,
// how it reads each error ElevenLabs answers, and that the fake itself refuses
// what ElevenLabs refuses.
import { JobError } from '../../../core/jobs/errors.ts';
import type { Call, Speech, SpeechSynthesis } from '../../../core/providers/capabilities.ts';
import { elevenLabsModels } from '../../../core/providers/elevenlabs/models.ts';
import { elevenLabsSpeech } from '../../../core/providers/elevenlabs/speech.ts';
import {
  somethingWentWrong,
  startFakeElevenLabs,
  systemBusy,
  tooManyConcurrentRequests,
  type FakeElevenLabs,
} from '../../helpers/fakes/elevenlabs.ts';

let fake: FakeElevenLabs;
beforeEach(async () => {
  fake = await startFakeElevenLabs();
});
afterEach(() => fake.close());

const speak = (request: Partial<SpeechSynthesis> = {}, call: Partial<Call> = {}, settings = {}) =>
  elevenLabsSpeech({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 10_000, ...settings }).synthesize(
    { text: 'Hello there.', voice: 'default', language: 'en', speed: 1, ...request },
    { model: 'eleven_multilingual_v2', signal: new AbortController().signal, ...call },
  ) as Promise<Speech>;

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as JobError,
  );

describe('a speech', () => {
  it('is asked as a WAV at 24 kHz with the key in xi-api-key, and answered as that WAV', async () => {
    const speech = await speak({ text: 'Hello 👋 there.' });
    const [sent] = fake.requests;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb' });
    expect(sent!.query.get('output_format')).toBe('wav_24000');
    expect(sent!.headers['xi-api-key']).toBe(fake.apiKey);
    expect(sent!.headers.authorization).toBeUndefined();
    // Multilingual v2 finds the language itself, and 1 is its tempo: nothing more is sent.
    expect(sent!.body).toEqual({ text: 'Hello 👋 there.', model_id: 'eleven_multilingual_v2' });
    expect(speech.audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(speech.audio.readUInt32LE(24)).toBe(24_000);
    // Characters as ElevenLabs counts them: the emoji is one.
    expect(speech).toMatchObject({ speedApplied: true, characters: 14 });
  });

  it('maps the neutral voices to default voices every account has, and passes any other name through', async () => {
    fake.voices.add('myOwnClonedVoice0001');
    for (const voice of ['default', 'female', 'male', 'myOwnClonedVoice0001']) await speak({ voice });
    expect(fake.requests.map((request) => request.path.split('/').pop())).toEqual([
      'JBFqnCBsd6RMkjVDRZzb',
      'EXAVITQu4vr4xnSDxMaL',
      'nPczCjzI2devNBz1zQrb',
      'myOwnClonedVoice0001',
    ]);
  });

  it('sends a tempo within 0.7–1.2 and the language to a v2.5 model', async () => {
    const speech = await speak({ speed: 1.1, language: 'de-AT' }, { model: 'eleven_flash_v2_5' });
    expect(fake.requests[0]!.body).toEqual({
      text: 'Hello there.',
      model_id: 'eleven_flash_v2_5',
      language_code: 'de',
      voice_settings: { speed: 1.1 },
    });
    expect(speech.speedApplied).toBe(true);
  });

  it('leaves a tempo beyond 0.7–1.2, or any on Eleven v3, to ffmpeg', async () => {
    for (const [speed, model] of [
      [1.5, 'eleven_flash_v2_5'],
      [0.5, 'eleven_multilingual_v2'],
      [0.8, 'eleven_v3'],
    ] as const) {
      const speech = await speak({ speed }, { model });
      expect(fake.requests.at(-1)!.body).not.toHaveProperty('voice_settings');
      expect(speech.speedApplied).toBe(false);
    }
  });

  it('does not send a language the model does not speak (the fake would refuse it)', async () => {
    await speak({ language: 'fa' }, { model: 'eleven_flash_v2_5' });
    await speak({ language: 'nb-NO' }, { model: 'eleven_turbo_v2_5' });
    expect(fake.requests.map((request) => (request.body as { language_code?: string }).language_code)).toEqual([
      undefined,
      'no',
    ]);
  });

  it('takes longer text than the model takes a call for a refusal, without calling', async () => {
    const error = await failure(speak({ text: 'a'.repeat(5_001) }, { model: 'eleven_v3' }));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false });
    expect(error.message).toMatch(/at most 5000 characters/);
    expect(fake.requests).toHaveLength(0);
  });

  it('needs a key, and says which setting', async () => {
    const error = await failure(speak({}, {}, { apiKey: undefined }));
    expect(error).toMatchObject({ code: 'not_configured', transient: false });
    expect(error.message).toContain('ELEVENLABS_API_KEY');
    expect(fake.requests).toHaveLength(0);
  });

  it('survives a slow answer within the time', async () => {
    fake.next.push({ kind: 'slow', delayMs: 300 });
    expect((await speak()).audio.length).toBeGreaterThan(44);
  });
});

describe('ElevenLabs’ refusals are permanent, in plain words', () => {
  it('a voice it does not have (404 voice_not_found)', async () => {
    const error = await failure(speak({ voice: 'noSuchVoice000000000' }));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 404 });
    expect(error.message).toBe('ElevenLabs has no voice "noSuchVoice000000000" for this account.');
    // ElevenLabs' own words are kept for the log.
    expect(String((error.cause as Error).message)).toContain('voice_not_found');
  });

  it('a wrong key (401 invalid_api_key)', async () => {
    const error = await failure(speak({}, {}, { apiKey: 'sk_wrong' }));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 401 });
    expect(error.message).toContain('ELEVENLABS_API_KEY');
  });

  it('a spent quota (401 quota_exceeded)', async () => {
    fake.quota = { limit: 10_000, used: 9_995 };
    const error = await failure(speak());
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 401 });
    expect(error.message).toBe('The ElevenLabs account has not enough credits left for this text.');
  });

  it('an invalid request (422)', async () => {
    fake.next.push({
      kind: 'status',
      status: 422,
      body: { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] },
    });
    const error = await failure(speak());
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 422 });
    expect(error.message).toBe('ElevenLabs found the request invalid.');
  });

  it('an answer that is not the WAV asked for', async () => {
    fake.next.push({ kind: 'status', status: 200, body: { audio: 'somewhere else' } });
    expect(await failure(speak())).toMatchObject({ code: 'provider_invalid_response', transient: false });
  });
});

describe('what may pass is transient', () => {
  it('429 too_many_concurrent_requests with Retry-After', async () => {
    fake.next.push(tooManyConcurrentRequests('7'));
    const error = await failure(speak());
    expect(error).toMatchObject({ code: 'provider_unavailable', transient: true, status: 429, retryAfterMs: 7_000 });
    expect(error.message).toBe(
      'ElevenLabs has as many requests running for this account as its plan allows (asked to wait 7 s).',
    );
  });

  it('429 system_busy without Retry-After', async () => {
    fake.next.push(systemBusy());
    const error = await failure(speak());
    expect(error).toMatchObject({
      code: 'provider_unavailable',
      transient: true,
      status: 429,
      retryAfterMs: undefined,
    });
    expect(error.message).toBe('ElevenLabs is too busy to take the request.');
  });

  it('a request beyond the plan’s concurrency, while another is running', async () => {
    fake.concurrency = 1;
    fake.next.push({ kind: 'hang' });
    const first = new AbortController();
    const running = failure(speak({}, { signal: first.signal }));
    await fake.nextRequest();
    expect(await failure(speak())).toMatchObject({ transient: true, status: 429 });
    first.abort();
    await running;
  });

  it('5xx', async () => {
    fake.next.push(somethingWentWrong());
    expect(await failure(speak())).toMatchObject({ code: 'provider_unavailable', transient: true, status: 500 });
  });

  it('an answer that never comes, at the time limit', async () => {
    fake.next.push({ kind: 'hang' });
    expect(await failure(speak({}, {}, { timeoutMs: 500 }))).toMatchObject({
      code: 'provider_timeout',
      transient: true,
    });
  });
});

it('a canceled job aborts the call it is waiting on', async () => {
  fake.next.push({ kind: 'hang' });
  const controller = new AbortController();
  const call = failure(speak({}, { signal: controller.signal }));
  await fake.nextRequest();
  controller.abort(new Error('canceled'));
  expect((await call).message).toBe('canceled');
});

it('the catalog lists speech models billed per 1,000 characters, each with its limit', () => {
  for (const spec of elevenLabsModels)
    expect(spec).toMatchObject({ vendor: 'elevenlabs', capability: 'speech', unit: '1k_characters' });
  expect(elevenLabsModels.map((spec) => [spec.model, spec.maxCharacters])).toContainEqual([
    'eleven_multilingual_v2',
    10_000,
  ]);
});

describe('the fake refuses what ElevenLabs refuses', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'xi-api-key': fake.apiKey, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
  const george = '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=wav_24000';
  const text = { text: 'Hi.' };

  it('a request without xi-api-key, or with a wrong one', async () => {
    expect(
      await fetch(`${fake.url}${george}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(text),
      }).then(async (response) => [response.status, await response.json()]),
    ).toEqual([
      401,
      {
        detail: {
          status: 'needs_authorization',
          message: 'Neither authorization header nor xi-api-key received, please provide one.',
        },
      },
    ]);
    expect(await post(george, text, { 'xi-api-key': 'sk_wrong' })).toEqual({
      status: 401,
      body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } },
    });
    // Bearer is not ElevenLabs' scheme.
    expect((await post(george, text, { 'xi-api-key': '', authorization: `Bearer ${fake.apiKey}` })).status).toBe(401);
  });

  it('a body without text, with an unknown field, or not JSON (422, FastAPI’s shape)', async () => {
    expect(await post(george, { model_id: 'eleven_multilingual_v2' })).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] },
    });
    expect(await post(george, { ...text, voice: 'George' })).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ['body', 'voice'], type: 'extra_forbidden' }] },
    });
    expect(await post(george, 'text=Hi', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ['body'], type: 'model_attributes_type' }] },
    });
  });

  it('an output format it does not make, or one the plan does not include', async () => {
    expect(await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=wav', text)).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ['query', 'output_format'], type: 'enum' }] },
    });
    expect(await post('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=pcm_44100', text)).toEqual({
      status: 403,
      body: {
        detail: {
          status: 'output_format_not_allowed',
          message: 'Requested output format pcm_44100 (PCM at 44100hz) is only allowed for Pro tier and above.',
        },
      },
    });
  });

  it('an unknown model, an unknown voice, a language the model does not speak, too long a text', async () => {
    expect(await post(george, { ...text, model_id: 'eleven_multilingual_v9' })).toEqual({
      status: 400,
      body: {
        detail: {
          status: 'invalid_uid',
          message: "An invalid ID has been received: 'eleven_multilingual_v9'. Make sure to provide a correct one.",
        },
      },
    });
    expect(await post('/v1/text-to-speech/foo', text)).toEqual({
      status: 404,
      body: { detail: { status: 'voice_not_found', message: 'A voice with the voice_id foo was not found.' } },
    });
    expect(await post(george, { ...text, model_id: 'eleven_flash_v2_5', language_code: 'fa' })).toEqual({
      status: 400,
      body: { detail: { message: "Model 'eleven_flash_v2_5' does not support language_code 'fa'." } },
    });
    expect(await post(george, { text: 'a'.repeat(10_001) })).toMatchObject({
      status: 400,
      body: { detail: { status: 'max_character_limit_exceeded' } },
    });
  });

  it('a tempo outside 0.7–1.2, and any on Eleven v3', async () => {
    expect(await post(george, { ...text, voice_settings: { speed: 1.5 } })).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ['body', 'voice_settings', 'speed'], type: 'less_than_equal' }] },
    });
    expect(await post(george, { ...text, model_id: 'eleven_v3', voice_settings: { speed: 0.9 } })).toMatchObject({
      status: 422,
    });
  });

  it('answers raw 16-bit PCM, and the credits it cost in character-cost', async () => {
    const response = await fetch(`${fake.url}/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=pcm_16000`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'xi-api-key': fake.apiKey },
      body: JSON.stringify({ text: 'a'.repeat(41), model_id: 'eleven_flash_v2_5' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('character-cost')).toBe('21');
    expect(response.headers.get('request-id')).toMatch(/^[\w-]{20}$/);
    // 41 characters at a twentieth of a second each, 16,000 samples a second, 2 bytes a sample.
    expect((await response.arrayBuffer()).byteLength).toBe(Math.round((41 / 20) * 16_000) * 2);
  });
});
