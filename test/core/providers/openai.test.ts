// The OpenAI adapters against a strict fake of OpenAI's API on 127.0.0.1
// (test/helpers/fakes/openai.ts), over real HTTP: what they send passes the
// checks OpenAI makes, what OpenAI answers becomes files, speech, messages and
// vectors, and each failure becomes the JobError the provider chain acts on.
// The fake's own strictness is pinned in ./openai-fake.test.ts.
import sharp from 'sharp';
import { JobError, permanent } from '../../../core/jobs/errors.ts';
import type { VendorSettings } from '../../../core/providers/capabilities.ts';
import { openaiChat } from '../../../core/providers/openai/chat.ts';
import { openaiEmbeddings } from '../../../core/providers/openai/embeddings.ts';
import { openaiImageEdits } from '../../../core/providers/openai/image-edits.ts';
import { openaiImages } from '../../../core/providers/openai/images.ts';
import { openaiSpeech } from '../../../core/providers/openai/speech.ts';
import {
  type FakeOpenAI,
  quotaExceeded,
  rateLimited,
  serverError,
  startFakeOpenAI,
} from '../../helpers/fakes/openai.ts';
import { pollUntil } from '../../helpers/poll.ts';

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const settings = (overrides: Partial<VendorSettings> = {}): VendorSettings => ({
  apiKey: fake.apiKey,
  baseUrl: fake.url,
  timeoutMs: 20_000,
  ...overrides,
});
const call = (model: string, signal = new AbortController().signal) => ({ model, signal });
const lastBody = () => fake.requests.at(-1)!.body as Record<string, unknown>;

/** The JobError a promise fails with. */
async function failureOf(promise: Promise<unknown>): Promise<JobError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(JobError);
    return error as JobError;
  }
  throw new Error('The call succeeded; a failure was expected.');
}

const png = (width: number, height: number, alpha = false) =>
  sharp({ create: { width, height, channels: alpha ? 4 : 3, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .png()
    .toBuffer();

describe('images', () => {
  const images = () => openaiImages(settings());
  const request = { prompt: 'A lighthouse at dawn', count: 1, width: 1024, height: 1024, format: 'png' as const };

  test('gpt-image-2 makes a 1024x768 picture, asked with the parameters it takes and nothing else', async () => {
    const files = await images().generate(
      { ...request, count: 2, width: 1024, height: 768, format: 'webp', quality: 'low' },
      call('gpt-image-2'),
    );
    expect(Array.isArray(files) && files.length).toBe(2);
    const [file] = files as { bytes: Buffer; contentType?: string }[];
    expect(file!.contentType).toBe('image/webp');
    expect(await sharp(file!.bytes).metadata()).toMatchObject({ width: 1024, height: 768, format: 'webp' });
    const body = lastBody();
    expect(body).toEqual({
      model: 'gpt-image-2',
      prompt: 'A lighthouse at dawn',
      n: 2,
      size: '1024x768',
      output_format: 'webp',
      quality: 'low',
      stream: false,
    });
    expect(body).not.toHaveProperty('response_format');
    expect(body).not.toHaveProperty('style');
  });

  test('a size the model lacks is refused by OpenAI, which is permanent: asking again gets the same answer', async () => {
    const error = await failureOf(images().generate({ ...request, width: 1024, height: 768 }, call('gpt-image-1.5')));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 400 });
    expect(error.message).toBe('The model server refused the request (400, on size).');
    // OpenAI's own words stay in the cause, for the logs.
    expect(String((error.cause as Error).message)).toContain(
      "Invalid value: '1024x768'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.",
    );
    const grid = await failureOf(images().generate({ ...request, width: 1000, height: 1000 }, call('gpt-image-2')));
    expect(grid).toMatchObject({ code: 'provider_rejected', transient: false, status: 400 });
    expect(String((grid.cause as Error).message)).toContain('divisible by 16');
  });

  test('a model OpenAI has shut down is refused, permanently', async () => {
    const error = await failureOf(images().generate(request, call('dall-e-3')));
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 400 });
  });
});

