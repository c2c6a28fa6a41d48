// POST /{site}/media/{media_id}/generate-metadata: alt text, caption and tags
// written into the item by a job; locally from technical metadata (and saying
// so), or by a language model named in TEXT_PROVIDERS (OpenAI's chat, its
// strict fake) that sees the image. The text chain is the worker's: the
// request is not planned at submit, so the app's configuration is the same for both.
import sharp from 'sharp';
import request from 'supertest';
import type { TestApp } from '../../helpers/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaSuite, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
const suite = mediaSuite();
beforeAll(() => {
  ({ t, cast } = suite);
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

/** Uploads an image; with a worker running, waits until it is processed. */
async function uploadedImage(name: string, processed = true) {
  const png = await sharp({ create: { width: 800, height: 400, channels: 3, background: { r: 20, g: 60, b: 220 } } })
    .png()
    .toBuffer();
  const res = await request(t.app)
    .post(`/${cast.a.site.slug}/media/`)
    .set(cast.a.editor.auth)
    .attach('file', png, name)
    .expect(201);
  if (processed) await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
  return res.body.id as string;
}

const describe_ = (id: string, body: Record<string, unknown> = {}, auth = cast.a.editor.auth) =>
  request(t.app)
    .post(`/${cast.a.site.slug}/media/${id}/generate-metadata`)
    .set(auth)
    .set('Prefer', 'wait=30')
    .send(body);

it('describes an image locally from what is known of it, fills only empty fields, and says how it was made', async () => {
  suite.worker = await startTestWorker(t);
  const id = await uploadedImage('harbour-at-night.png');
  await request(t.app)
    .patch(`/${cast.a.site.slug}/media/${id}`)
    .set(cast.a.editor.auth)
    .send({ caption: 'Kept caption' })
    .expect(200);
  const job = await describe_(id).expect(200);
  expect(job.body).toMatchObject({
    status: 'succeeded',
    credits_charged: 1,
    output: { generated: { source: 'local' } },
  });
  expect(job.body.output.generated.note).toMatch(/not from its content/);
  const item = await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth).expect(200);
  expect(item.body.alt).toBe('Landscape image of harbour at night, mostly blue (800×400).');
  expect(item.body.caption).toBe('Kept caption');
  expect(item.body.tags).toEqual(['image', 'landscape', 'blue', 'png', 'harbour', 'night']);
  expect((await ledgerFor(t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);
  // overwrite replaces what was there.
  await describe_(id, { overwrite: true }).expect(200);
  expect(
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth).expect(200)).body.caption,
  ).toBe('Harbour At Night');
});

it('asks OpenAI’s chat, showing it the image, when TEXT_PROVIDERS=openai', async () => {
  suite.worker = await startTestWorker(t, {
    TEXT_PROVIDERS: 'openai',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
  });
  const id = await uploadedImage('square.png');
  fake.script('chat/completions', {
    kind: 'ok',
    reply: {
      content: JSON.stringify({ alt: 'A red square on white', caption: 'Red square.', tags: ['Red', 'Square'] }),
    },
  });
  const job = await describe_(id, { overwrite: true }).expect(200);
  expect(job.body).toMatchObject({
    status: 'succeeded',
    output: { generated: { source: 'openai', tags: ['red', 'square'], note: 'Written by gpt-5.4-mini.' } },
  });
  const call = fake.requests.find((recorded) => recorded.path === '/v1/chat/completions');
  expect(call?.body).toMatchObject({ model: 'gpt-5.4-mini', response_format: { type: 'json_object' } });
  const user = (call?.body as { messages: { role: string; content: unknown }[] }).messages.find(
    (message) => message.role === 'user',
  );
  const parts = user!.content as { type: string; image_url?: { url: string } }[];
  expect(parts.find((part) => part.type === 'image_url')?.image_url?.url).toMatch(/^data:image\/webp;base64,/);
  const item = await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth).expect(200);
  expect(item.body).toMatchObject({ alt: 'A red square on white', caption: 'Red square.', tags: ['red', 'square'] });
});

it('refuses what the caller may not change, and bad bodies, before queueing', async () => {
  const id = await uploadedImage('other.png', false);
  await describe_(id, {}, cast.author.auth).expect(403);
  await describe_(id, {}, cast.b.admin.auth).expect(404);
  await describe_(id, { overwrite: 'yes' }).expect(422);
  await describe_(id, { style: 'poetic' }).expect(422);
  await request(t.app).post(`/${cast.a.site.slug}/media/${id}/generate-metadata`).send({}).expect(401);
  const poor = await request(t.app)
    .post(`/${cast.a.site.slug}/media/${id}/generate-metadata`)
    .set(cast.a.admin.auth)
    .send({})
    .expect(402);
  expect(poor.body).toMatchObject({ required: 1 });
});
