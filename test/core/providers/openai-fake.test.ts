// The OpenAI fake's strictness, pinned with plain requests: what OpenAI refuses
// (test/helpers/fakes/openai/*.ts name the source of each rule), the fake
// refuses with OpenAI's status and body, so the adapters' tests
// (./openai.test.ts) prove something when their requests pass.
import sharp from 'sharp';
import { type FakeOpenAI, quotaExceeded, rateLimited, startFakeOpenAI } from '../../helpers/fakes/openai.ts';

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .png()
    .toBuffer();

describe('the fake refuses what OpenAI refuses', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const refusal = async (response: Response) => ({ status: response.status, ...((await response.json()) as object) });

  test.each([
    [
      'no key',
      'embeddings',
      {},
      { authorization: '' },
      401,
      { message: expect.stringContaining("didn't provide an API key") },
    ],
    ['a wrong key', 'embeddings', {}, { authorization: 'Bearer sk-nope-0000' }, 401, { code: 'invalid_api_key' }],
    [
      'a Basic header',
      'embeddings',
      {},
      { authorization: 'Basic eDp5' },
      401,
      { message: 'Missing bearer or basic authentication in header' },
    ],
    [
      'a body that is not JSON',
      'chat/completions',
      'model=gpt-4o-mini',
      { 'content-type': 'text/plain' },
      400,
      { message: expect.stringContaining('could not parse the JSON body') },
    ],
    [
      'response_format for gpt-image-2',
      'images/generations',
      { model: 'gpt-image-2', prompt: 'x', response_format: 'b64_json' },
      {},
      400,
      { code: 'unknown_parameter', param: 'response_format' },
    ],
    [
      'style for gpt-image-2',
      'images/generations',
      { model: 'gpt-image-2', prompt: 'x', style: 'vivid' },
      {},
      400,
      { code: 'unknown_parameter', param: 'style' },
    ],
    [
      '512x512 from gpt-image-1.5',
      'images/generations',
      { model: 'gpt-image-1.5', prompt: 'x', size: '512x512' },
      {},
      400,
      { code: 'invalid_value', param: 'size' },
    ],
    [
      '1000x1000 from gpt-image-2',
      'images/generations',
      { model: 'gpt-image-2', prompt: 'x', size: '1000x1000' },
      {},
      400,
      { param: 'size' },
    ],
    [
      '512x512 (too few pixels) from gpt-image-2',
      'images/generations',
      { model: 'gpt-image-2', prompt: 'x', size: '512x512' },
      {},
      400,
      { param: 'size' },
    ],
    ['no model (dall-e-2, shut down)', 'images/generations', { prompt: 'x' }, {}, 400, { param: 'model' }],
    [
      'a transparent JPEG',
      'images/generations',
      { model: 'gpt-image-2', prompt: 'x', background: 'transparent', output_format: 'jpeg' },
      {},
      400,
      { param: 'background' },
    ],
    [
      'an unknown speech key',
      'audio/speech',
      { model: 'tts-1', input: 'x', voice: 'alloy', pitch: 2 },
      {},
      400,
      { message: 'Unrecognized request argument supplied: pitch' },
    ],
    [
      'speech input over 4096',
      'audio/speech',
      { model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' },
      {},
      400,
      { code: 'string_above_max_length' },
    ],
    [
      'speed 5',
      'audio/speech',
      { model: 'tts-1', input: 'x', voice: 'alloy', speed: 5 },
      {},
      400,
      { code: 'decimal_above_max_value' },
    ],
    [
      'instructions for tts-1',
      'audio/speech',
      { model: 'tts-1', input: 'x', voice: 'alloy', instructions: 'calm' },
      {},
      400,
      { param: 'instructions' },
    ],
    [
      'dimensions for ada-002',
      'embeddings',
      { model: 'text-embedding-ada-002', input: 'x', dimensions: 1536 },
      {},
      400,
      { message: 'This model does not support specifying dimensions.' },
    ],
    [
      'an empty text to embed',
      'embeddings',
      { model: 'text-embedding-3-small', input: [''] },
      {},
      400,
      { message: expect.stringContaining("'$.input' is invalid") },
    ],
    [
      'tool_choice without tools',
      'chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], tool_choice: 'auto' },
      {},
      400,
      { param: 'tool_choice' },
    ],
    [
      'a tool result nothing asked for',
      'chat/completions',
      {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'call_1', content: 'y' },
        ],
      },
      {},
      400,
      { param: 'messages.[1].role' },
    ],
    [
      'temperature 0.2 for a reasoning model',
      'chat/completions',
      { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'x' }], temperature: 0.2 },
      {},
      400,
      { code: 'unsupported_value' },
    ],
    [
      'JSON mode without the word',
      'chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } },
      {},
      400,
      { param: 'messages' },
    ],
    [
      'a model the account lacks',
      'chat/completions',
      { model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] },
      {},
      404,
      { code: 'model_not_found' },
    ],
  ])('%s', async (_name, path, body, headers, status, error) => {
    const answer = await refusal(await post(path, body, headers));
    expect(answer).toMatchObject({ status, error: { type: expect.any(String), ...error } });
    expect(answer).toHaveProperty('error.param');
    expect(answer).toHaveProperty('error.code');
  });

  test('429 answers carry Retry-After only when a wait was computed', async () => {
    fake.script(
      'embeddings',
      { kind: 'refuse', refusal: rateLimited(3) },
      { kind: 'refuse', refusal: quotaExceeded() },
    );
    const body = { model: 'text-embedding-3-small', input: 'x' };
    const limited = await post('embeddings', body);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    const quota = await post('embeddings', body);
    expect(quota.status).toBe(429);
    expect(quota.headers.get('retry-after')).toBeNull();
  });

  test('edits take `image[]` as SDKs send arrays, and refuse a picture sent as application/octet-stream', async () => {
    const image = await png(1024, 1024);
    const form = (type: string, field: string) => {
      const data = new FormData();
      data.append('model', 'gpt-image-2');
      data.append('prompt', 'x');
      data.append(field, new Blob([image], { type }), 'a.png');
      if (field === 'image[]') data.append(field, new Blob([image], { type }), 'b.png');
      return data;
    };
    const send = (data: FormData) =>
      fetch(`${fake.url}/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.apiKey}` },
        body: data,
      });
    expect((await send(form('image/png', 'image[]'))).status).toBe(200);
    const refused = await refusal(await send(form('application/octet-stream', 'image')));
    expect(refused).toMatchObject({ status: 400, error: { code: 'unsupported_file_mimetype', param: 'image' } });
  });

  test('an edit mask must have the size of the picture', async () => {
    const data = new FormData();
    data.append('model', 'gpt-image-2');
    data.append('prompt', 'x');
    data.append('image', new Blob([await png(1024, 1024)], { type: 'image/png' }), 'a.png');
    data.append('mask', new Blob([await png(512, 512)], { type: 'image/png' }), 'm.png');
    const answer = await fetch(`${fake.url}/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}` },
      body: data,
    });
    expect(await refusal(answer)).toMatchObject({ status: 400, error: { param: 'mask' } });
  });

  test('a path OpenAI does not have is 404 Invalid URL', async () => {
    expect(await refusal(await post('images/variations/new', {}))).toMatchObject({
      status: 404,
      error: { message: 'Invalid URL (POST /v1/images/variations/new)' },
    });
  });
});

describe('the fake answers what OpenAI answers', () => {
  const speak = (format: string) =>
    fetch(`${fake.url}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'x', voice: 'alloy', response_format: format }),
    }).then(async (response) => Buffer.from(await response.arrayBuffer()));

  test('speech in the format asked, as real audio', async () => {
    expect((await speak('wav')).toString('latin1', 0, 4)).toBe('RIFF');
    expect((await speak('flac')).toString('latin1', 0, 4)).toBe('fLaC');
    expect((await speak('opus')).toString('latin1', 0, 4)).toBe('OggS');
    const mp3 = await speak('mp3');
    // An ID3 tag, or straight into an MPEG audio frame (11 sync bits).
    expect(mp3.toString('latin1', 0, 3) === 'ID3' || (mp3[0] === 0xff && (mp3[1]! & 0xe0) === 0xe0)).toBe(true);
    expect((await speak('pcm')).length).toBe(24_000);
  });
});
