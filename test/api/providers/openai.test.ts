// OpenAI through the platform's HTTP API, against the strict fake written from
// OpenAI's reference (test/helpers/fakes/openai.ts): the request the adapter
// sends passes the fake's checks, and what OpenAI answers becomes the job —
// images, edits, speech, text and embeddings; each refusal the adapter reads
// fails the job at once in words of ours; a 429, a 5xx or no answer passes
// the job to the next provider, or has it retried after the wait when OpenAI
// is the last; a cancel aborts the call in flight.
import sharp from 'sharp';
import request from 'supertest';
import { signedIn, type Caller } from '../../helpers/factories.ts';
import { agentRow } from '../../helpers/agents.ts';
import { giveCredits } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';
import {
  quotaExceeded,
  rateLimited,
  serverError,
  startFakeOpenAI,
  type FakeOpenAI,
  type Script,
} from '../../helpers/fakes/openai.ts';
import { modelNotFound, refusal, wrongKey } from '../../helpers/fakes/openai/errors.ts';
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

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
const suite = providerSuite(() => ({
  // OpenAI first with the placeholder behind it for images; alone for everything else (the last of its chain).
  IMAGE_PROVIDERS: 'openai,local',
  OPENAI_IMAGE_MODELS: 'gpt-image-2,gpt-image-1.5',
  IMAGE_EDIT_PROVIDERS: 'openai',
  SPEECH_PROVIDERS: 'openai',
  OPENAI_SPEECH_MODELS: 'gpt-4o-mini-tts,tts-1',
  TEXT_PROVIDERS: 'openai',
  EMBEDDING_PROVIDERS: 'openai',
  OPENAI_BASE_URL: fake.url,
  OPENAI_API_KEY: fake.apiKey,
}));
afterEach(() => fake.reset());
afterAll(() => fake.close());

const sent = (path: string) => fake.requests.filter((call) => call.path === path);
const refuse = (answer: { status: number; body: unknown; headers?: Record<string, string> }): Script => ({
  kind: 'refuse',
  refusal: answer,
});

// OpenAI's documented errors (platform.openai.com/docs/guides/error-codes) as the fake answers them, and
// the sentence of ours the tenant reads instead of OpenAI's words.
const moderationBlocked = refusal(
  400,
  'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
  { code: 'moderation_blocked' },
);
const refusals = [
  ['400, the safety system', moderationBlocked, /^The model server refused the request \(400\)\.$/],
  [
    '401, a key it does not take',
    wrongKey('sk-fake-wrong-key-0000'),
    /^The model server refused the configured API key\.$/,
  ],
  [
    '403, a region it does not serve',
    refusal(403, 'Country, region, or territory not supported', { code: 'unsupported_country_region_territory' }),
    /^The model server refused access to this model\.$/,
  ],
  [
    '404, a model the account lacks',
    modelNotFound('gpt-image-2'),
    /^The model server does not offer this model to the configured account\.$/,
  ],
] as const;

