// A chain of two vendors (IMAGE_PROVIDERS=openai,replicate) through the
// HTTP API: OpenAI answering 503 passes the job to Replicate, which makes
// the images; the job's output names Replicate and GET /admin/jobs/{job_id}
// lists both calls. Each model has its price (OPENAI_IMAGE_PRICES,
// REPLICATE_IMAGE_PRICES): the job reserves the dearest of its chain and is
// charged the price of the vendor that made it.
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { refusal } from '../../helpers/fakes/openai/errors.ts';
import { startFakeReplicate, type FakeReplicate } from '../../helpers/fakes/replicate.ts';
import { jobWhen, ledgerKinds, mediaByName, providerCalls, providerSuite, realMedia, submit } from './harness.ts';

let openai: FakeOpenAI;
let replicate: FakeReplicate;
beforeAll(async () => {
  openai = await startFakeOpenAI();
  replicate = await startFakeReplicate();
});
const suite = providerSuite(() => ({
  IMAGE_PROVIDERS: 'openai,replicate',
  OPENAI_BASE_URL: openai.url,
  OPENAI_API_KEY: openai.apiKey,
  REPLICATE_BASE_URL: replicate.url,
  REPLICATE_API_TOKEN: replicate.token,
  OPENAI_IMAGE_PRICES: 'gpt-image-2=25',
  REPLICATE_IMAGE_PRICES: 'black-forest-labs/flux-schnell=3',
}));
beforeAll(async () => {
  replicate.media = mediaByName(await realMedia(suite.t.config));
});
afterEach(() => {
  openai.reset();
  replicate.requests.length = 0;
});
afterAll(async () => {
  await openai.close();
  await replicate.close();
});

const overloaded = () =>
  openai.script('images/generations', {
    kind: 'refuse',
    refusal: refusal(503, 'The engine is currently overloaded, please try again later.', { type: 'server_error' }),
  });

it('passes the job from OpenAI answering 503 to Replicate, whose images it is, both calls listed', async () => {
  overloaded();
  replicate.plans.push({ status: 'succeeded' });
  const id = await submit(suite, '/media/generate', { prompt: 'A lighthouse at dusk', size: '1024x1024' });
  const done = await jobWhen(suite, id);
  expect(done).toMatchObject({
    status: 'succeeded',
    attempts: 1,
    provider: 'replicate',
    output: { provider: 'replicate', model: 'black-forest-labs/flux-schnell', placeholder: false, count: 1 },
  });
  expect(done.media_ids).toHaveLength(1);
  expect(await providerCalls(suite, id)).toMatchObject([
    {
      capability: 'image',
      vendor: 'openai',
      model: 'gpt-image-2',
      outcome: 'passed_on',
      error_code: 'provider_unavailable',
      http_status: 503,
    },
    {
      capability: 'image',
      vendor: 'replicate',
      model: 'black-forest-labs/flux-schnell',
      outcome: 'succeeded',
      error_code: null,
      http_status: null,
    },
  ]);
  // Each vendor was asked once, OpenAI first.
  expect(openai.requests.map((call) => call.path)).toEqual(['/v1/images/generations']);
  expect(replicate.requests.map((call) => call.path)).toContain(
    '/v1/models/black-forest-labs/flux-schnell/predictions',
  );
});

it('reserves the dearest price of the chain and charges the price of the vendor that made the images', async () => {
  const byOpenAI = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour', count: 2 }));
  expect(byOpenAI).toMatchObject({ status: 'succeeded', credits_reserved: 50, credits_charged: 50 });
  expect(byOpenAI.output).toMatchObject({ provider: 'openai', model: 'gpt-image-2', placeholder: false });
  expect(await ledgerKinds(suite, byOpenAI.id)).toEqual(['reservation', 'debit']);

  overloaded();
  replicate.plans.push({ status: 'succeeded' });
  const byReplicate = await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'A harbour', count: 2 }));
  expect(byReplicate.output).toMatchObject({ provider: 'replicate', model: 'black-forest-labs/flux-schnell' });
  // Reserved for OpenAI's 2 × 25, charged Replicate's 2 × 3; the rest released.
  expect(byReplicate).toMatchObject({ status: 'succeeded', credits_reserved: 50, credits_charged: 6 });
  expect(await ledgerKinds(suite, byReplicate.id)).toEqual(['reservation', 'debit', 'release']);
});