describe('image edits', () => {
  test('the picture and its mask go as multipart files of their type; the answer is the edited pictures', async () => {
    const [image, mask] = await Promise.all([png(1024, 1024), png(1024, 1024, true)]);
    const files = await openaiImageEdits(settings()).edit(
      {
        instruction: 'Add a red door',
        image: { bytes: image },
        mask: { bytes: mask },
        count: 1,
        width: 1536,
        height: 1024,
        format: 'png',
      },
      call('gpt-image-2'),
    );
    expect(files).toHaveLength(1);
    const [file] = files as { bytes: Buffer }[];
    expect(await sharp(file!.bytes).metadata()).toMatchObject({ width: 1536, height: 1024, format: 'png' });
    const recorded = fake.requests.at(-1)!;
    expect(recorded.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(recorded.files.map(({ field, mimeType }) => ({ field, mimeType }))).toEqual([
      { field: 'image', mimeType: 'image/png' },
      { field: 'mask', mimeType: 'image/png' },
    ]);
    expect(recorded.body).toEqual({
      model: 'gpt-image-2',
      prompt: 'Add a red door',
      n: '1',
      stream: 'false',
      size: '1536x1024',
      output_format: 'png',
    });
  });

  test('a picture OpenAI cannot read is refused before any request', async () => {
    const error = await failureOf(
      openaiImageEdits(settings()).edit(
        { instruction: 'Brighter', image: { bytes: Buffer.from('GIF89a') }, count: 1, format: 'png' },
        call('gpt-image-2'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('speech', () => {
  test('gpt-4o-mini-tts speaks in WAV, with our neutral voice mapped and the language told as instructions', async () => {
    const speech = await openaiSpeech(settings()).synthesize(
      { text: 'Guten Morgen, Welt.', voice: 'female', language: 'de', speed: 1.5 },
      call('gpt-4o-mini-tts'),
    );
    expect(speech).toMatchObject({ speedApplied: true, characters: 19 });
    if (!('audio' in speech)) throw new Error('no audio');
    expect(speech.audio.toString('latin1', 0, 4)).toBe('RIFF');
    expect(speech.audio.toString('latin1', 8, 12)).toBe('WAVE');
    expect(lastBody()).toEqual({
      model: 'gpt-4o-mini-tts',
      input: 'Guten Morgen, Welt.',
      voice: 'shimmer',
      response_format: 'wav',
      speed: 1.5,
      instructions: 'Speak in German.',
    });
  });

  test('tts-1 is sent no instructions, which it refuses; an OpenAI voice name passes through', async () => {
    await openaiSpeech(settings()).synthesize(
      { text: 'Hello.', voice: 'onyx', language: 'en', speed: 1 },
      call('tts-1'),
    );
    expect(lastBody()).toEqual({ model: 'tts-1', input: 'Hello.', voice: 'onyx', response_format: 'wav', speed: 1 });
  });

  test('a custom voice goes by its id, as OpenAI takes one', async () => {
    await openaiSpeech(settings()).synthesize(
      { text: 'Hello.', voice: 'voice_1234', language: 'en', speed: 1 },
      call('gpt-4o-mini-tts'),
    );
    expect(lastBody()).toMatchObject({ voice: { id: 'voice_1234' } });
  });

  test('a text longer than OpenAI reads at once is refused before any request', async () => {
    const error = await failureOf(
      openaiSpeech(settings()).synthesize(
        { text: 'a'.repeat(4097), voice: 'default', language: 'en', speed: 1 },
        call('tts-1'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false });
    expect(fake.requests).toHaveLength(0);
  });

  test('an answer cut off in the middle of the audio runs into the time limit', async () => {
    fake.script('audio/speech', { kind: 'stall' });
    const error = await failureOf(
      openaiSpeech(settings({ timeoutMs: 400 })).synthesize(
        { text: 'Hello.', voice: 'default', language: 'en', speed: 1 },
        call('tts-1'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider_timeout', transient: true });
  });
});

describe('chat', () => {
  const weather = {
    name: 'get_weather',
    description: 'The weather in a city now',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  };

  test('a tool call and its result make a round trip that passes OpenAI’s checks', async () => {
    const chat = openaiChat(settings());
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
    });
    const question = { role: 'user' as const, content: 'What is the weather in Oslo?' };
    const first = await chat.chat({ messages: [question], tools: [weather], toolChoice: 'auto' }, call('gpt-4.1-mini'));
    expect(first).toMatchObject({
      content: null,
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    });
    expect(first.usage?.inputTokens).toBeGreaterThan(0);
    expect(lastBody()).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather.parameters } }],
      tool_choice: 'auto',
    });

    fake.script('chat/completions', { kind: 'ok', reply: { content: 'It is sunny in Oslo.' } });
    const second = await chat.chat(
      {
        messages: [
          question,
          { role: 'assistant', content: null, toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'call_oslo', content: '{"sky":"clear"}' },
        ],
        tools: [weather],
      },
      call('gpt-4.1-mini'),
    );
    expect(second).toMatchObject({ content: 'It is sunny in Oslo.', finishReason: 'stop', toolCalls: [] });
    expect((lastBody().messages as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_oslo', content: '{"sky":"clear"}' },
    ]);
  });

  test('JSON mode gets the word OpenAI wants to see; a reasoning model gets no temperature', async () => {
    const answer = await openaiChat(settings()).chat(
      {
        messages: [{ role: 'user', content: 'Three colours, please.' }],
        json: true,
        temperature: 0.2,
        maxOutputTokens: 200,
      },
      call('gpt-5.4-mini'),
    );
    expect(JSON.parse(answer.content!)).toEqual({ answer: 'fake' });
    const body = lastBody();
    expect(body).toMatchObject({ response_format: { type: 'json_object' }, max_completion_tokens: 200 });
    expect(body).not.toHaveProperty('temperature');
    expect(body.messages).toContainEqual({ role: 'system', content: 'Answer with one JSON object.' });
  });

  test('a picture in a user message goes as a data URL', async () => {
    await openaiChat(settings()).chat(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', image: { bytes: await png(16, 16) } },
            ],
          },
        ],
      },
      call('gpt-4o-mini'),
    );
    const [message] = lastBody().messages as { content: { type: string; image_url?: { url: string } }[] }[];
    expect(message!.content[1]!.image_url!.url).toMatch(/^data:image\/png;base64,/);
  });
});

describe('embeddings', () => {
  test('vectors come back through base64, in the order of the texts, shortened where the model allows', async () => {
    const result = await openaiEmbeddings(settings()).embed(['alpha', 'beta', 'alpha'], {
      ...call('text-embedding-3-small'),
      dimensions: 256,
    });
    expect(lastBody()).toMatchObject({ encoding_format: 'base64', dimensions: 256 });
    expect(result.vectors).toHaveLength(3);
    expect(result.vectors.every((vector) => vector.length === 256)).toBe(true);
    expect(Math.hypot(...result.vectors[0]!)).toBeCloseTo(1, 4);
    expect(result.vectors[2]).toEqual(result.vectors[0]);
    expect(result.vectors[1]).not.toEqual(result.vectors[0]);
    expect(result.tokens).toBeGreaterThan(0);
  });

  test('more texts than one request takes go in batches', async () => {
    const texts = Array.from({ length: 2050 }, (_, i) => `text ${i}`);
    const result = await openaiEmbeddings(settings()).embed(texts, {
      ...call('text-embedding-3-small'),
      dimensions: 8,
    });
    expect(fake.requests.map((request) => (request.body as { input: string[] }).input.length)).toEqual([2048, 2]);
    expect(result.vectors).toHaveLength(2050);
  });

  test('ada-002 is never sent dimensions, and cannot make other lengths', async () => {
    await openaiEmbeddings(settings()).embed(['x'], { ...call('text-embedding-ada-002'), dimensions: 1536 });
    expect(lastBody()).not.toHaveProperty('dimensions');
    const error = await failureOf(
      openaiEmbeddings(settings()).embed(['x'], { ...call('text-embedding-ada-002'), dimensions: 256 }),
    );
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false });
  });
});

