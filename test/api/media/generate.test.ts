// POST /{site}/media/generate: images from a prompt, as a job, paid per image.
// IMAGE_PROVIDERS=openai,local: each request is planned at submit onto the
// providers whose model makes the size asked — gpt-image-2 (OpenAI's strict
// fake) for the sizes it makes, the local renderer (any size 64–4096, a
// placeholder) for the others.
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { refusal } from '../../helpers/fakes/openai/errors.ts';
import { ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { mediaSuite, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
const suite = mediaSuite({
  env: () => ({
    IMAGE_PROVIDERS: 'openai,local',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
    // As the stand-in is priced in the tests: 10 credits an image.
    OPENAI_IMAGE_PRICES: 'gpt-image-2=10',
  }),
});
beforeAll(() => {
  ({ t, cast } = suite);
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

const generate = (body: Record<string, unknown>, auth = cast.a.editor.auth) =>
  request(t.app).post(`/${cast.a.site.slug}/media/generate`).set(auth).send(body);
const fileOf = async (id: string) =>
  Buffer.from(
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}/view`).set(cast.a.editor.auth).buffer(true).expect(200))
      .body as Buffer,
  );
const itemOf = async (id: string) =>
  (await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth).expect(200)).body;

it('makes a size no vendor model makes with the local renderer: placeholders in the folder asked for, deterministic for a prompt and seed, charged per image', async () => {
  suite.worker = await startTestWorker(t, suite.env);
  const folder = await request(t.app)
    .post(`/${cast.a.site.slug}/media/folders/`)
    .set(cast.a.editor.auth)
    .send({ name: 'Generated' })
    .expect(201);
  // gpt-image-2 makes no 300x300 (under its 655,360 pixels): the plan keeps only the local renderer.
  const body = {
    prompt: 'A lighthouse at dusk',
    size: '300x300',
    count: 2,
    seed: 7,
    format: 'webp',
    folder_id: folder.body.id,
  };
  const res = await generate(body).set('Prefer', 'wait=30').expect(200);
  expect(res.body).toMatchObject({
    status: 'succeeded',
    kind: 'image',
    credits_reserved: 20,
    credits_charged: 20,
    input: { providers: [{ vendor: 'local', model: 'local' }] },
    output: { provider: 'local', model: 'local', placeholder: true, count: 2 },
  });
  expect(fake.requests).toEqual([]);
  expect(res.body.media_ids).toHaveLength(2);
  for (const id of res.body.media_ids) {
    const item = await itemOf(id);
    expect(item).toMatchObject({
      kind: 'image',
      mime_type: 'image/webp',
      width: 300,
      height: 300,
      folder_id: folder.body.id,
      job_id: res.body.id,
      status: 'ready',
    });
    // A placeholder says what it is, not what the prompt asked for.
    expect(item.alt).toMatch(/placeholder/);
    expect(item.alt).not.toContain('lighthouse');
    expect((await sharp(await fileOf(id)).metadata()).format).toBe('webp');
  }
  expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);
  // Two images of one job differ; the same prompt and seed again give the same first image.
  const [first, second] = await Promise.all(res.body.media_ids.map(fileOf));
  expect(first!.equals(second)).toBe(false);
  const again = await generate({ ...body, count: 1 })
    .set('Prefer', 'wait=30')
    .expect(200);
  expect((await fileOf(again.body.media_ids[0])).equals(first)).toBe(true);
});

it('asks OpenAI’s gpt-image-2 for a size it makes, sending only what the model takes, and fails a refusal at once without charging', async () => {
  suite.worker = await startTestWorker(t, suite.env);
  const ok = await generate({ prompt: 'Two cats', size: '1024x768', count: 2 }).set('Prefer', 'wait=30').expect(200);
  expect(ok.body).toMatchObject({
    status: 'succeeded',
    credits_charged: 20,
    output: { provider: 'openai', model: 'gpt-image-2', placeholder: false, count: 2 },
  });
  const call = fake.requests.find((recorded) => recorded.path === '/v1/images/generations');
  expect(call?.body).toEqual({
    model: 'gpt-image-2',
    prompt: 'Two cats',
    n: 2,
    size: '1024x768',
    output_format: 'png',
    stream: false,
  });
  expect(call?.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
  for (const id of ok.body.media_ids) {
    const item = await itemOf(id);
    expect(item).toMatchObject({ mime_type: 'image/png', width: 1024, height: 768, alt: 'Two cats' });
  }
  // OpenAI's safety system refuses the prompt (a 400): the next provider would be asked the same, so the job fails.
  fake.script('images/generations', {
    kind: 'refuse',
    refusal: refusal(400, 'Your request was rejected as a result of our safety system.', {
      type: 'image_generation_user_error',
      code: 'moderation_blocked',
    }),
  });
  const refused = await generate({ prompt: 'Something refused' }).set('Prefer', 'wait=30').expect(200);
  expect(refused.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'provider_rejected' } });
  expect((await ledgerFor(t, refused.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
});

it('validates the request, the folder and the credits before anything is queued', async () => {
  const jobs = () =>
    t.services.db.oneFirst(
      sql.type(
        z.object({ count: z.number() }),
      )`select count(*)::int as count from jobs where kind = 'image' and site_id = ${cast.a.site.id}`,
    );
  const before = await jobs();
  await generate({ prompt: '' }).expect(422);
  // A size the model named cannot make: 422 naming the sizes it makes; one no model makes (under 64): 422 too.
  const size = await generate({ prompt: 'x', size: '300x300', model: 'gpt-image-2' }).expect(422);
  expect(size.body.errors).toEqual([{ path: 'body.size', message: expect.stringMatching(/multiples of 16/) }]);
  await generate({ prompt: 'x', size: '32x32' }).expect(422);
  const model = await generate({ prompt: 'x', model: 'dall-e-3' }).expect(422);
  expect(model.body.errors).toEqual([{ path: 'body.model', message: 'one of gpt-image-2, local' }]);
  await generate({ prompt: 'x', count: 5 }).expect(422);
  await generate({ prompt: 'x', style: 'cubist' }).expect(422);
  await generate({ prompt: 'x', mood: 'sad' }).expect(422);
  const foreign = await request(t.app)
    .post(`/${cast.b.site.slug}/media/folders/`)
    .set(cast.b.admin.auth)
    .send({ name: 'Theirs' })
    .expect(201);
  const wrongFolder = await generate({ prompt: 'x', folder_id: foreign.body.id }).expect(422);
  expect(wrongFolder.body.errors).toEqual([expect.objectContaining({ path: 'body.folder_id' })]);
  const poor = await generate({ prompt: 'x', count: 4 }, cast.author.auth).expect(402);
  expect(poor.body).toMatchObject({ available: 0, required: 40 });
  await request(t.app).post(`/${cast.a.site.slug}/media/generate`).send({ prompt: 'x' }).expect(401);
  await generate({ prompt: 'x' }, cast.b.admin.auth).expect(404);
  await generate({ prompt: 'x' }, cast.noScope).expect(403);
  expect(await jobs()).toBe(before);
});
