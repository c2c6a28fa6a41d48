// The text jobs read the system prompt of their kind: SEO text (seo), post
// transforms (transform), machine translation (translate) and website
// generation (website). A stored prompt reaches OpenAI's strict fake on
// 127.0.0.1 (test/helpers/fakes/openai.ts) first in the system message, the
// job's own instructions after it;
// the job copies it at submit, so a change made while it waits does not reach
// it; without one, the built-in instructions alone.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { withLocales } from '../../helpers/content.ts';
import { startFakeOpenAI, type FakeOpenAI, type Script } from '../../helpers/fakes/openai.ts';
import { unique } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, startTestWorker, waitForJob } from '../../helpers/jobs.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
const textModel = () => ({ TEXT_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey });
// The app plans text jobs at submit by its providers: configured as the worker is.
const suite = jobsSuite(textModel);
let site: Site;

beforeAll(async () => {
  site = await withLocales(suite.t, suite.a.site, ['en', 'de']);
  await giveCredits(suite.t, site, 2000, suite.a.editor.user.id);
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

const withProvider = () => startTestWorker(suite.t, textModel());

/** A chat request as the fake records it. */
type Chat = { messages: { role: string; content: string }[] };

const storePrompt = (type: string, content: string) =>
  request(suite.t.app).post(`/system-prompts/${type}`).set(suite.admin.auth).send({ content });

/** The system messages the fake was sent from `from` on. */
const systemMessages = (from: number) =>
  fake.requests
    .slice(from)
    .filter((recorded) => recorded.path === '/v1/chat/completions')
    .map((recorded) => (recorded.body as Chat).messages.find((message) => message.role === 'system')?.content);

const submit = (path: string, body: Record<string, unknown>, wait = true) => {
  const call = request(suite.t.app).post(`/${site.slug}${path}`).set(suite.a.editor.auth);
  return (wait ? call.set('Prefer', 'wait=30') : call).send(body);
};

async function newPost(): Promise<{ id: string }> {
  const res = await submit('/posts/', {
    title: `Harbour ${unique()}`,
    body: '<p>The harbour opened a new pier. Boats use it every morning.</p>',
    body_format: 'html',
    locale: 'en',
  }).expect(201);
  return res.body;
}

const seoAnswer: Script = { kind: 'ok', reply: { content: JSON.stringify({ text: 'Harbour pier opens' }) } };

/** A message that starts with the prompt, a blank line, then the job's own first words. */
const promptThen = (prompt: string, asked: string) =>
  new RegExp(`^${`${prompt}\n\n${asked}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

/** The fake's translation: every text node prefixed with [de], tags untouched. */
const inGerman: Script = {
  kind: 'ok',
  reply: (request) => {
    const text = (request as Chat).messages.find((message) => message.role === 'user')?.content ?? '';
    return { content: /[<>]/.test(text) ? text.replace(/>([^<]+)</g, '>[de] $1<') : `[de] ${text}` };
  },
};

it('puts each kind’s stored prompt first in the model’s instructions, and records the version on the job', async () => {
  const prompts = {
    seo: 'SEO house rules: never use exclamation marks.',
    transform: 'Transform house rules: keep the author’s voice.',
    translate: 'Glossary: translate "pier" as "Seebrücke".',
    website: 'You write for harbour businesses in Kiel, plainly.',
  };
  for (const [type, content] of Object.entries(prompts)) await storePrompt(type, `${content} (draft)`).expect(201);
  for (const [type, content] of Object.entries(prompts)) await storePrompt(type, content).expect(200);
  suite.worker = await withProvider();
  const post = await newPost();

  let from = fake.requests.length;
  fake.script('chat/completions', seoAnswer);
  const seo = await submit('/seo/generatetext', { kind: 'title', post_id: post.id }).expect(200);
  expect(seo.body).toMatchObject({ status: 'succeeded', output: { provider: 'openai', text: 'Harbour pier opens' } });
  expect(seo.body.input.system_prompt).toEqual({ type: 'seo', version: 2, content: prompts.seo });
  expect(systemMessages(from)).toEqual([
    expect.stringMatching(promptThen(prompts.seo, 'Write an SEO title for this content')),
  ]);

  from = fake.requests.length;
  fake.script('chat/completions', {
    kind: 'ok',
    reply: { content: JSON.stringify({ body: '<p>A new pier for the boats.</p>' }) },
  });
  const transform = await submit(`/posts/${post.id}/transform`, { operation: 'rewrite', apply: false }).expect(200);
  expect(transform.body).toMatchObject({ status: 'succeeded', output: { provider: 'openai' } });
  expect(transform.body.input.system_prompt).toMatchObject({ type: 'transform', version: 2 });
  expect(systemMessages(from)).toEqual([expect.stringMatching(promptThen(prompts.transform, 'Rewrite the body'))]);

  from = fake.requests.length;
  // The title and the body, one call each.
  fake.script('chat/completions', inGerman, inGerman);
  const translate = await submit(`/translations/posts/${post.id}/translate`, {
    target_locale: 'de',
    fields: ['title', 'body'],
  }).expect(200);
  expect(translate.body).toMatchObject({ status: 'succeeded', output: { translated: ['title', 'body'] } });
  expect(translate.body.input.system_prompt).toMatchObject({ type: 'translate', version: 2 });
  const translations = systemMessages(from);
  expect(translations).toHaveLength(2);
  for (const message of translations)
    expect(message).toMatch(promptThen(prompts.translate, "Translate the user's text from en to de."));

  from = fake.requests.length;
  const copy = {
    pages: [{ key: 'home', title: 'Welcome', sections: [{ heading: 'Hello', body: 'Fresh fish daily.' }] }],
    posts: [],
  };
  fake.script('chat/completions', { kind: 'ok', reply: { content: JSON.stringify(copy) } });
  const website = await submit('/generate-website/', { business: 'Harbour fish shop', pages: ['home'] }).expect(200);
  expect(website.body).toMatchObject({ error: null, status: 'succeeded', output: { copy_source: 'model' } });
  expect(website.body.input.system_prompt).toMatchObject({ type: 'website', version: 2 });
  // The stored prompt replaces the built-in opening line; the job's own asks follow it.
  const [websiteMessage] = systemMessages(from);
  expect(websiteMessage).toMatch(promptThen(prompts.website, 'Write one entry in "pages"'));
  expect(websiteMessage).not.toMatch(/small business website/);
});

it('runs with the version it was submitted with, however the prompt changes while it waits', async () => {
  const type = 'seo';
  await storePrompt(type, 'Submitted with this.').expect((res) => expect([200, 201]).toContain(res.status));
  const post = await newPost();
  const queued = await submit('/seo/generatetext', { kind: 'meta_description', post_id: post.id }, false).expect(202);
  const version = queued.body.input.system_prompt.version;
  await storePrompt(type, 'Changed while it waited.').expect(200);

  const from = fake.requests.length;
  fake.script('chat/completions', seoAnswer);
  suite.worker = await withProvider();
  const done = await waitForJob(suite.t, queued.body.id, ['succeeded', 'failed']);
  expect(done).toMatchObject({ error: null, status: 'succeeded' });
  expect(done.input.system_prompt).toEqual({ type, version, content: 'Submitted with this.' });
  expect(systemMessages(from)).toEqual([expect.stringMatching(/^Submitted with this\.\n\nWrite a meta description/)]);
});

it('uses the built-in instructions alone once the prompt is deleted, and a copy takes no prompt', async () => {
  await storePrompt('seo', 'Soon gone.').expect((res) => expect([200, 201]).toContain(res.status));
  await request(suite.t.app).delete('/system-prompts/seo').set(suite.admin.auth).expect(204);
  await storePrompt('translate', 'Unused by copies.').expect((res) => expect([200, 201]).toContain(res.status));
  suite.worker = await withProvider();
  const post = await newPost();

  const from = fake.requests.length;
  fake.script('chat/completions', seoAnswer);
  const seo = await submit('/seo/generatetext', { kind: 'title', post_id: post.id }).expect(200);
  expect(seo.body.status).toBe('succeeded');
  expect(seo.body.input).not.toHaveProperty('system_prompt');
  // Exactly what the job asked before system prompts existed.
  expect(systemMessages(from)).toEqual([
    'Write an SEO title for this content: what a search result shows as its headline. At most 60 characters. ' +
      'Write in en. Answer with JSON only: {"text": "..."}',
  ]);

  const copy = await submit(`/translations/posts/${post.id}/translate`, { target_locale: 'de', mode: 'copy' }).expect(
    200,
  );
  expect(copy.body.status).toBe('succeeded');
  expect(copy.body.input).not.toHaveProperty('system_prompt');
});
