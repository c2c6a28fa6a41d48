// POST /{site}/seo/generatetext: an SEO title, meta description or alt text
// as a text job. Locally from the content's own words (and saying so), alt
// text only from a media item's caption or title, otherwise failing with a
// code naming TEXT_PROVIDERS and charging nothing; with TEXT_PROVIDERS=openai
// OpenAI's strict fake on 127.0.0.1 writes it (test/helpers/fakes/openai.ts).
// apply writes it into the item.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { createElement, createType, mediaRow } from '../../helpers/content.ts';
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
  await giveCredits(t, a.site, 50);
});
afterAll(() => fake.close());

const article =
  '<h2>Harbour news</h2><p>The harbour opened a new pier this spring. Fishing boats use the pier every morning.</p>' +
  '<p>The weather was mild. The pier cost less than planned, and the harbour board thanked the builders of the pier.</p>';

async function newPost(
  auth: Auth = suite.a.editor.auth,
  title = `A long title about the new pier of the harbour ${unique()}`,
  on: JobsSuite = suite,
) {
  const res = await request(on.t.app)
    .post(`/${on.a.site.slug}/posts/`)
    .set(auth)
    .send({ title, body: article, body_format: 'html' })
    .expect(201);
  return res.body as { id: string; version: number };
}

const generate = (body: Record<string, unknown>, auth?: Auth, wait = 20, on: JobsSuite = suite) =>
  request(on.t.app)
    .post(`/${on.a.site.slug}/seo/generatetext`)
    .set(auth ?? on.a.editor.auth)
    .set('Prefer', `wait=${wait}`)
    .send(body);

const getPost = (id: string) =>
  request(suite.t.app).get(`/${suite.a.site.slug}/posts/${id}`).set(suite.a.editor.auth).expect(200);

const mediaFields = (id: string) =>
  suite.t.services.db.one(
    sql.type(z.object({ alt: z.string().nullable() }))`select alt from media_items where id = ${id}`,
  );

describe('without a text provider', () => {
  it('makes a title from the post’s own title with the keyword in front, ≤ 60 characters, and applies it', async () => {
    suite.worker = await startTestWorker(suite.t);
    const post = await newPost();
    const job = await generate({ kind: 'title', post_id: post.id, keyword: 'harbour pier', apply: true }).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      kind: 'text',
      credits_charged: 2,
      output: { kind: 'title', source: 'local', provider: 'local', applied: true, item: { kind: 'post', id: post.id } },
    });
    const text: string = job.body.output.text;
    expect(text.startsWith('Harbour pier: A long title about the new pier')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(60);
    expect(text.endsWith('…')).toBe(true);
    expect(job.body.output.note).toMatch(/no language model/);
    const after = await getPost(post.id);
    expect(after.body.seo).toEqual({ title: text });
    expect(after.body.version).toBe(post.version + 1);
  });

  it('makes a meta description from the first sentences of a text, only onto the job', async () => {
    suite.worker = await startTestWorker(suite.t);
    const text =
      '# Cold brew\n\nCold brew steeps for twelve hours. It tastes smooth and sweet. ' +
      'Serve it over ice with a slice of orange. Keep it in the fridge for a week at most, sealed well, away from light.';
    const job = await generate({ kind: 'meta_description', text }).expect(200);
    expect(job.body.output).toMatchObject({
      applied: false,
      item: null,
      text: 'Cold brew steeps for twelve hours. It tastes smooth and sweet. Serve it over ice with a slice of orange.',
    });
  });

  it('reads a page from its elements, and applies a meta description to its seo', async () => {
    suite.worker = await startTestWorker(suite.t);
    const { t, a } = suite;
    const type = await createType(t, a.editor.auth, a.site, {
      fields: [
        { id: 'heading', label: 'Heading', type: 'text' },
        { id: 'body', label: 'Body', type: 'long_text' },
      ],
    });
    const element = await createElement(t, a.editor.auth, a.site, {
      type: type.api_id,
      data: { heading: 'Our bakery', body: 'We bake bread at dawn. Every loaf is sourdough.' },
      status: 'draft',
    });
    const page = await request(t.app)
      .post(`/${a.site.slug}/pages/`)
      .set(a.editor.auth)
      .send({ slug: `bakery-${unique()}`, title: 'Bakery', seo: { title: 'Kept' } })
      .expect(201);
    await request(t.app)
      .post(`/${a.site.slug}/pages/${page.body.id}/elements`)
      .set(a.editor.auth)
      .send({ element_id: element.id, area: 'main' })
      .expect(201);
    const job = await generate({ kind: 'meta_description', page_id: page.body.id, apply: true }).expect(200);
    expect(job.body.output).toMatchObject({ text: 'We bake bread at dawn. Every loaf is sourdough.', applied: true });
    const after = await request(t.app).get(`/${a.site.slug}/pages/${page.body.id}`).set(a.editor.auth).expect(200);
    expect(after.body.seo).toEqual({ title: 'Kept', description: 'We bake bread at dawn. Every loaf is sourdough.' });
  });

  it('takes alt text from a media item’s caption; without one it fails naming TEXT_PROVIDERS and charges nothing', async () => {
    suite.worker = await startTestWorker(suite.t);
    const { t, a } = suite;
    const captioned = await mediaRow(t, a.site);
    await t.services.db.query(sql.typeAlias('void')`
      update media_items set caption = 'A fishing boat at the new pier at dawn' where id = ${captioned}`);
    const job = await generate({ kind: 'alt_text', media_id: captioned, apply: true }).expect(200);
    expect(job.body.output).toMatchObject({ text: 'A fishing boat at the new pier at dawn', source: 'local' });
    expect((await mediaFields(captioned)).alt).toBe('A fishing boat at the new pier at dawn');

    const bare = await mediaRow(t, a.site);
    const failed = await generate({ kind: 'alt_text', media_id: bare, apply: true }).expect(200);
    expect(failed.body).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'text_provider_not_configured' },
    });
    expect(failed.body.error.message).toMatch(/TEXT_PROVIDERS/);
    expect((await ledgerFor(t, failed.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect((await mediaFields(bare)).alt).toBe('');
  });
});

