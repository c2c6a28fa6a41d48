// Test mode, as Stripe has it, through the HTTP API: a service account made
// as a test account, or a tenant a global admin puts in test mode, has its
// jobs run on the local stand-ins at no charge (no credits needed), marked as
// test jobs, while OpenAI, named in every chain here, is never called. Its
// requests are checked as live ones are.
import request from 'supertest';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { serviceAccount, signedIn } from '../../helpers/factories.ts';
import { unique } from '../../helpers/identity.ts';
import { jobWhen, ledgerKinds, providerSuite } from './harness.ts';

let openai: FakeOpenAI;
beforeAll(async () => {
  openai = await startFakeOpenAI();
});
const suite = providerSuite(() => ({
  IMAGE_PROVIDERS: 'openai',
  TEXT_PROVIDERS: 'openai',
  OPENAI_BASE_URL: openai.url,
  OPENAI_API_KEY: openai.apiKey,
}));
afterEach(() => openai.reset());
afterAll(() => openai.close());

const jobScopes = ['sites:read', 'jobs:write', 'media:write', 'content:write'];

const generate = (auth: Record<string, string>, body: Record<string, unknown>, wait = 30) =>
  request(suite.t.app).post(`/${suite.site.slug}/media/generate`).set(auth).set('Prefer', `wait=${wait}`).send(body);

it('runs a test account’s images on the local stand-in, free and with no credits, marked test, never calling OpenAI', async () => {
  const admin = await signedIn(suite.t, { tenant: suite.tenant, role: 'admin' });
  const tester = await serviceAccount(suite.t, suite.tenant, jobScopes, admin, { test_mode: true });
  const shown = await request(suite.t.app)
    .get(`/api/service-accounts/${tester.account.id}`)
    .set(admin.auth)
    .expect(200);
  expect(shown.body.test_mode).toBe(true);

  // The tenant's pool, which a service account pays from, has no credits.
  const res = await generate(tester.auth, { prompt: 'A lighthouse', count: 2 }).expect(200);
  expect(res.body).toMatchObject({
    status: 'succeeded',
    test_mode: true,
    credits_reserved: 0,
    credits_charged: 0,
    provider: 'local',
    input: { providers: [{ vendor: 'local', model: 'local', unit_price: 0 }] },
    output: { provider: 'local', placeholder: true, test: true, count: 2 },
  });
  expect(await ledgerKinds(suite, res.body.id)).toEqual([]);
  expect(openai.requests).toHaveLength(0);

  // A live account of the same tenant pays, and the pool is empty.
  const live = await serviceAccount(suite.t, suite.tenant, jobScopes, admin);
  const refused = await generate(live.auth, { prompt: 'A lighthouse' }, 0).expect(402);
  expect(refused.body).toMatchObject({ available: 0 });
});

it('checks a test request as a live one: a model or a size the chain cannot make is a 422', async () => {
  const tester = await serviceAccount(suite.t, suite.tenant, jobScopes, undefined, { test_mode: true });
  const model = await generate(tester.auth, { prompt: 'x', model: 'dall-e-3' }, 0).expect(422);
  expect(model.body.errors).toEqual([{ path: 'body.model', message: 'one of gpt-image-2' }]);
  await generate(tester.auth, { prompt: 'x', size: '256x256' }, 0).expect(422);
});

it('puts a whole tenant in test mode by a global admin’s change, and out of it again', async () => {
  const tenantAdmin = await signedIn(suite.t, { tenant: suite.tenant, role: 'admin' });
  const change = (auth: Record<string, string>, testMode: boolean) =>
    request(suite.t.app).patch(`/admin/tenants/${suite.tenant.id}`).set(auth).send({ test_mode: testMode });
  await change(tenantAdmin.auth, true).expect(403);
  expect((await change(suite.admin.auth, true).expect(200)).body).toMatchObject({ test_mode: true });

  const post = await request(suite.t.app)
    .post(`/${suite.site.slug}/posts/`)
    .set(suite.author.auth)
    .send({
      title: `Pier ${unique()}`,
      body: '<p>The harbour opened a pier. Boats use the pier every morning. A café opened by the pier.</p>',
      body_format: 'html',
    })
    .expect(201);
  const summarise = async () => {
    const res = await request(suite.t.app)
      .post(`/${suite.site.slug}/posts/${post.body.id}/transform`)
      .set(suite.author.auth)
      .send({ operation: 'summarize', apply: false })
      .expect(202);
    return jobWhen(suite, res.body.id);
  };
  const tested = await summarise();
  expect(tested).toMatchObject({
    status: 'succeeded',
    test_mode: true,
    credits_charged: 0,
    output: { provider: 'local', test: true },
  });
  expect(openai.requests).toHaveLength(0);

  await change(suite.admin.auth, false).expect(200);
  openai.script('chat/completions', {
    kind: 'ok',
    reply: { content: JSON.stringify({ body: '<p>A pier.</p>' }), usage: { promptTokens: 400, completionTokens: 50 } },
  });
  const live = await summarise();
  expect(live).toMatchObject({ status: 'succeeded', test_mode: false, output: { provider: 'openai' } });
  expect(live.output).not.toHaveProperty('test');
  expect(live.credits_charged).toBeGreaterThan(0);
  expect(openai.requests.map((recorded) => recorded.path)).toEqual(['/v1/chat/completions']);
});