describe('failures', () => {
  const embed = (overrides: Partial<VendorSettings> = {}, signal?: AbortSignal) =>
    openaiEmbeddings(settings(overrides)).embed(['x'], call('text-embedding-3-small', signal));

  test('429 with Retry-After: transient, with the wait and the status the chain learns the limit from', async () => {
    fake.script('embeddings', { kind: 'refuse', refusal: rateLimited(7) });
    const error = await failureOf(embed());
    expect(error).toMatchObject({ code: 'provider_unavailable', transient: true, status: 429, retryAfterMs: 7000 });
  });

  test('429 without Retry-After: transient, no wait named; a spent quota says so', async () => {
    fake.script('embeddings', { kind: 'refuse', refusal: rateLimited() }, { kind: 'refuse', refusal: quotaExceeded() });
    expect(await failureOf(embed())).toMatchObject({ transient: true, status: 429, retryAfterMs: undefined });
    const quota = await failureOf(embed());
    expect(quota).toMatchObject({ transient: true, status: 429, retryAfterMs: undefined });
    expect(quota.message).toMatch(/quota/);
  });

  test('a 500 is transient, and the SDK does not retry it itself', async () => {
    fake.script('embeddings', { kind: 'refuse', refusal: serverError() });
    expect(await failureOf(embed())).toMatchObject({ code: 'provider_unavailable', transient: true, status: 500 });
    expect(fake.requests).toHaveLength(1);
  });

  test('a slow answer within the time limit is waited for', async () => {
    fake.script('embeddings', { kind: 'ok', delayMs: 300 });
    expect((await embed()).vectors).toHaveLength(1);
  });

  test('an answer that never comes runs into the time limit', async () => {
    fake.script('embeddings', { kind: 'hang' });
    expect(await failureOf(embed({ timeoutMs: 300 }))).toMatchObject({ code: 'provider_timeout', transient: true });
  });

  test('a canceled job aborts the call in flight, failing with the job’s own reason', async () => {
    fake.script('embeddings', { kind: 'hang' }, { kind: 'hang' });
    const canceled = permanent('canceled', 'The job was canceled.');
    const controller = new AbortController();
    const pending = failureOf(embed({}, controller.signal));
    await pollUntil(
      async () => fake.requests.length,
      (count) => count === 1,
    );
    controller.abort(canceled);
    expect(await pending).toBe(canceled);

    const other = new AbortController();
    const second = failureOf(embed({}, other.signal));
    await pollUntil(
      async () => fake.requests.length,
      (count) => count === 2,
    );
    other.abort();
    expect(await second).toMatchObject({ code: 'canceled', transient: false });
  });

  test('a wrong key is refused, permanently; no key for OpenAI itself is a configuration error', async () => {
    expect(await failureOf(embed({ apiKey: 'sk-wrong-key-1234' }))).toMatchObject({
      code: 'provider_rejected',
      transient: false,
      status: 401,
    });
    const missing = await failureOf(embed({ apiKey: undefined, baseUrl: 'https://api.openai.com/v1' }));
    expect(missing).toMatchObject({ code: 'not_configured', transient: false });
  });

  test('a keyless compatible server is sent no Authorization header at all', async () => {
    const error = await failureOf(embed({ apiKey: undefined }));
    expect(fake.requests.at(-1)!.headers.authorization).toBeUndefined();
    expect(error).toMatchObject({ code: 'provider_rejected', status: 401 });
  });

  test('an answer that is not JSON is garbage, permanently', async () => {
    fake.script('embeddings', { kind: 'raw', contentType: 'application/json', body: '<html>busy</html>' });
    expect(await failureOf(embed())).toMatchObject({ code: 'provider_invalid_response', transient: false });
  });

  test('a vLLM-style flat error body keeps the server’s words', async () => {
    fake.script('embeddings', {
      kind: 'refuse',
      refusal: {
        status: 400,
        body: {
          object: 'error',
          message: 'This model has no pooler.',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      },
    });
    const error = await failureOf(embed());
    expect(error).toMatchObject({ code: 'provider_rejected', transient: false, status: 400 });
    expect(String((error.cause as Error).message)).toContain('This model has no pooler.');
  });
});
