// Prices per provider and model, through the HTTP API: a job is priced at
// submit by its plan's models, in the unit each vendor bills (ElevenLabs by
// the 1,000 characters spoken), reserving the dearest and charged the one
// that made the result; the local stand-ins cost nothing unless the operator
// prices them, and say their results are placeholders. A site's own price
// of the kind stands for the model's where both are in the same unit, never
// below the model's price when a tenant admin set it.
import request from 'supertest';
import { startFakeElevenLabs, systemBusy, type FakeElevenLabs } from '../../helpers/fakes/elevenlabs.ts';
import { globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { giveCredits } from '../../helpers/jobs.ts';
import { jobWhen, ledgerKinds, providerSuite, submit } from './harness.ts';

let fake: FakeElevenLabs;
beforeAll(async () => {
  fake = await startFakeElevenLabs();
});
const suite = providerSuite(() => ({
  SPEECH_PROVIDERS: 'elevenlabs,local',
  ELEVENLABS_SPEECH_MODELS: 'eleven_multilingual_v2',
  ELEVENLABS_SPEECH_PRICES: 'eleven_multilingual_v2=8',
  ELEVENLABS_API_KEY: fake.apiKey,
  ELEVENLABS_BASE_URL: fake.url,
  // The stand-ins at their default (the test configuration prices them otherwise), but text's.
  LOCAL_IMAGE_PRICES: '',
  LOCAL_SPEECH_PRICES: '',
  LOCAL_TEXT_PRICES: 'local=5',
}));
afterEach(() => {
  fake.next.length = 0;
  fake.requests.length = 0;
});
afterAll(() => fake.close());

/** 2,500 characters of plain sentences. */
const longText = 'The ferry leaves the harbour at nine and comes back at noon. '.repeat(41).slice(0, 2500);

it('runs the local stand-in free by default, its images marked placeholders, their alt text saying what they are', async () => {
  const job = await jobWhen(
    suite,
    await submit(suite, '/media/generate', { prompt: 'A red bicycle', size: '256x256' }),
  );
  expect(job).toMatchObject({
    status: 'succeeded',
    credits_reserved: 0,
    credits_charged: 0,
    output: { provider: 'local', model: 'local', placeholder: true },
  });
  expect(await ledgerKinds(suite, job.id)).toEqual([]);
  const item = await request(suite.t.app)
    .get(`/${suite.site.slug}/media/${job.media_id}`)
    .set(suite.author.auth)
    .expect(200);
  expect(item.body.alt).toMatch(/placeholder/);
  expect(item.body.alt).not.toContain('bicycle');
});

it('bills ElevenLabs by the 1,000 characters spoken at the operator’s price, and the placeholder it fell back to at 0', async () => {
  const spoken = await jobWhen(suite, await submit(suite, '/media/tts', { text: longText }));
  // 2.5 thousand characters at 8 credits.
  expect(spoken).toMatchObject({
    status: 'succeeded',
    credits_reserved: 20,
    credits_charged: 20,
    output: { provider: 'elevenlabs', placeholder: false },
  });
  expect(await ledgerKinds(suite, spoken.id)).toEqual(['reservation', 'debit']);

  fake.next.push(systemBusy());
  const fellBack = await jobWhen(suite, await submit(suite, '/media/tts', { text: longText }));
  expect(fellBack).toMatchObject({
    status: 'succeeded',
    credits_reserved: 20,
    credits_charged: 0,
    output: { provider: 'local', placeholder: true },
  });
  expect(await ledgerKinds(suite, fellBack.id)).toEqual(['reservation', 'release']);
});

it('shows each model’s price, its unit and where the price comes from in GET /admin/providers', async () => {
  const admin = await globalAdmin(suite.t);
  const res = await request(suite.t.app).get('/admin/providers').set(admin.auth).expect(200);
  const chain = (name: string) => res.body.chains.find((entry: { chain: string }) => entry.chain === name);
  expect(chain('speech').providers).toEqual([
    expect.objectContaining({
      vendor: 'elevenlabs',
      price_variable: 'ELEVENLABS_SPEECH_PRICES',
      models: [
        expect.objectContaining({
          model: 'eleven_multilingual_v2',
          unit: '1k_characters',
          price: 8,
          price_source: 'configured',
        }),
      ],
    }),
    expect.objectContaining({
      vendor: 'local',
      placeholder: true,
      price_variable: 'LOCAL_SPEECH_PRICES',
      models: [expect.objectContaining({ model: 'local', price: 0, price_source: 'catalog', default_price: 0 })],
    }),
  ]);
});

describe('a site’s own price of the kind', () => {
  let staffed: Staffed;
  beforeAll(async () => {
    staffed = await staffedTenant(suite.t);
    await giveCredits(suite.t, staffed.site, 1000, staffed.editor.user.id);
  });
  const setPrice = (auth: Staffed['admin']['auth'], price: number | null) =>
    request(suite.t.app)
      .put(`/${staffed.site.slug}/transactions/cost-settings`)
      .set(auth)
      .send({ settings: [{ kind: 'text', price }] })
      .expect(200);
  /** A local summary of a short post (a thousand tokens at most), as the job ends. */
  async function summarise() {
    const post = await request(suite.t.app)
      .post(`/${staffed.site.slug}/posts/`)
      .set(staffed.editor.auth)
      .send({
        title: `Pier ${unique()}`,
        body: '<p>The harbour opened a pier. Boats use the pier. A café opened by the pier.</p>',
        body_format: 'html',
      })
      .expect(201);
    const res = await request(suite.t.app)
      .post(`/${staffed.site.slug}/posts/${post.body.id}/transform`)
      .set(staffed.editor.auth)
      .set('Prefer', 'wait=20')
      .send({ operation: 'summarize', apply: false })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'succeeded', output: { provider: 'local' } });
    return res.body as { credits_reserved: number; credits_charged: number };
  }

  it('is charged where it is above the model’s price', async () => {
    await setPrice(staffed.admin.auth, 7);
    expect(await summarise()).toMatchObject({ credits_reserved: 7, credits_charged: 7 });
  });

  it('is lifted to the model’s price when a tenant admin set it lower (no floor set), kept as set by a global admin', async () => {
    // Text's own floor is its global price, 2; the stand-in is priced 5 here.
    await setPrice(staffed.admin.auth, 3);
    expect(await summarise()).toMatchObject({ credits_reserved: 5, credits_charged: 5 });
    const admin = await globalAdmin(suite.t);
    await setPrice(admin.auth, 1);
    expect(await summarise()).toMatchObject({ credits_reserved: 1, credits_charged: 1 });
    await setPrice(admin.auth, null);
    expect(await summarise()).toMatchObject({ credits_reserved: 5, credits_charged: 5 });
  });
});