describe('with TEXT_PROVIDERS=openai', () => {
  // The app plans the job at submit by its providers: it is configured, as the worker is.
  const withModel = () => textModelEnv(fake);
  const modelSuite = jobsSuite(withModel);
  beforeAll(async () => {
    await giveCredits(modelSuite.t, modelSuite.a.site, 200, modelSuite.a.editor.user.id);
  });

  it('asks OpenAI’s chat, holding the answer to the limit', async () => {
    modelSuite.worker = await startTestWorker(modelSuite.t, withModel());
    const post = await newPost(modelSuite.a.editor.auth, undefined, modelSuite);
    fake.script('chat/completions', {
      kind: 'ok',
      reply: {
        content: JSON.stringify({ text: 'Harbour pier opens: boats, builders and a mild spring' }),
        usage: { promptTokens: 800, completionTokens: 100 },
      },
    });
    const job = await generate(
      { kind: 'title', post_id: post.id, keyword: 'harbour pier' },
      undefined,
      20,
      modelSuite,
    ).expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      credits_charged: 2,
      output: {
        source: 'model',
        provider: 'openai',
        tokens: 900,
        text: 'Harbour pier opens: boats, builders and a mild spring',
      },
    });
    const call = fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions').at(-1);
    expect(call?.body).toMatchObject({ response_format: { type: 'json_object' } });
    expect(JSON.stringify(call?.body)).toMatch(/focus keyword \\"harbour pier\\"/);

    fake.script('chat/completions', { kind: 'ok', reply: { content: 'not json' } });
    const garbage = await generate({ kind: 'meta_description', post_id: post.id }, undefined, 20, modelSuite).expect(
      200,
    );
    expect(garbage.body).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_invalid_response' },
    });
  });
});

it('lets anyone of the site generate, but apply only to what they may change', async () => {
  const { t, a, b } = suite;
  const editors = await newPost();
  // No worker runs: nothing waits for the jobs.
  const submit = (body: Record<string, unknown>, auth: Auth = a.editor.auth) => generate(body, auth, 0);
  // Generating is reading: an author may; applying to the editor's post is a change of it.
  await submit({ kind: 'title', post_id: editors.id }, author.auth).expect(202);
  await submit({ kind: 'title', post_id: editors.id, apply: true }, author.auth).expect(403);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'content:read', 'jobs:write']);
  await submit({ kind: 'title', post_id: editors.id }, reader.auth).expect(202);
  await submit({ kind: 'title', post_id: editors.id, apply: true }, reader.auth).expect(403);
  const noJobs = await serviceAccount(t, a.tenant, ['sites:read', 'content:read']);
  await submit({ kind: 'title', post_id: editors.id }, noJobs.auth).expect(403);
  await submit({ kind: 'title', post_id: editors.id }, b.admin.auth).expect(404);
  const others = await request(t.app)
    .post(`/${b.site.slug}/posts/`)
    .set(b.admin.auth)
    .send({ title: 'Theirs', body: 'Text.' })
    .expect(201);
  await submit({ kind: 'title', post_id: others.body.id }).expect(404);
  await request(t.app).post(`/${a.site.slug}/seo/generatetext`).send({ kind: 'title', text: 'x' }).expect(401);
  for (const body of [
    {},
    { kind: 'title' },
    { kind: 'headline', text: 'x' },
    { kind: 'title', text: 'x', post_id: editors.id },
    { kind: 'alt_text', text: 'x' },
    { kind: 'title', text: 'x', apply: true },
    { kind: 'title', text: 'x', locale: 'xx' },
    { kind: 'title', text: 'x', extra: 1 },
  ])
    await submit(body).expect(422);
});
