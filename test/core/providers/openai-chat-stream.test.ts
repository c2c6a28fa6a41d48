// OpenAI's chat streamed (`stream: true`, as agent runs ask it), against the
// strict fake on 127.0.0.1 (test/helpers/fakes/openai.ts), which answers
// server-sent `chat.completion.chunk` events as OpenAI's reference has them:
// the adapter hears the text as it comes and returns the same whole answer —
// tool calls put back together from their fragments, the tokens from the
// last chunk; a stream that breaks off or is canceled fails as the provider
// chain needs. The fake's own rules for streaming are pinned at the end.
import { JobError, permanent } from '../../../core/jobs/errors.ts';
import type { ChatRequest } from '../../../core/providers/capabilities.ts';
import { openaiChat } from '../../../core/providers/openai/chat.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const chat = () => openaiChat({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 20_000 });
const call = (signal = new AbortController().signal) => ({ model: 'gpt-4.1-mini', signal });
const lastBody = () => fake.requests.at(-1)!.body as Record<string, unknown>;

/** A request whose text is heard piece by piece: the pieces, in order. */
function listening(request: Omit<ChatRequest, 'onText'>) {
  const pieces: string[] = [];
  return { request: { ...request, onText: (piece: string) => pieces.push(piece) }, pieces };
}

const question = { role: 'user' as const, content: 'When does the ferry leave?' };

test('the text comes piece by piece, and the answer is whole, with the tokens of the last chunk', async () => {
  const content = 'The ferry leaves the harbour at nine every morning, and at noon on Sundays.';
  fake.script('chat/completions', {
    kind: 'ok',
    reply: { content, usage: { promptTokens: 321, completionTokens: 45 } },
  });
  const { request, pieces } = listening({ messages: [question], temperature: 0.3 });
  const answer = await chat().chat(request, call());
  expect(pieces.length).toBeGreaterThan(5);
  expect(pieces.join('')).toBe(content);
  expect(answer).toEqual({
    content,
    toolCalls: [],
    finishReason: 'stop',
    usage: { inputTokens: 321, outputTokens: 45 },
  });
  expect(lastBody()).toMatchObject({ stream: true, stream_options: { include_usage: true }, temperature: 0.3 });
});

test('tool calls arrive in fragments and are put back together by index, parallel ones apart', async () => {
  const post = JSON.stringify({ title: 'Ferry times in winter', body: 'The ferry leaves at nine, every day.' });
  const search = JSON.stringify({ query: 'ferry timetable winter' });
  const tools = ['create_post', 'knowledge_search'].map((name) => ({
    name,
    description: name,
    parameters: { type: 'object', properties: {} },
  }));
  fake.script('chat/completions', {
    kind: 'ok',
    reply: {
      toolCalls: [
        { id: 'call_search', name: 'knowledge_search', arguments: search },
        { id: 'call_post', name: 'create_post', arguments: post },
      ],
      usage: { promptTokens: 500, completionTokens: 60 },
    },
  });
  const { request, pieces } = listening({ messages: [question], tools });
  const answer = await chat().chat(request, call());
  expect(pieces).toEqual([]);
  expect(answer).toEqual({
    content: null,
    toolCalls: [
      { id: 'call_search', name: 'knowledge_search', arguments: search },
      { id: 'call_post', name: 'create_post', arguments: post },
    ],
    finishReason: 'tool_calls',
    usage: { inputTokens: 500, outputTokens: 60 },
  });
});

test('a stream that breaks off before its finish reason is a transient failure', async () => {
  fake.script('chat/completions', { kind: 'truncated' });
  const { request } = listening({ messages: [question] });
  const failure = await chat()
    .chat(request, call())
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(failure).toBeInstanceOf(JobError);
  expect(failure).toMatchObject({ code: 'provider_unavailable', transient: true });
});

test('a canceled job aborts a stream in flight, failing with the job’s own reason', async () => {
  fake.script('chat/completions', { kind: 'stall' });
  const controller = new AbortController();
  const { request } = listening({ messages: [question] });
  const pending = chat()
    .chat(request, call(controller.signal))
    .catch((error: unknown) => error);
  await fake.nextRequest('chat/completions');
  const canceled = permanent('canceled', 'The job was canceled.');
  controller.abort(canceled);
  expect(await pending).toBe(canceled);
});

test('callers that do not listen are answered whole, as before', async () => {
  fake.script('chat/completions', { kind: 'ok', reply: { content: 'Nine.' } });
  const answer = await chat().chat({ messages: [question] }, call());
  expect(answer).toMatchObject({ content: 'Nine.', finishReason: 'stop' });
  expect(lastBody()).not.toHaveProperty('stream');
  expect(lastBody()).not.toHaveProperty('stream_options');
});

describe('the fake streams as OpenAI does', () => {
  const post = (body: Record<string, unknown>) =>
    fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${fake.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1-mini', messages: [question], ...body }),
    });

  test('server-sent chunks: the role first, the finish reason, the usage with no choices, then [DONE]', async () => {
    fake.script('chat/completions', { kind: 'ok', reply: { content: 'At nine.' } });
    const res = await post({ stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: null });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  });

  test('without include_usage there is no usage chunk', async () => {
    const res = await post({ stream: true, stream_options: { include_obfuscation: false } });
    const chunks = (await res.text())
      .split('\n\n')
      .filter((event) => event && event !== 'data: [DONE]')
      .map((event) => JSON.parse(event.slice('data: '.length)));
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !('usage' in chunk))).toBe(true);
    expect(chunks.some((chunk) => 'obfuscation' in chunk)).toBe(false);
  });

  test('refuses stream_options without stream, in OpenAI’s words', async () => {
    for (const body of [{ stream_options: { include_usage: true } }, { stream: false, stream_options: {} }]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: {
          message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
          type: 'invalid_request_error',
          param: 'stream_options',
          code: null,
        },
      });
    }
    expect((await post({ stream: 'yes' })).status).toBe(400);
    expect((await post({ stream: true, stream_options: { include_usage: 'yes' } })).status).toBe(400);
  });
});
