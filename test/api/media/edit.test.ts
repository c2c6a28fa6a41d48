// POST /{site}/media/{media_id}/edit-with-ai: an edit by instruction, as a
// job, saved as the image's new version — once, even if the job runs again.
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakeOpenAI } from '../../helpers/fakes/openai.ts';
import { giveCredits, ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaCast, mediaSuite, toneWav, type MediaCast } from '../../helpers/media.ts';

// IMAGE_EDIT_PROVIDERS is local (the default) but for the test of OpenAI's edits, which has an app of its own.
let t: TestApp;
let cast: MediaCast;
const suite = mediaSuite();
beforeAll(() => {
  ({ t, cast } = suite);
});

/** A white 200×100 image with a red square in the middle. */
const subject = () =>
  sharp({ create: { width: 200, height: 100, channels: 3, background: '#ffffff' } })
    .composite([
      { input: { create: { width: 40, height: 40, channels: 3, background: '#ff0000' } }, left: 80, top: 30 },
    ])
    .png()
    .toBuffer();

async function uploaded(file: Buffer, name = 'subject.png') {
  const res = await request(t.app)
    .post(`/${cast.a.site.slug}/media/`)
    .set(cast.a.editor.auth)
    .attach('file', file, name)
    .expect(201);
  if (suite.worker) await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
  return res.body.id as string;
}

const edit = (id: string, body: Record<string, unknown>, auth = cast.a.editor.auth) =>
  request(t.app).post(`/${cast.a.site.slug}/media/${id}/edit-with-ai`).set(auth).set('Prefer', 'wait=30').send(body);
