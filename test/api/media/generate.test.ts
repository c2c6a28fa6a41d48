// POST /{site}/media/generate: images from a prompt, as a job, paid per image.
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import type { FakeProviders } from '../../helpers/fake-providers.ts';
import { ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { mediaSuite, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let fake: FakeProviders;
const suite = mediaSuite();
beforeAll(() => {
  ({ t, cast, fake } = suite);
});

const generate = (body: Record<string, unknown>, auth = cast.a.editor.auth) =>
  request(t.app).post(`/${cast.a.site.slug}/media/generate`).set(auth).send(body);
const fileOf = async (id: string) =>
  Buffer.from(
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}/view`).set(cast.a.editor.auth).buffer(true).expect(200))
      .body as Buffer,
  );

it('makes the images as media items in the folder asked for, deterministic for a prompt and seed, and charges per image', async () => {
  suite.worker = await startTestWorker(t);
  const folder = await request(t.app)
    .post(`/${cast.a.site.slug}/media/folders/`)
    .set(cast.a.editor.auth)
    .send({ name: 'Generated' })
    .expect(201);
  const body = {
    prompt: 'A lighthouse at dusk',
    size: '256x256',
    count: 2,
    seed: 7,
    format: 'webp',
    folder_id: folder.body.id,
  };
  const res = await generate(body).set('Prefer', 'wait=30').expect(200);
  expect(res.body).toMatchObject({ status: 'succeeded', kind: 'image', credits_reserved: 20, credits_charged: 20 });
  expect(res.body.media_ids).toHaveLength(2);
  for (const id of res.body.media_ids) {
    const item = await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth).expect(200);
    expect(item.body).toMatchObject({
      kind: 'image',
      mime_type: 'image/webp',
      width: 256,
      height: 256,
      folder_id: folder.body.id,
      job_id: res.body.id,
      status: 'ready',
    });
    expect((await sharp(await fileOf(id)).metadata()).format).toBe('webp');
  }
  expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);
  // Two images of one job differ; the same prompt and seed again give the same first image.
  const [first, second] = await Promise.all(res.body.media_ids.map(fileOf));
  expect(first!.equals(second!)).toBe(false);
  const again = await generate({ ...body, count: 1 })
    .set('Prefer', 'wait=30')
    .expect(200);
  expect((await fileOf(again.body.media_ids[0])).equals(first!)).toBe(true);
});

it('calls an OpenAI-compatible endpoint when configured, and fails a refusal at once without charging', async () => {
  suite.worker = await startTestWorker(t, { IMAGE_PROVIDER: 'openai', AI_BASE_URL: fake.url, AI_API_KEY: 'key' });
  const ok = await generate({ prompt: 'Two cats', size: '512x512', count: 2 }).set('Prefer', 'wait=30').expect(200);
  expect(ok.body).toMatchObject({ status: 'succeeded', credits_charged: 20, output: { provider: 'openai', count: 2 } });
  const call = fake.requests.find((recorded) => recorded.path === '/images/generations');
  expect(call?.body).toMatchObject({ prompt: 'Two cats', n: 2, size: '512x512', response_format: 'b64_json' });
  expect(call?.headers.authorization).toBe('Bearer key');
  fake.images.push({ kind: 'status', status: 400 });
  const refused = await generate({ prompt: 'Something refused', size: '256x256' }).set('Prefer', 'wait=30').expect(200);
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
  await generate({ prompt: 'x', size: '300x300' }).expect(422);
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
