// GET /admin/providers (api/admin-providers/router.ts, core/providers/overview.ts):
// what an operator reads of the providers as configured — each chain in the
// order its jobs try it, the models each provider allows with what the
// catalog knows of them, each vendor's base URL and limits but never its
// key, and its last hour of calls from provider_calls. Global admins only.
import request from 'supertest';
import { serviceAccount, signedIn } from '../../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { refusal } from '../../helpers/fakes/openai/errors.ts';
import { startFakeReplicate, type FakeReplicate } from '../../helpers/fakes/replicate.ts';
import { jobWhen, providerSuite, submit } from './harness.ts';

// Keys no answer may show; fal and ElevenLabs are configured but never called here.
const falKey = 'fal-key-id:fal-secret-never-shown';
const elevenLabsKey = 'sk_elevenlabs_never_shown';

let openai: FakeOpenAI;
let replicate: FakeReplicate;
beforeAll(async () => {
  openai = await startFakeOpenAI();
  replicate = await startFakeReplicate();
});
const suite = providerSuite(() => ({
  IMAGE_PROVIDERS: 'replicate,openai,local',
  // A model the catalog does not know, as a compatible server's would be.
  OPENAI_IMAGE_MODELS: 'gpt-image-2,my-compatible-model',
  SPEECH_PROVIDERS: 'elevenlabs,openai',
  VIDEO_VARIANT_B_PROVIDERS: 'fal',
  OPENAI_REQUESTS_PER_MINUTE: '500',
  OPENAI_MAX_CONCURRENT: '8',
  OPENAI_BASE_URL: openai.url,
  OPENAI_API_KEY: openai.apiKey,
  REPLICATE_BASE_URL: replicate.url,
  REPLICATE_API_TOKEN: replicate.token,
  FAL_KEY: falKey,
  FAL_QUEUE_URL: 'http://127.0.0.1:9/fal-queue',
  FAL_JWKS_URL: 'http://127.0.0.1:9/fal-jwks.json',
  ELEVENLABS_API_KEY: elevenLabsKey,
  ELEVENLABS_BASE_URL: 'http://127.0.0.1:9/elevenlabs',
}));
afterAll(async () => {
  await openai.close();
  await replicate.close();
});

const overview = () => request(suite.t.app).get('/admin/providers').set(suite.admin.auth).expect(200);
type Chain = { chain: string; variable: string; providers: { vendor: string; models: { model: string }[] }[] };
type VendorRow = { vendor: string; last_hour: Record<string, unknown> | null } & Record<string, unknown>;
const vendorOf = (body: { vendors: VendorRow[] }, vendor: string) => body.vendors.find((row) => row.vendor === vendor);

it('shows every chain in the order its jobs try its providers, with the variable that names it', async () => {
  const { body } = await overview();
  expect(body.chains.map((chain: Chain) => [chain.chain, chain.variable])).toEqual([
    ['image', 'IMAGE_PROVIDERS'],
    ['image_edit', 'IMAGE_EDIT_PROVIDERS'],
    ['video', 'VIDEO_PROVIDERS'],
    ['video_variant_a', 'VIDEO_VARIANT_A_PROVIDERS'],
    ['video_variant_b', 'VIDEO_VARIANT_B_PROVIDERS'],
    ['speech', 'SPEECH_PROVIDERS'],
    ['text', 'TEXT_PROVIDERS'],
    ['embeddings', 'EMBEDDING_PROVIDERS'],
  ]);
  const vendorsOf = (name: string) =>
    (body.chains as Chain[]).find((chain) => chain.chain === name)!.providers.map((provider) => provider.vendor);
  expect(vendorsOf('image')).toEqual(['replicate', 'openai', 'local']);
  expect(vendorsOf('speech')).toEqual(['elevenlabs', 'openai']);
  expect(vendorsOf('video_variant_b')).toEqual(['fal']);
  expect(vendorsOf('image_edit')).toEqual(['local']);
  expect(vendorsOf('embeddings')).toEqual([]);
});

