// POST /{site}/generate-website/: a brief becomes content types, a page tree
// with elements, copies in the other locales and draft posts, in the job's
// settling transaction. Locally from templates (and saying so); with
// TEXT_PROVIDERS=openai from the JSON of OpenAI's strict fake
// (test/helpers/fakes/openai.ts). A refused write leaves nothing behind; a
// repeated Idempotency-Key makes one website.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { createType, withLocales } from '../../helpers/content.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { staffedTenant, type Auth } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';

const suite = jobsSuite();
let fake: FakeOpenAI;
let author: Caller;
let site: Site;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const { t, a } = suite;
  site = await withLocales(t, a.site, ['en', 'de']);
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  await giveCredits(t, a.site, 1000, a.editor.user.id);
  await giveCredits(t, a.site, 1000, author.user.id);
});
afterAll(() => fake.close());

const generate = (body: Record<string, unknown>, options: { auth?: Auth; on?: Site; wait?: number } = {}) =>
  request(suite.t.app)
    .post(`/${(options.on ?? site).slug}/generate-website/`)
    .set(options.auth ?? suite.a.editor.auth)
    .set('Prefer', `wait=${options.wait ?? 30}`)
    .send(body);

/** What a site holds, by kind. */
const countsOf = (siteId: string) =>
  suite.t.services.db.one(sql.type(
    z.object({ types: z.number(), pages: z.number(), elements: z.number(), slots: z.number(), posts: z.number() }),
  )`
    select (select count(*)::int from content_types where site_id = ${siteId}) as types,
           (select count(*)::int from pages where site_id = ${siteId}) as pages,
           (select count(*)::int from content_elements where site_id = ${siteId}) as elements,
           (select count(*)::int from page_elements where site_id = ${siteId}) as slots,
           (select count(*)::int from posts where site_id = ${siteId}) as posts`);

const brief = {
  business: 'Harbour Bakery, sourdough bread baked at dawn',
  audience: 'families in Kiel',
  pages: ['home', 'about', 'services', 'contact'],
  locales: ['en', 'de'],
  posts: 2,
};

describe('without a text provider', () => {
  it('builds types, a page tree with elements, German copies and draft posts from templates', async () => {
    suite.worker = await startTestWorker(suite.t);
    const before = await countsOf(site.id);
    const job = await generate(brief).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      kind: 'website',
      credits_charged: 100,
      output: { copy_source: 'template', provider: 'local', status: 'draft' },
    });
    const output = job.body.output;
    expect(output.note).toMatch(/templates/);
    expect(
      output.content_types.map((type: { api_id: string; created: boolean }) => [type.api_id, type.created]),
    ).toEqual([
      ['hero', true],
      ['text_block', true],
      ['service', true],
    ]);
    expect(output.pages.map((page: { path: string }) => page.path)).toEqual([
      '/home',
      '/home/about',
      '/home/services',
      '/home/contact',
    ]);
    expect(output.navigation).toEqual([
      {
        title: 'Home',
        path: '/home',
        children: [
          { title: 'About us', path: '/home/about' },
          { title: 'Services', path: '/home/services' },
          { title: 'Contact', path: '/home/contact' },
        ],
      },
    ]);
    // home: hero + text; about: text; services: text + 3 services; contact: text = 8 elements, each copied into de.
    const pages = 4;
    const elements = 8;
    expect(output.translations).toHaveLength(pages + elements);
    expect(output.post_ids).toHaveLength(2);
    expect(await countsOf(site.id)).toEqual({
      types: before.types + 3,
      pages: before.pages + pages * 2,
      elements: before.elements + elements * 2,
      slots: before.slots + elements,
      posts: before.posts + 2,
    });
    const home = await request(suite.t.app)
      .get(`/${site.slug}/pages/${output.pages[0].id}`)
      .set(suite.a.editor.auth)
      .expect(200);
    expect(home.body).toMatchObject({ status: 'draft', parent_id: null, slug: 'home' });
    expect(home.body.elements.map((slot: { element: { data: unknown } }) => slot.element.data)).toEqual([
      {
        headline: 'Harbour Bakery, sourdough bread baked at dawn',
        subheadline: 'Made for families in Kiel.',
        call_to_action: 'Get in touch',
      },
      { heading: 'What we do', body: 'Harbour Bakery, sourdough bread baked at dawn for families in Kiel.' },
    ]);
    const german = await suite.t.services.db.one(sql.type(z.object({ path: z.string(), title: z.string() }))`
      select path, title from pages where master_id = ${output.pages[1].id} and locale = 'de'`);
    expect(german).toEqual({ path: '/home/about', title: 'About us' });
    const post = await request(suite.t.app)
      .get(`/${site.slug}/posts/${output.post_ids[0]}`)
      .set(suite.a.editor.auth)
      .expect(200);
    expect(post.body).toMatchObject({ status: 'draft', locale: 'en' });

    // Again: the types are reused, and the new home takes a free slug beside the first.
    const again = await generate({ business: 'Harbour Bakery', pages: ['home'] }).expect(200);
    expect(again.body.output.content_types).toEqual([
      expect.objectContaining({ api_id: 'hero', created: false }),
      expect.objectContaining({ api_id: 'text_block', created: false }),
    ]);
    expect(again.body.output.pages[0].path).toBe('/home-2');
  });

  it('leaves nothing behind when a write is refused midway', async () => {
    suite.worker = await startTestWorker(suite.t);
    const fresh = await staffedTenant(suite.t);
    await giveCredits(suite.t, fresh.site, 500, fresh.editor.user.id);
    // A service type the website cannot fill: refused when the services page is built, after home and about.
    await createType(suite.t, fresh.editor.auth, fresh.site, {
      api_id: 'service',
      fields: [{ id: 'price', label: 'Price', type: 'number', required: true }],
    });
    const before = await countsOf(fresh.site.id);
    const job = await generate({ ...brief, locales: undefined }, { auth: fresh.editor.auth, on: fresh.site }).expect(
      200,
    );
    expect(job.body).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'content_type_conflict' },
    });
    expect(job.body.error.message).toMatch(/content type service .* no field name/);
    expect(await countsOf(fresh.site.id)).toEqual(before);
    expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  });

  it('makes one website for a repeated Idempotency-Key', async () => {
    const fresh = await staffedTenant(suite.t);
    await giveCredits(suite.t, fresh.site, 500, fresh.editor.user.id);
    const send = () =>
      request(suite.t.app)
        .post(`/${fresh.site.slug}/generate-website/`)
        .set(fresh.editor.auth)
        .set('Idempotency-Key', 'website-once')
        .send({ business: 'Kiel Kites', pages: ['home', 'blog'] });
    const first = await send().expect(202);
    const second = await send().expect(202);
    expect(second.body.id).toBe(first.body.id);
    suite.worker = await startTestWorker(suite.t);
    expect((await waitForJob(suite.t, first.body.id, ['succeeded', 'failed'])).status).toBe('succeeded');
    expect(await countsOf(fresh.site.id)).toMatchObject({ pages: 2, types: 2, elements: 3, posts: 0 });
  });
});