const current = async (id: string) =>
  Buffer.from(
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}/view`).set(cast.a.editor.auth).buffer(true).expect(200))
      .body as Buffer,
  );
const alphaAt = async (png: Buffer, x: number, y: number) => {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return data[(y * info.width + x) * 4 + 3];
};

it('removes a plain background locally, as a new version, and charges once', async () => {
  suite.worker = await startTestWorker(t);
  const id = await uploaded(await subject());
  const job = await edit(id, { instruction: 'Remove the background please' }).expect(200);
  expect(job.body).toMatchObject({
    status: 'succeeded',
    credits_charged: 10,
    output: { version: 2, applied: ['remove the background'], provider: 'local' },
  });
  const png = await current(id);
  expect(await alphaAt(png, 5, 5)).toBe(0);
  expect(await alphaAt(png, 100, 50)).toBe(255);
  const versions = await request(t.app)
    .get(`/${cast.a.site.slug}/media/${id}/image-versions`)
    .set(cast.a.editor.auth)
    .expect(200);
  expect(versions.body.items.map((version: { version: number }) => version.version)).toEqual([2, 1]);
});

it('makes one version when the job runs again after saving it (its settlement failed the first time)', async () => {
  const id = await uploaded(await subject());
  const submitted = await request(t.app)
    .post(`/${cast.a.site.slug}/media/${id}/edit-with-ai`)
    .set(cast.a.editor.auth)
    .send({ instruction: 'invert' })
    .expect(202);
  // The first settlement of this job fails (a sequence is not rolled back, so only the first): as if the worker died there.
  await t.services.db.query(sql.unsafe`create sequence crash_once`);
  await t.services.db.query(sql.unsafe`
    create function crash_first_settle() returns trigger language plpgsql as $$
    begin
      if new.id = ${sql.literalValue(submitted.body.id)} and new.status = 'succeeded' and nextval('crash_once') = 1 then
        raise exception 'simulated crash before the settlement committed';
      end if;
      return new;
    end $$`);
  await t.services.db.query(
    sql.unsafe`create trigger crash_first_settle before update on jobs for each row execute function crash_first_settle()`,
  );
  try {
    suite.worker = await startTestWorker(t);
    const done = await waitForJob(t, submitted.body.id, ['succeeded', 'failed'], 60_000);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, credits_charged: 10 });
    const versions = await request(t.app)
      .get(`/${cast.a.site.slug}/media/${id}/image-versions`)
      .set(cast.a.editor.auth)
      .expect(200);
    expect(versions.body.items.map((version: { version: number }) => version.version)).toEqual([2, 1]);
    expect((await ledgerFor(t, submitted.body.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  } finally {
    await t.services.db.query(sql.unsafe`drop trigger crash_first_settle on jobs`);
    await t.services.db.query(sql.unsafe`drop function crash_first_settle()`);
    await t.services.db.query(sql.unsafe`drop sequence crash_once`);
  }
});

it('keeps what a mask keeps, upscales, and turns an image black and white', async () => {
  suite.worker = await startTestWorker(t);
  const id = await uploaded(await subject());
  // The mask keeps only the left half.
  const mask = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#000000' } })
    .composite([
      { input: { create: { width: 100, height: 100, channels: 3, background: '#ffffff' } }, left: 0, top: 0 },
    ])
    .png()
    .toBuffer();
  const maskId = await uploaded(mask, 'mask.png');
  await edit(id, { instruction: 'remove background', mask_media_id: maskId }).expect(200);
  const masked = await current(id);
  expect(await alphaAt(masked, 10, 50)).toBe(255);
  expect(await alphaAt(masked, 190, 50)).toBe(0);
  await waitForJob(
    t,
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth)).body.job_id,
    ['succeeded', 'failed'],
  );
  const up = await edit(id, { instruction: 'upscale 2x' }).expect(200);
  expect(up.body.status).toBe('succeeded');
  expect((await sharp(await current(id)).metadata()).width).toBe(400);
  await waitForJob(
    t,
    (await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth)).body.job_id,
    ['succeeded', 'failed'],
  );
  await edit(id, { instruction: 'make it black and white' }).expect(200);
  const { data } = await sharp(await current(id))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const centre = (50 * 400 + 200) * 3;
  expect(data[centre]).toBe(data[centre + 1]);
});

it('fails an instruction the local editor cannot honour, saying what it can, and charges nothing', async () => {
  suite.worker = await startTestWorker(t);
  const id = await uploaded(await subject());
  const job = await edit(id, { instruction: 'put a hat on the square' }).expect(200);
  expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'unsupported_instruction' } });
  expect(job.body.error.message).toMatch(/remove the background, upscale/);
  expect((await request(t.app).get(`/${cast.a.site.slug}/media/${id}`).set(cast.a.editor.auth)).body.version).toBe(1);
});

it('sends the instruction to OpenAI’s /images/edits when IMAGE_EDIT_PROVIDERS names it, as multipart with the picture', async () => {
  const fake = await startFakeOpenAI();
  const env = {
    IMAGE_EDIT_PROVIDERS: 'openai',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
    OPENAI_IMAGE_EDIT_PRICES: 'gpt-image-2=10',
  };
  // The plan is made at submit: the app names the provider, as the worker does.
  const openAi = await startTestApp({ env });
  try {
    const { a } = await mediaCast(openAi);
    await giveCredits(openAi, a.site, 100, a.editor.user.id);
    suite.worker = await startTestWorker(openAi, env);
    const upload = await request(openAi.app)
      .post(`/${a.site.slug}/media/`)
      .set(a.editor.auth)
      .attach('file', await subject(), 'subject.png')
      .expect(201);
    await waitForJob(openAi, upload.body.job_id, ['succeeded', 'failed']);
    const job = await request(openAi.app)
      .post(`/${a.site.slug}/media/${upload.body.id}/edit-with-ai`)
      .set(a.editor.auth)
      .set('Prefer', 'wait=30')
      .send({ instruction: 'make it look like a watercolour' })
      .expect(200);
    expect(job.body).toMatchObject({
      status: 'succeeded',
      credits_charged: 10,
      output: { version: 2, provider: 'openai', model: 'gpt-image-2', placeholder: false },
    });
    const call = fake.requests.find((recorded) => recorded.path === '/v1/images/edits');
    expect(call?.headers['content-type']).toMatch(/multipart\/form-data/);
    expect(call?.body).toMatchObject({ model: 'gpt-image-2', prompt: 'make it look like a watercolour', n: '1' });
    expect(call?.files.map((file) => [file.field, file.mimeType])).toEqual([['image', 'image/png']]);
    // The item's new version is the picture OpenAI answered (its size: auto, a square).
    const edited = await request(openAi.app)
      .get(`/${a.site.slug}/media/${upload.body.id}/view`)
      .set(a.editor.auth)
      .buffer(true)
      .expect(200);
    expect((await sharp(edited.body as Buffer).metadata()).width).toBe(1024);
  } finally {
    await suite.worker?.stop();
    suite.worker = undefined;
    await stopTestApp(openAi);
    await fake.close();
  }
});

it('refuses other media, a foreign mask, authors on others’ images and bad bodies before queueing', async () => {
  const id = await uploaded(await subject());
  const jobs = () =>
    t.services.db.oneFirst(
      sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where kind = 'image_edit'`,
    );
  const before = await jobs();
  const sound = await uploaded(toneWav(0.3), 'tone.wav');
  await edit(sound, { instruction: 'remove background' }).expect(409);
  const foreign = await request(t.app)
    .post(`/${cast.b.site.slug}/media/`)
    .set(cast.b.admin.auth)
    .attach('file', await subject(), 'b.png')
    .expect(201);
  const mask = await edit(id, { instruction: 'remove background', mask_media_id: foreign.body.id }).expect(422);
  expect(mask.body.errors).toEqual([expect.objectContaining({ path: 'body.mask_media_id' })]);
  await edit(id, { instruction: '' }).expect(422);
  await edit(id, { instruction: 'x', strength: 3 }).expect(422);
  await edit(id, { instruction: 'remove background' }, cast.author.auth).expect(403);
  await edit(id, { instruction: 'remove background' }, cast.b.admin.auth).expect(404);
  await edit(id, { instruction: 'remove background' }, cast.a.admin.auth).expect(402);
  await request(t.app).post(`/${cast.a.site.slug}/media/${id}/edit-with-ai`).send({ instruction: 'x' }).expect(401);
  expect(await jobs()).toBe(before);
});