describe('images', () => {
  it('makes images with gpt-image-2 at a size it makes, sending only what the model takes', async () => {
    const id = await submit(suite, '/media/generate', { prompt: 'A lighthouse at dusk', size: '1024x768', count: 2 });
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { provider: 'openai', model: 'gpt-image-2', placeholder: false, count: 2 },
    });
    expect(done.media_ids).toHaveLength(2);
    const body = sent('/v1/images/generations')[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ model: 'gpt-image-2', prompt: 'A lighthouse at dusk', n: 2, size: '1024x768' });
    expect(body).not.toHaveProperty('response_format');
    expect(body).not.toHaveProperty('style');
    expect(await providerCalls(suite, id)).toMatchObject([
      { capability: 'image', vendor: 'openai', model: 'gpt-image-2', outcome: 'succeeded' },
    ]);
  });

  it('refuses at submit a size the model cannot make, naming those it can', async () => {
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/generate`)
      .set(suite.author.auth)
      .send({ prompt: 'x', size: '1000x1000', model: 'gpt-image-2' })
      .expect(422);
    expect(res.body.errors[0]).toMatchObject({ path: 'body.size', message: expect.stringMatching(/multiples of 16/) });
    expect(fake.requests).toEqual([]);
  });

  it('uses a model the request names when the operator allows it, and refuses one it does not, naming those it does', async () => {
    const id = await submit(suite, '/media/generate', { prompt: 'A fox', model: 'gpt-image-1.5' });
    expect(await jobWhen(suite, id)).toMatchObject({ status: 'succeeded', output: { model: 'gpt-image-1.5' } });
    expect(sent('/v1/images/generations').map((call) => (call.body as { model: string }).model)).toEqual([
      'gpt-image-1.5',
    ]);

    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/generate`)
      .set(suite.author.auth)
      .send({ prompt: 'A fox', model: 'dall-e-3' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.model', message: 'one of gpt-image-2, gpt-image-1.5, local' }]);
  });

  it.each(refusals)(
    'fails the job at once on a refusal (%s), in plain words, its credits released',
    async (_, answer, words) => {
      fake.script('images/generations', refuse(answer));
      const done = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }));
      await expectRefused(suite, done, words, answer.body.error.message);
      // Refused, not passed to the placeholder: it would be asked the same thing.
      expect(await providerCalls(suite, done.id)).toMatchObject([
        { vendor: 'openai', outcome: 'failed', error_code: 'provider_rejected', http_status: answer.status },
      ]);
    },
  );

  it.each([
    ['429 with Retry-After', rateLimited(30), 429],
    ['429 without Retry-After', rateLimited(), 429],
    ['429, the quota spent', quotaExceeded(), 429],
    ['500', serverError(), 500],
    [
      '503, overloaded',
      refusal(503, 'The engine is currently overloaded, please try again later.', { type: 'server_error' }),
      503,
    ],
  ])('passes the job to the next provider when OpenAI answers %s', async (_, answer, status) => {
    fake.script('images/generations', refuse(answer));
    const done = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }));
    expect(done).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      output: { provider: 'local', model: 'local', placeholder: true },
    });
    expect(await providerCalls(suite, done.id)).toMatchObject([
      { vendor: 'openai', outcome: 'passed_on', error_code: 'provider_unavailable', http_status: status },
      { vendor: 'local', outcome: 'succeeded' },
    ]);
  });

  it('sends the next jobs past OpenAI while the wait its 429 named lasts, asking it nothing', async () => {
    fake.script('images/generations', refuse(rateLimited(30)));
    await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'The first' }));
    const next = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'The next' }));
    expect(next).toMatchObject({ status: 'succeeded', attempts: 1, output: { provider: 'local' } });
    expect(await providerCalls(suite, next.id)).toMatchObject([{ vendor: 'local', outcome: 'succeeded' }]);
    expect(sent('/v1/images/generations')).toHaveLength(1);
  });

  it('passes the job on when OpenAI does not answer within AI_TIMEOUT_MS', async () => {
    fake.script('images/generations', { kind: 'hang' });
    await suite.withWorker({ AI_TIMEOUT_MS: '1000' }, async () => {
      await expectPassedOnToLocal(suite, await submit(suite, '/media/generate', { prompt: 'A harbour' }), 'openai', {
        code: 'provider_timeout',
        status: null,
      });
    });
  });

  it('aborts the call in flight when the job is canceled, and releases its credits', async () => {
    // OpenAI never answers; only the cancel ends the call (AI_TIMEOUT_MS is a minute).
    fake.script('images/generations', { kind: 'hang' });
    const id = await submit(suite, '/media/generate', { prompt: 'A harbour', model: 'gpt-image-2' });
    await pollUntil(
      async () => sent('/v1/images/generations').length,
      (count) => count > 0,
      { tries: 300, everyMs: 100 },
    );
    const canceled = await request(suite.t.app)
      .post(`/${suite.site.slug}/jobs/${id}/cancel`)
      .set(suite.author.auth)
      .expect(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', credits_charged: 0 });
    const calls = await providerCallsWhen(suite, id, (found) => found.length > 0);
    expect(calls).toMatchObject([{ vendor: 'openai', outcome: 'canceled' }]);
    expect(await ledgerKinds(suite, id)).toEqual(['reservation', 'release']);
    expect(await readJob(suite, id)).toMatchObject({ status: 'canceled', media_ids: [] });
  });
});