it('shows the models each provider allows, the first its default, with the catalog’s facts or none for one it does not know', async () => {
  const { body } = await overview();
  const chain = (name: string) => (body.chains as Chain[]).find((found) => found.chain === name)!;
  expect(chain('image').providers).toEqual([
    {
      vendor: 'replicate',
      models_variable: 'REPLICATE_IMAGE_MODELS',
      price_variable: 'REPLICATE_IMAGE_PRICES',
      placeholder: false,
      models: [
        {
          model: 'black-forest-labs/flux-schnell',
          known: true,
          unit: 'item',
          default_price: 0.3,
          price: 0.3,
          output_price: null,
          price_source: 'catalog',
          sizes: expect.stringContaining('1344x768'),
          seconds: null,
          max_characters: null,
          note: null,
        },
      ],
    },
    {
      vendor: 'openai',
      models_variable: 'OPENAI_IMAGE_MODELS',
      price_variable: 'OPENAI_IMAGE_PRICES',
      placeholder: false,
      models: [
        expect.objectContaining({
          model: 'gpt-image-2',
          known: true,
          unit: 'item',
          default_price: 22,
          sizes: expect.stringMatching(/^width and height multiples of 16, at most 3840x3840/),
        }),
        {
          model: 'my-compatible-model',
          known: false,
          unit: null,
          default_price: null,
          // Priced as its job kind, since nobody priced it.
          price: null,
          output_price: null,
          price_source: null,
          sizes: null,
          seconds: null,
          max_characters: null,
          note: null,
        },
      ],
    },
    {
      vendor: 'local',
      models_variable: null,
      price_variable: 'LOCAL_IMAGE_PRICES',
      placeholder: true,
      models: [expect.objectContaining({ model: 'local', known: true, unit: 'item', default_price: 0 })],
    },
  ]);
  expect(chain('speech').providers[0]).toMatchObject({
    vendor: 'elevenlabs',
    models_variable: 'ELEVENLABS_SPEECH_MODELS',
    models: [{ model: 'eleven_multilingual_v2', unit: '1k_characters', max_characters: 10_000 }],
  });
  expect(chain('video_variant_b').providers[0]).toMatchObject({
    vendor: 'fal',
    models_variable: 'FAL_VIDEO_MODELS',
    models: [{ model: 'fal-ai/kling-video/v2.5-turbo/pro/text-to-video', unit: 'second', seconds: [5, 10] }],
  });
});

it('shows each vendor’s base URL and limits, and never its key', async () => {
  const res = await overview();
  expect(res.body.vendors).toEqual([
    {
      vendor: 'openai',
      configured: true,
      base_url: openai.url,
      requests_per_minute: 500,
      max_concurrent: 8,
      last_hour: null,
    },
    expect.objectContaining({ vendor: 'replicate', configured: true, base_url: replicate.url, requests_per_minute: 0 }),
    expect.objectContaining({ vendor: 'fal', configured: true, base_url: 'http://127.0.0.1:9/fal-queue' }),
    expect.objectContaining({ vendor: 'elevenlabs', configured: true, base_url: 'http://127.0.0.1:9/elevenlabs' }),
  ]);
  for (const secret of [openai.apiKey, replicate.token, falKey, 'fal-secret-never-shown', elevenLabsKey])
    expect(res.text).not.toContain(secret);
});

it('shows each vendor’s last hour after some calls: calls, failures, latency and its last errors', async () => {
  // Replicate answers 503 and passes the job to OpenAI, which makes it.
  replicate.answers.push({ status: 503, title: 'Service Unavailable', detail: 'Down for maintenance.' });
  expect(await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'One' }))).toMatchObject({
    output: { provider: 'openai' },
  });
  // OpenAI, named by its model, refuses one prompt and makes another.
  openai.script('images/generations', { kind: 'refuse', refusal: refusal(400, 'Your request was rejected.') });
  expect(
    await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'Two', model: 'gpt-image-2' })),
  ).toMatchObject({ status: 'failed' });
  expect(
    await jobWhen(suite, await submit(suite, '/media/generate', { prompt: 'Three', model: 'gpt-image-2' })),
  ).toMatchObject({ status: 'succeeded' });

  const { body } = await overview();
  const openaiHour = vendorOf(body, 'openai')!.last_hour!;
  expect(openaiHour).toEqual({
    calls: 3,
    failures: 1,
    median_ms: expect.any(Number),
    p95_ms: expect.any(Number),
    recent_errors: [
      { at: expect.any(String), model: 'gpt-image-2', error_code: 'provider_rejected', http_status: 400 },
    ],
  });
  expect(openaiHour.p95_ms as number).toBeGreaterThanOrEqual(openaiHour.median_ms as number);
  expect(vendorOf(body, 'replicate')!.last_hour).toEqual({
    calls: 1,
    failures: 1,
    median_ms: expect.any(Number),
    p95_ms: expect.any(Number),
    recent_errors: [
      {
        at: expect.any(String),
        model: 'black-forest-labs/flux-schnell',
        error_code: 'provider_unavailable',
        http_status: 503,
      },
    ],
  });
  // Vendors not called in the last hour have nothing to show; the placeholder is no vendor.
  expect(vendorOf(body, 'fal')!.last_hour).toBeNull();
  expect(vendorOf(body, 'elevenlabs')!.last_hour).toBeNull();
  expect(vendorOf(body, 'local')).toBeUndefined();
});

describe('who may read it', () => {
  it('refuses a caller without a token (401)', async () => {
    await request(suite.t.app).get('/admin/providers').expect(401);
  });

  it('refuses a tenant admin and a service account (403)', async () => {
    const admin = await signedIn(suite.t, { tenant: suite.tenant, role: 'admin' });
    await request(suite.t.app).get('/admin/providers').set(admin.auth).expect(403);
    const bot = await serviceAccount(suite.t, suite.tenant, ['sites:read', 'jobs:read'], admin);
    await request(suite.t.app).get('/admin/providers').set(bot.auth).expect(403);
  });
});
