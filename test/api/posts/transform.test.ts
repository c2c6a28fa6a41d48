// POST /{site}/posts/{post_id}/transform: locally, an extractive summary and
// a title and excerpt from the post itself; the operations that need a model
// fail naming TEXT_PROVIDERS and charge nothing. With TEXT_PROVIDERS=openai
// OpenAI's strict fake on 127.0.0.1 writes it (test/helpers/fakes/openai.ts).
// Applied results replace the content, the previous kept as a version;
// apply=false leaves the post alone.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startFakeOpenAI, textModelEnv, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { unique, type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker, type JobsSuite } from '../../helpers/jobs.ts';

const suite = jobsSuite();
let fake: FakeOpenAI;
let author: Caller;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const { t, a } = suite;
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  for (const caller of [a.editor, author]) await giveCredits(t, a.site, 200, caller.user.id);
});
afterAll(() => fake.close());

const article =
  '<h2>Harbour news</h2><p>The harbour opened a new pier this spring. Fishing boats use the pier every morning.</p>' +
  '<p>The weather was mild. The pier cost less than planned, and the harbour board thanked the builders of the pier.</p>' +
  '<p>Tourists like to watch the boats. A café opened near the pier in May.</p>';

async function newPost(
  auth?: Auth,
  on: JobsSuite = suite,
): Promise<{ id: string; version: number; body: string; title: string }> {
  const res = await request(on.t.app)
    .post(`/${on.a.site.slug}/posts/`)
    .set(auth ?? on.a.editor.auth)
    .send({ title: `Draft ${unique()}`, body: article, body_format: 'html' })
    .expect(201);
  return res.body;
}

const transform = (id: string, body: Record<string, unknown>, auth?: Auth, on: JobsSuite = suite) =>
  request(on.t.app)
    .post(`/${on.a.site.slug}/posts/${id}/transform`)
    .set(auth ?? on.a.editor.auth)
    .set('Prefer', 'wait=20')
    .send(body);

const getPost = (id: string, on: JobsSuite = suite) =>
  request(on.t.app).get(`/${on.a.site.slug}/posts/${id}`).set(on.a.editor.auth).expect(200);

describe('without a text provider', () => {
  it('summarises extractively into the post, keeping the previous body as a version', async () => {
    suite.worker = await startTestWorker(suite.t);
    const post = await newPost();
    const job = await transform(post.id, { operation: 'summarize', length: 'short' }).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      kind: 'text',
      credits_charged: 2,
      output: { applied: true, provider: 'local', previous_version: post.version, version: post.version + 1 },
    });
    expect(job.body.output.note).toMatch(/no language model/);
    const after = await getPost(post.id);
    // The two sentences richest in the text's frequent words (pier above all), in their order.
    expect(after.body.body).toBe(
      '<p>Fishing boats use the pier every morning. The pier cost less than planned, and the harbour board thanked the builders of the pier.</p>',
    );
    expect(after.body.version).toBe(post.version + 1);
    const kept = await suite.t.services.db.one(sql.type(z.object({ body: z.string(), reason: z.string() }))`
      select body, reason from post_versions where post_id = ${post.id}`);
    expect(kept).toEqual({ body: post.body, reason: 'transform' });
  });

  it('takes a title and excerpt from the post, only onto the job with apply=false', async () => {
    suite.worker = await startTestWorker(suite.t);
    const post = await newPost(author.auth);
    const job = await transform(post.id, { operation: 'title_excerpt', apply: false }, author.auth).expect(200);
    expect(job.body.output).toMatchObject({
      applied: false,
      result: {
        title: 'Harbour news',
        excerpt:
          'The harbour opened a new pier this spring. Fishing boats use the pier every morning. The weather was mild.',
      },
    });
    expect((await getPost(post.id)).body).toMatchObject({ title: post.title, version: post.version });
  });

  it('fails what needs a model with a code naming TEXT_PROVIDERS, and charges nothing', async () => {
    suite.worker = await startTestWorker(suite.t);
    const post = await newPost();
    for (const operation of ['rewrite', 'shorten', 'expand']) {
      const job = await transform(post.id, { operation, tone: 'friendly' }).expect(200);
      expect(job.body).toMatchObject({
        status: 'failed',
        credits_charged: 0,
        error: { code: 'text_provider_not_configured' },
      });
      expect(job.body.error.message).toMatch(/TEXT_PROVIDERS/);
      expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    }
    expect((await getPost(post.id)).body.version).toBe(post.version);
  });
});

describe('with TEXT_PROVIDERS=openai', () => {
  // The app plans the job at submit by its providers: it is configured, as the worker is.
  const withModel = () => textModelEnv(fake);
  const modelSuite = jobsSuite(withModel);
  beforeAll(async () => {
    await giveCredits(modelSuite.t, modelSuite.a.site, 200, modelSuite.a.editor.user.id);
  });

  it('asks OpenAI’s chat, sanitising and charging the tokens it reports', async () => {
    modelSuite.worker = await startTestWorker(modelSuite.t, withModel());
    const post = await newPost(undefined, modelSuite);
    fake.script('chat/completions', {
      kind: 'ok',
      reply: {
        content: JSON.stringify({ body: '<p>A friendly pier story.</p><script>alert(1)</script>' }),
        usage: { promptTokens: 2000, completionTokens: 500 },
      },
    });
    const job = await transform(post.id, { operation: 'rewrite', tone: 'friendly' }, undefined, modelSuite).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      // Three units of tokens used, but never more than the reservation (one unit, from the post's length).
      credits_reserved: 2,
      credits_charged: 2,
      output: { provider: 'openai', tokens: 2500 },
    });
    // The instructions as the system message, the post as the user's, answered as a JSON object.
    const call = fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions').at(-1)!;
    const body = call.body as { messages: { role: string; content: string }[]; response_format: unknown };
    expect(body.messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(JSON.stringify(body)).toMatch(/Tone: friendly/);
    expect(call.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect((await getPost(post.id, modelSuite)).body.body).toBe('<p>A friendly pier story.</p>');
  });
});

it('is for posts the caller may change, with a valid operation', async () => {
  const { t, a, b } = suite;
  const editors = await newPost();
  await transform(editors.id, { operation: 'summarize' }, author.auth).expect(403);
  await transform(editors.id, { operation: 'summarize' }, b.admin.auth).expect(404);
  const reader = await serviceAccount(t, a.tenant, ['content:read', 'jobs:write']);
  await transform(editors.id, { operation: 'summarize' }, reader.auth).expect(403);
  await request(t.app)
    .post(`/${a.site.slug}/posts/${editors.id}/transform`)
    .send({ operation: 'summarize' })
    .expect(401);
  for (const body of [
    {},
    { operation: 'translate' },
    { operation: 'summarize', length: 'huge' },
    { operation: 'summarize', x: 1 },
  ])
    await transform(editors.id, body).expect(422);
});