describe('image edits', () => {
  async function uploaded(): Promise<string> {
    const png = await sharp({ create: { width: 256, height: 256, channels: 3, background: '#88aa44' } })
      .png()
      .toBuffer();
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/`)
      .set(suite.author.auth)
      .attach('file', png, 'field.png')
      .expect(201);
    await jobWhen(suite, res.body.job_id);
    return res.body.id as string;
  }

  it('edits an image by instruction with OpenAI, as its new version', async () => {
    const media = await uploaded();
    const id = await submit(suite, `/media/${media}/edit-with-ai`, { instruction: 'Add a red kite in the sky' });
    const done = await jobWhen(suite, id);
    expect(done).toMatchObject({
      status: 'succeeded',
      output: { media_id: media, version: 2, provider: 'openai', model: 'gpt-image-2', placeholder: false },
    });
    const edit = sent('/v1/images/edits')[0]!;
    expect(edit.body).toMatchObject({ model: 'gpt-image-2', prompt: 'Add a red kite in the sky', n: '1' });
    expect(edit.files.map((file) => [file.field, file.mimeType])).toEqual([['image', 'image/png']]);
  });

  it('fails the edit at once when OpenAI refuses it, the item unchanged and its credits released', async () => {
    const media = await uploaded();
    fake.script('images/edits', refuse(moderationBlocked));
    const done = await jobWhen(suite, await submit(suite, `/media/${media}/edit-with-ai`, { instruction: 'x' }));
    await expectRefused(suite, done, /refused the request \(400\)/, moderationBlocked.body.error.message);
    const versions = await request(suite.t.app)
      .get(`/${suite.site.slug}/media/${media}/image-versions`)
      .set(suite.author.auth)
      .expect(200);
    expect(versions.body.items).toHaveLength(1);
  });
});

describe('speech (OpenAI the last of its chain)', () => {
  it('speaks with the default model, or with one the request names that the operator allows', async () => {
    const first = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'The ferry leaves at nine.' }));
    expect(first).toMatchObject({
      status: 'succeeded',
      output: { provider: 'openai', model: 'gpt-4o-mini-tts', placeholder: false },
    });
    const named = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'And at ten.', model: 'tts-1' }));
    expect(named).toMatchObject({ status: 'succeeded', output: { model: 'tts-1' } });
    expect(sent('/v1/audio/speech').map((call) => (call.body as { model: string }).model)).toEqual([
      'gpt-4o-mini-tts',
      'tts-1',
    ]);
  });

  it('refuses at submit a model the operator does not allow, naming those it does', async () => {
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/media/tts`)
      .set(suite.author.auth)
      .send({ text: 'Hello', model: 'tts-1-hd' })
      .expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.model', message: 'one of gpt-4o-mini-tts, tts-1' }]);
    expect(fake.requests).toEqual([]);
  });

  it('retries the job after the wait a 429 named, since no provider follows', async () => {
    fake.script('audio/speech', refuse(rateLimited(2)));
    const done = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'Wait for it.' }));
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, output: { provider: 'openai' } });
    const [limited, spoke] = await providerCalls(suite, done.id);
    expect([limited, spoke]).toMatchObject([
      { vendor: 'openai', outcome: 'failed', error_code: 'provider_unavailable', http_status: 429 },
      { vendor: 'openai', outcome: 'succeeded' },
    ]);
    // Asked again no sooner than the two seconds OpenAI named (later is the runner's backoff on top).
    const retriedAfter = Date.parse(spoke!.started_at) - (Date.parse(limited!.started_at) + limited!.duration_ms);
    expect(retriedAfter).toBeGreaterThanOrEqual(1900);
  });

  it('retries the job after the runner’s backoff on a 429 that names no wait', async () => {
    fake.script('audio/speech', refuse(rateLimited()));
    const done = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'Wait for it.' }));
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await providerCalls(suite, done.id)).map((call) => [call.outcome, call.http_status])).toEqual([
      ['failed', 429],
      ['succeeded', null],
    ]);
  });

  it('retries the job when OpenAI does not answer within AI_TIMEOUT_MS', async () => {
    fake.script('audio/speech', { kind: 'hang' });
    await suite.withWorker({ AI_TIMEOUT_MS: '1000' }, async () => {
      const done = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'Slowly.' }));
      expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect((await providerCalls(suite, done.id)).map((call) => [call.outcome, call.error_code])).toEqual([
        ['failed', 'provider_timeout'],
        ['succeeded', null],
      ]);
    });
  });

  it('fails the job at once when OpenAI refuses the model, its credits released', async () => {
    const answer = modelNotFound('gpt-4o-mini-tts');
    fake.script('audio/speech', refuse(answer));
    const done = await jobWhen(suite, await submit(suite, '/media/tts', { text: 'Hello.' }));
    await expectRefused(suite, done, /does not offer this model/, answer.body.error.message);
  });
});