describe('with TEXT_PROVIDERS=openai', () => {
  const written = {
    pages: [
      {
        key: 'home',
        title: 'Welcome',
        hero: { headline: 'Bread worth waking for', subheadline: 'Baked at dawn in Kiel.', call_to_action: 'Visit us' },
        sections: [{ heading: 'Our craft', body: 'Slow sourdough, every day.' }],
      },
      { key: 'contact', title: 'Find us', sections: [{ heading: 'Hello', body: 'Drop by the harbour.' }] },
    ],
    posts: [{ title: 'Why we bake at dawn', excerpt: 'Early hours, better bread.', body: 'It starts at *four*.' }],
  };

  it('builds the model’s copy, and refuses an answer that is not the pages asked', async () => {
    suite.worker = await startTestWorker(suite.t, {
      TEXT_PROVIDERS: 'openai',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: fake.apiKey,
    });
    const fresh = await staffedTenant(suite.t);
    await giveCredits(suite.t, fresh.site, 500, fresh.editor.user.id);
    const ask = { business: 'Harbour Bakery', tone: 'warm', pages: ['home', 'contact'], posts: 1 };
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { content: JSON.stringify(written), usage: { promptTokens: 700, completionTokens: 500 } },
    });
    const job = await generate(ask, { auth: fresh.editor.auth, on: fresh.site }).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      credits_charged: 100,
      output: { copy_source: 'model', provider: 'openai', tokens: 1200 },
    });
    expect(job.body.output.pages.map((page: { title: string }) => page.title)).toEqual(['Welcome', 'Find us']);
    const call = fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions').at(-1);
    expect(call?.body).toMatchObject({ response_format: { type: 'json_object' } });
    expect(JSON.stringify(call?.body)).toMatch(/Tone: warm/);

    const before = await countsOf(fresh.site.id);
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { content: JSON.stringify({ ...written, pages: written.pages.slice(0, 1) }) },
    });
    const short = await generate(ask, { auth: fresh.editor.auth, on: fresh.site }).expect(200);
    expect(short.body).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_invalid_response' },
    });
    fake.script('chat/completions', { kind: 'ok', reply: { content: 'Sure! Here is your website.' } });
    const garbage = await generate(ask, { auth: fresh.editor.auth, on: fresh.site }).expect(200);
    expect(garbage.body.error.code).toBe('provider_invalid_response');
    expect(await countsOf(fresh.site.id)).toEqual(before);
  });
});

it('is for editors and administrators of the site, with a valid brief', async () => {
  const { t, a, b } = suite;
  const quick = (body: Record<string, unknown>, auth?: Auth) => generate(body, { ...(auth ? { auth } : {}), wait: 0 });
  await request(t.app).post(`/${site.slug}/generate-website/`).send({ business: 'x' }).expect(401);
  await quick({ business: 'x' }, author.auth).expect(403);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'jobs:write', 'content:read']);
  await quick({ business: 'x' }, reader.auth).expect(403);
  await quick({ business: 'x' }, b.admin.auth).expect(404);
  for (const body of [
    {},
    { business: '' },
    { business: 'x', pages: [] },
    { business: 'x', pages: ['About Us'] },
    { business: 'x', pages: ['about', 'about'] },
    { business: 'x', posts: 6 },
    { business: 'x', locales: ['fr'] },
    { business: 'x', extra: true },
  ])
    await quick(body).expect(422);
  await quick({ business: 'x' }, a.admin.auth).expect(402);
});
