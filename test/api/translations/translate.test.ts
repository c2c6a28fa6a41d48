// POST /{site}/translations/{kind}/{id}/translate: a `translation` job that
// creates or updates the translation field by field. Copy mode needs no
// provider and costs nothing; machine mode without a provider fails with a
// code naming the setting and charges nothing; with TEXT_PROVIDERS=openai
// and OpenAI's strict fake (test/helpers/fakes/openai.ts) it translates text,
// keeps rich text's markup (or fails when the provider broke it), is charged
// per 1,000 characters, and records the master's hashes so a later master
// edit shows as stale.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, createType, mediaRow, pathsOf, withLocales, type ContentCast } from '../../helpers/content.ts';
import { startFakeOpenAI, type ChatReply, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { unique, type Auth } from '../../helpers/identity.ts';
import { giveCredits, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;
let fake: FakeOpenAI;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de', 'fr']);
  await giveCredits(t, site, 1000, c.a.admin.user.id);
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  fake.reset();
});
afterAll(async () => {
  await stopTestApp(t);
  await fake.close();
});

const admin = () => c.a.admin.auth;
const withProvider = () =>
  startTestWorker(t, { TEXT_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey });

/** A chat request as the fake records it. */
type Chat = { messages: { role: string; content: string }[] };

/** Every chat call of the test answered from its request (leftovers are forgotten after it). */
const answerEach = (reply: (chat: Chat) => string) =>
  fake.script(
    'chat/completions',
    ...Array.from({ length: 20 }, () => ({
      kind: 'ok' as const,
      reply: (request: Record<string, unknown>): ChatReply => ({ content: reply(request as Chat) }),
    })),
  );

/** The fake's translation into German: every text node prefixed with [de], tags untouched. */
const toGerman = (chat: Chat) => {
  const text = chat.messages.find((message) => message.role === 'user')?.content ?? '';
  return /[<>]/.test(text) ? text.replace(/>([^<]+)</g, '>[de] $1<') : `[de] ${text}`;
};