describe('text', () => {
  it('writes an SEO title with the chat model, asked for JSON', async () => {
    fake.script('chat/completions', { kind: 'ok', reply: { content: '{"text": "Harbour ferries in winter"}' } });
    const id = await submit(suite, '/seo/generatetext', {
      kind: 'title',
      text: 'How the harbour ferry runs in winter, when the sea is rough.',
    });
    expect(await jobWhen(suite, id)).toMatchObject({
      status: 'succeeded',
      output: { text: 'Harbour ferries in winter', source: 'model', provider: 'openai', model: 'gpt-5.4-mini' },
    });
    expect(sent('/v1/chat/completions')[0]!.body).toMatchObject({
      model: 'gpt-5.4-mini',
      response_format: { type: 'json_object' },
    });
    expect(await providerCalls(suite, id)).toMatchObject([
      { capability: 'text', vendor: 'openai', outcome: 'succeeded' },
    ]);
  });

  it('fails the text job at once when OpenAI refuses it, its credits released', async () => {
    fake.script('chat/completions', refuse(moderationBlocked));
    const done = await jobWhen(suite, await submit(suite, '/seo/generatetext', { kind: 'title', text: 'Ferries.' }));
    await expectRefused(suite, done, /refused the request \(400\)/, moderationBlocked.body.error.message);
  });
});

describe('embeddings', () => {
  let admin: Caller;
  let agent: string;
  beforeAll(async () => {
    admin = await signedIn(suite.t, { tenant: suite.tenant, role: 'admin' });
    await giveCredits(suite.t, suite.site, 1000, admin.user.id);
    agent = await agentRow(suite.t, [suite.tenant]);
    const document = await request(suite.t.app)
      .post(`/api/agents/${agent}/knowledge-base/from-text`)
      .set(admin.auth)
      .send({
        site_identifier: suite.site.slug,
        title: 'Ferry',
        content: 'The harbour ferry runs every hour in winter.\n\nTickets are sold on board.',
        format: 'plain',
      })
      .expect(201);
    const indexed = await request(suite.t.app)
      .post(`/api/agents/knowledge-base/${document.body.id}/compute-rag-index`)
      .set(admin.auth)
      .set('Prefer', 'wait=30')
      .send({ chunk_tokens: 200, overlap_tokens: 20 })
      .expect(200);
    expect(indexed.body).toMatchObject({ status: 'succeeded' });
  });
  const search = () =>
    request(suite.t.app)
      .post(`/api/agents/${agent}/knowledge-base/search`)
      .set(admin.auth)
      .send({ query: 'when does the ferry run' })
      .expect(200);

  it('embeds the query with the operator’s model and searches by meaning too', async () => {
    const res = await search();
    expect(res.body).toMatchObject({ mode: 'hybrid', embedding_model: 'text-embedding-3-small', notice: null });
    expect(sent('/v1/embeddings').at(-1)!.body).toMatchObject({
      model: 'text-embedding-3-small',
      input: ['when does the ferry run'],
    });
  });

  it('answers by full text alone when OpenAI limits the query’s embedding, saying why in words of ours', async () => {
    const answer = rateLimited(5);
    fake.script('embeddings', refuse(answer));
    const res = await search();
    expect(res.body).toMatchObject({
      mode: 'full_text',
      notice: expect.stringMatching(/could not be embedded \(provider_unavailable\)/),
    });
    expect(res.body.notice).not.toContain(answer.body.error.message);
    expect(res.body.items.length).toBeGreaterThan(0);
  });
});
