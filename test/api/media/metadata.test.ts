// POST /{site}/media/{media_id}/generate-metadata: alt text, caption and tags
// written into the item by a job; locally from technical metadata (and saying
// so), or by an OpenAI-compatible chat endpoint that sees the image.
import sharp from 'sharp';
import request from 'supertest';
import type { TestApp } from '../../helpers/app.ts';
import type { FakeProviders } from '../../helpers/fake-providers.ts';
import { ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaSuite, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let fake: FakeProviders;
const suite = mediaSuite();
beforeAll(() => {
  ({ t, cast, fake } = suite);
});

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

it('asks an OpenAI-compatible chat endpoint, showing it the image, when TEXT_PROVIDER=openai', async () => {
  suite.worker = await startTestWorker(t, { TEXT_PROVIDER: 'openai', AI_BASE_URL: fake.url, AI_API_KEY: 'key' });
  const id = await uploadedImage('square.png');
  const job = await describe_(id, { overwrite: true }).expect(200);
  expect(job.body).toMatchObject({
    status: 'succeeded',
    output: { generated: { source: 'openai', tags: ['red', 'square'] } },
  });
  const call = fake.requests.find((recorded) => recorded.path === '/chat/completions');
  const parts = (call?.body as { messages: { content: { type: string; image_url?: { url: string } }[] }[] })
    .messages[0]!.content;
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
