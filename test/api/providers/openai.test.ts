// OpenAI through the platform's HTTP API, against the strict fake written from
// OpenAI's reference (test/helpers/fakes/openai.ts): the request the adapter
// sends passes the fake's checks, and what OpenAI answers becomes the job.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { giveCredits, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import type { Site } from '../../../core/tenancy/sites.ts';

let t: TestApp;
let fake: FakeOpenAI;
let worker: WorkerHandle;
let site: Site;
let author: Caller;
const env = () => ({
  IMAGE_PROVIDERS: 'openai,local',
  SPEECH_PROVIDERS: 'openai',
  OPENAI_BASE_URL: fake.url,
  OPENAI_API_KEY: fake.apiKey,
});

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await startTestApp({ env: env() });
  worker = await startTestWorker(t, env());
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  author = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, 10_000, author.user.id);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
  await fake.close();
});

it('makes images with gpt-image-2 at a size it makes, sending only what the model takes', async () => {
  const res = await request(t.app)
    .post(`/${site.slug}/media/generate`)
    .set(author.auth)
    .send({ prompt: 'A lighthouse at dusk', size: '1024x768', count: 2 })
    .expect(202);
  const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
  expect(done).toMatchObject({ status: 'succeeded', output: { provider: 'openai', model: 'gpt-image-2', placeholder: false } });
  const sent = fake.requests.find((call) => call.path === '/v1/images/generations')!.body as Record<string, unknown>;
  expect(sent).toMatchObject({ model: 'gpt-image-2', prompt: 'A lighthouse at dusk', n: 2, size: '1024x768' });
  expect(sent).not.toHaveProperty('response_format');
  expect(sent).not.toHaveProperty('style');
});

it('refuses at submit a size the model cannot make, naming those it can', async () => {
  const res = await request(t.app)
    .post(`/${site.slug}/media/generate`)
    .set(author.auth)
    .send({ prompt: 'x', size: '1000x1000', model: 'gpt-image-2' })
    .expect(422);
  expect(res.body.errors[0]).toMatchObject({ path: 'body.size', message: expect.stringMatching(/multiples of 16/) });
  expect(fake.requests).toEqual([]);
});