async function post(path: string, body: Record<string, unknown>, auth: Auth = admin()) {
  const res = await request(t.app).post(`/${site.slug}${path}`).set(auth).send(body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const translate = (kind: string, id: string, body: Record<string, unknown>, auth: Auth = admin()) =>
  request(t.app)
    .post(`/${site.slug}/translations/${kind}/${id}/translate`)
    .set(auth)
    .set('Prefer', 'wait=25')
    .send(body);

const overview = async (kind: string, id: string) =>
  (await request(t.app).get(`/${site.slug}/translations/${kind}/${id}`).set(admin()).expect(200)).body;

describe('copy mode', () => {
  it('makes a draft with the master’s text for a person to translate, free, and refreshes only what went stale', async () => {
    worker = await startTestWorker(t);
    const master = await post('/posts/', { title: 'Opening hours', excerpt: 'When we are open', body: 'Daily *9–5*.' });
    const job = await translate('posts', master.id, { target_locale: 'de', mode: 'copy' }).expect(200);
    expect(job.headers.location).toBe(`/${site.slug}/jobs/${job.body.id}`);
    expect(job.body).toMatchObject({
      kind: 'translation',
      status: 'succeeded',
      credits_reserved: 0,
      credits_charged: 0,
      output: { created: true, locale: 'de', translated: [], copied: ['title', 'slug', 'excerpt', 'body'] },
    });
    const german = (
      await request(t.app).get(`/${site.slug}/posts/${job.body.output.translation_id}`).set(admin()).expect(200)
    ).body;
    expect(german).toMatchObject({
      master_id: master.id,
      locale: 'de',
      status: 'draft',
      title: 'Opening hours',
      slug: master.slug,
    });
    const before = await overview('posts', master.id);
    expect(before.translations[0].fields.title).toMatchObject({ state: 'current', source: 'copy' });

    // A person translates the title; the master's excerpt changes.
    await request(t.app)
      .patch(`/${site.slug}/posts/${german.id}`)
      .set(admin())
      .send({ title: 'Öffnungszeiten' })
      .expect(200);
    await request(t.app)
      .patch(`/${site.slug}/posts/${master.id}`)
      .set(admin())
      .send({ excerpt: 'When to come' })
      .expect(200);
    const again = await translate('posts', master.id, { target_locale: 'de', mode: 'copy' }).expect(200);
    expect(again.body.output).toMatchObject({ created: false, copied: ['excerpt'] });
    const after = (await request(t.app).get(`/${site.slug}/posts/${german.id}`).set(admin()).expect(200)).body;
    expect(after).toMatchObject({ title: 'Öffnungszeiten', excerpt: 'When to come' });
    expect((await overview('posts', master.id)).translations[0].stale).toBe(false);
  });
});

describe('machine mode', () => {
  it('fails without a text provider, naming the setting, and charges nothing', async () => {
    worker = await startTestWorker(t);
    const master = await post('/posts/', { title: 'No provider here' });
    const job = await translate('posts', master.id, { target_locale: 'de' }).expect(200);
    expect(job.body).toMatchObject({
      status: 'failed',
      credits_reserved: 2,
      credits_charged: 0,
      error: { code: 'translation_provider_not_configured' },
    });
    expect(job.body.error.message).toMatch(/TEXT_PROVIDERS/);
    expect((await ledgerFor(t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect((await overview('posts', master.id)).translations).toEqual([]);
  });

  it('keeps the text as it is in test mode, calling no model and charging nothing', async () => {
    worker = await withProvider();
    const testMode = (on: boolean) =>
      request(t.app).patch(`/admin/tenants/${c.a.tenant.id}`).set(c.admin.auth).send({ test_mode: on }).expect(200);
    await testMode(true);
    try {
      const page = await post('/pages/', { slug: `tides-${unique()}`, title: 'Tides today' });
      const job = await translate('pages', page.id, { target_locale: 'fr', fields: ['title'] }).expect(200);
      expect(job.body).toMatchObject({
        status: 'succeeded',
        test_mode: true,
        credits_reserved: 0,
        credits_charged: 0,
        output: { translated: ['title'], test: true },
      });
      const pageFr = await request(t.app)
        .get(`/${site.slug}/pages/${job.body.output.translation_id}`)
        .set(admin())
        .expect(200);
      expect(pageFr.body).toMatchObject({ title: 'Tides today', locale: 'fr' });
      expect(fake.requests).toHaveLength(0);
    } finally {
      await testMode(false);
    }
  });

  it('translates an element’s text and rich text, keeps its markup and other fields, and charges per 1,000 characters', async () => {
    worker = await withProvider();
    answerEach(toGerman);
    const type = await createType(t, admin(), site, {
      api_id: `offer_${unique()}`,
      fields: [
        { id: 'headline', label: 'Headline', type: 'text', localized: true },
        { id: 'story', label: 'Story', type: 'rich_text', localized: true },
        { id: 'price', label: 'Price', type: 'number' },
      ],
    });
    const story = `<p>Baked <strong>daily</strong> in <a href="https://example.com/oven">our oven</a>.</p>${'<p>More.</p>'.repeat(300)}`;
    const master = await post('/elements/', {
      type: type.api_id,
      name: 'Offer',
      data: { headline: 'Fresh bread', story, price: 3 },
    });
    const job = await translate('elements', master.id, { target_locale: 'de' }).expect(200);
    // 2 credits per 1,000 characters (the seeded price).
    const characters = 'Fresh bread'.length + story.length;
    expect(job.body).toMatchObject({
      status: 'succeeded',
      credits_reserved: 2 * Math.ceil(characters / 1000),
      credits_charged: 2 * Math.ceil(characters / 1000),
      output: { created: true, translated: ['headline', 'story'], copied: [], characters },
    });
    const german = (
      await request(t.app).get(`/${site.slug}/elements/${job.body.output.translation_id}`).set(admin()).expect(200)
    ).body;
    expect(german.data.headline).toBe('[de] Fresh bread');
    expect(german.data.story).toMatch(
      /^<p>\[de\] Baked <strong>\[de\] daily<\/strong>\[de\] {2}in <a href="https:\/\/example.com\/oven">/,
    );
    expect(german.data).not.toHaveProperty('price');
    // What the provider was told.
    const call = fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions').at(-1)!.body as Chat;
    expect(call.messages[0]!.content).toMatch(/from en to de.*HTML: keep every tag/);

    const state = await overview('elements', master.id);
    expect(state.translations[0]).toMatchObject({
      stale: false,
      fields: { story: { state: 'current', source: 'machine' } },
    });
    // The master changes: its translation is stale there, and a second run translates only that field.
    await request(t.app)
      .patch(`/${site.slug}/elements/${master.id}`)
      .set(admin())
      .send({ data: { headline: 'Fresh rolls' } })
      .expect(200);
    expect((await overview('elements', master.id)).translations[0].stale_fields).toEqual(['headline']);
    const again = await translate('elements', master.id, { target_locale: 'de' }).expect(200);
    expect(again.body.output).toMatchObject({
      created: false,
      translated: ['headline'],
      skipped: [{ name: 'story', reason: 'up_to_date' }],
    });
    expect(again.body.credits_charged).toBe(2);
  });

  it('keeps a person’s current work unless told to overwrite, and translates slugs as words', async () => {
    worker = await withProvider();
    answerEach(toGerman);
    const page = await post('/pages/', { slug: 'opening-hours', title: 'Opening hours', seo: { description: 'When' } });
    const first = await translate('pages', page.id, { target_locale: 'de', fields: ['title', 'slug'] }).expect(200);
    expect(first.body.output).toMatchObject({ translated: ['title', 'slug'] });
    const pageDe = (await request(t.app).get(`/${site.slug}/pages/${first.body.output.translation_id}`).set(admin()))
      .body;
    expect(pageDe).toMatchObject({
      title: '[de] Opening hours',
      slug: 'de-opening-hours',
      path: '/de-opening-hours',
      locale: 'de',
    });

    await request(t.app)
      .patch(`/${site.slug}/pages/${pageDe.id}`)
      .set(admin())
      .send({ title: 'Öffnungszeiten' })
      .expect(200);
    const kept = await translate('pages', page.id, { target_locale: 'de', fields: ['title'] }).expect(200);
    expect(kept.body.output).toMatchObject({ translated: [], skipped: [{ name: 'title', reason: 'up_to_date' }] });
    expect(kept.body.credits_charged).toBe(0);
    const overwritten = await translate('pages', page.id, {
      target_locale: 'de',
      fields: ['title'],
      overwrite: true,
    }).expect(200);
    expect(overwritten.body.output.translated).toEqual(['title']);
  });

  it('translates a media item’s alt text, title and caption into a translation of its own', async () => {
    worker = await withProvider();
    answerEach(toGerman);
    const media = await mediaRow(t, site);
    await request(t.app)
      .patch(`/${site.slug}/media/${media}`)
      .set(admin())
      .send({ alt: 'A loaf', caption: 'Our bread' })
      .expect(200);
    const job = await translate('media', media, { target_locale: 'fr' }).expect(200);
    expect(job.body.output).toMatchObject({
      translated: ['alt', 'caption'],
      skipped: [{ name: 'title', reason: 'master_empty' }],
    });
    const state = await overview('media', media);
    expect(state.translations).toEqual([
      expect.objectContaining({ id: job.body.output.translation_id, locale: 'fr', status: null, stale: false }),
    ]);
    expect(state.missing_locales).toEqual(['de']);
    // The item itself is untouched.
    const item = (await request(t.app).get(`/${site.slug}/media/${media}`).set(admin())).body;
    expect(item).toMatchObject({ alt: 'A loaf', caption: 'Our bread' });
  });

  it('fails, saving nothing and charging nothing, when the provider breaks the markup', async () => {
    worker = await withProvider();
    answerEach((chat) => chat.messages.at(-1)!.content.replace(/<[^>]+>/g, ''));
    const master = await post('/posts/', { title: 'Markup', body: '<p>Hello <em>there</em></p>', body_format: 'html' });
    const job = await translate('posts', master.id, { target_locale: 'de', fields: ['body'] }).expect(200);
    expect(job.body).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'translation_markup_changed' },
    });
    expect((await overview('posts', master.id)).translations).toEqual([]);
  });
});

describe('access and input', () => {
  it('answers 401, 403, 404 and 422 before queueing anything', async () => {
    const master = await post('/posts/', { title: 'Guarded', body: 'Text' });
    const path = `/${site.slug}/translations/posts/${master.id}/translate`;
    await request(t.app).post(path).send({ target_locale: 'de' }).expect(401);
    await translate('posts', master.id, { target_locale: 'de' }, c.author.auth).expect(403);
    await translate('posts', master.id, { target_locale: 'de' }, c.reader).expect(403);
    await translate('posts', master.id, { target_locale: 'de' }, c.b.admin.auth).expect(404);
    await translate('pages', master.id, { target_locale: 'de' }).expect(404);
    const checks: [Record<string, unknown>, string][] = [
      [{ target_locale: 'it' }, 'body.target_locale'],
      [{ target_locale: 'en' }, 'body.target_locale'],
      [{ target_locale: 'de', fields: ['title', 'tags'] }, 'body.fields.1'],
      [{ target_locale: 'de', mode: 'poetic' }, 'body.mode'],
      [{ target_locale: 'de', colour: 'red' }, 'body'],
      [{}, 'body.target_locale'],
    ];
    for (const [body, at] of checks) {
      const res = await translate('posts', master.id, body).expect(422);
      expect(pathsOf(res.body)).toContain(at);
    }
    // An author translates what they made; a machine translation needs credits they do not have.
    const own = await post('/posts/', { title: 'Own', body: 'Mine' }, c.author.auth);
    await translate('posts', own.id, { target_locale: 'de' }, c.author.auth).expect(402);
    // No worker runs here: the job stays queued (and no wait is asked for).
    await request(t.app)
      .post(`/${site.slug}/translations/posts/${own.id}/translate`)
      .set(c.author.auth)
      .send({ target_locale: 'de', mode: 'copy' })
      .expect(202);
  });
});
