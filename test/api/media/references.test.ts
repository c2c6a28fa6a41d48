// Deleting media in use: an item a job not yet finished will read (an AI edit
// of it or with it as the mask, its metadata, a video showing it) answers 409
// naming the job, alone or inside a folder deleted recursively, unless
// force=true; a forced delete leaves the job to fail as media_missing without
// charging.
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaSuite, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
const suite = mediaSuite();
beforeAll(() => {
  ({ t, cast } = suite);
});

const site = () => cast.a.site.slug;
const editor = () => cast.a.editor.auth;

/** An image uploaded by A's editor (no worker runs, so its processing job waits: processing is not a use). */
async function image(folderId?: string): Promise<string> {
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const upload = request(t.app).post(`/${site()}/media/`).set(editor()).attach('file', png, 'pic.png');
  if (folderId) upload.field('folder_id', folderId);
  return (await upload.expect(201)).body.id;
}

const exists = (id: string) => t.services.db.exists(sql.type(z.object({}))`select 1 from media_items where id = ${id}`);

it('refuses to delete an item a queued job will read, names the job, and deletes it with force=true', async () => {
  const id = await image();
  await request(t.app).delete(`/${site()}/media/${id}`).set(editor()).expect(204);
  const used = await image();
  // Named in upper case, as a client may: still the same item.
  const job = await request(t.app)
    .post(`/${site()}/media/${used.toUpperCase()}/generate-metadata`)
    .set(editor())
    .send({})
    .expect(202);
  const refused = await request(t.app).delete(`/${site()}/media/${used}`).set(editor()).expect(409);
  expect(refused.body).toMatchObject({
    type: '/problems/media-in-use',
    status: 409,
    references: [{ media_id: used, type: 'job', id: job.body.id, detail: 'media_metadata job (queued)' }],
  });
  expect(refused.body.detail).toMatch(/force=true/);
  expect(await exists(used)).toBe(true);
  await request(t.app).delete(`/${site()}/media/${used}?force=false`).set(editor()).expect(409);
  await request(t.app).delete(`/${site()}/media/${used}?force=yes`).set(editor()).expect(422);
  await request(t.app).delete(`/${site()}/media/${used}?force=true`).set(editor()).expect(204);
  expect(await exists(used)).toBe(false);
  // The job then fails without charging.
  suite.worker = await startTestWorker(t);
  const done = await waitForJob(t, job.body.id, ['succeeded', 'failed']);
  expect(done).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'media_missing' } });
  expect((await ledgerFor(t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
});

it('counts a mask of an AI edit and a picture of a video as uses, and stops counting once the job has finished', async () => {
  const target = await image();
  const mask = await image();
  const picture = await image();
  await request(t.app)
    .post(`/${site()}/media/${target}/edit-with-ai`)
    .set(editor())
    .send({ instruction: 'remove the background', mask_media_id: mask })
    .expect(202);
  const video = await request(t.app)
    .post(`/${site()}/media/generatevideo`)
    .set(editor())
    .send({ scenes: [{ narration: 'Hello.' }, { media_id: picture, duration_seconds: 1 }], size: '640x360' })
    .expect(202);
  for (const id of [target, mask]) {
    const refused = await request(t.app).delete(`/${site()}/media/${id}`).set(editor()).expect(409);
    expect(refused.body.references).toEqual([
      expect.objectContaining({ media_id: id, type: 'job', detail: 'image_edit job (queued)' }),
    ]);
  }
  const refused = await request(t.app).delete(`/${site()}/media/${picture}`).set(editor()).expect(409);
  expect(refused.body.references).toEqual([
    { media_id: picture, type: 'job', id: video.body.id, detail: 'video job (queued)' },
  ]);
  await request(t.app).post(`/${site()}/jobs/${video.body.id}/cancel`).set(editor()).expect(200);
  await request(t.app).delete(`/${site()}/media/${picture}`).set(editor()).expect(204);
});

it('refuses a recursive folder delete while an item below is in use, unless forced, and deletes nothing meanwhile', async () => {
  const top = await request(t.app)
    .post(`/${site()}/media/folders/`)
    .set(editor())
    .send({ name: `top-${Date.now()}` })
    .expect(201);
  const inner = await request(t.app)
    .post(`/${site()}/media/folders/`)
    .set(editor())
    .send({ name: 'inner', parent_id: top.body.id })
    .expect(201);
  const idle = await image(top.body.id);
  const used = await image(inner.body.id);
  const job = await request(t.app)
    .post(`/${site()}/media/${used}/generate-metadata`)
    .set(editor())
    .send({})
    .expect(202);
  const refused = await request(t.app)
    .delete(`/${site()}/media/folders/${top.body.id}?recursive=true`)
    .set(editor())
    .expect(409);
  expect(refused.body.references).toEqual([
    { media_id: used, type: 'job', id: job.body.id, detail: 'media_metadata job (queued)' },
  ]);
  expect([await exists(idle), await exists(used)]).toEqual([true, true]);
  await request(t.app).get(`/${site()}/media/folders/${inner.body.id}`).set(editor()).expect(200);
  await request(t.app)
    .delete(`/${site()}/media/folders/${top.body.id}?recursive=true&force=true`)
    .set(editor())
    .expect(204);
  expect([await exists(idle), await exists(used)]).toEqual([false, false]);
});

it('keeps the usual answers: 401 without a token, 404 for another tenant, 403 for a reader', async () => {
  const id = await image();
  await request(t.app).delete(`/${site()}/media/${id}?force=true`).expect(401);
  await request(t.app).delete(`/${site()}/media/${id}?force=true`).set(cast.b.admin.auth).expect(404);
  await request(t.app).delete(`/${site()}/media/${id}?force=true`).set(cast.reader).expect(403);
  expect(await exists(id)).toBe(true);
});
