// Editing images: who may and why not, saving an edit (operations applied in
// order with sharp, or a new file) as a new version that keeps the old one,
// and the list of versions.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { giveCredits, localFile, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaCast, toneWav, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let worker: WorkerHandle;

beforeAll(async () => {
  t = await startTestApp();
  cast = await mediaCast(t);
  worker = await startTestWorker(t);
});
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
});

const photo = () =>
  sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 250, g: 0, b: 0 } } })
    .png()
    .toBuffer();

/** Uploads as `auth` and waits until the item is processed. */
async function image(auth: Record<string, string>, file?: Buffer, name = 'photo.png', site: Site = cast.a.site) {
  const res = await request(t.app)
    .post(`/${site.slug}/media/`)
    .set(auth)
    .attach('file', file ?? (await photo()), name)
    .expect(201);
  await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
  return res.body as { id: string; job_id: string };
}

const at = (id: string, tail: string, site: Site = cast.a.site) => `/${site.slug}/media/${id}/${tail}`;
const storedKeys = (id: string) =>
  t.services.db.one(sql.type(
    z.object({ current: z.string(), variants: z.array(z.string()), versions: z.array(z.string()) }),
  )`
    select storage_key as current, array(select v->>'key' from jsonb_array_elements(variants) v) as variants,
           array(select storage_key from media_versions where media_id = ${id} order by version) as versions
    from media_items where id = ${id}`);

describe('image-editor-access', () => {
  it('says yes, with the role and what an AI edit costs, to those who may change the image', async () => {
    const { a } = cast;
    await giveCredits(t, a.site, 25, a.editor.user.id);
    const item = await image(a.editor.auth);
    const res = await request(t.app).get(at(item.id, 'image-editor-access')).set(a.editor.auth).expect(200);
    expect(res.body).toEqual({
      allowed: true,
      reason: 'allowed',
      role: 'editor',
      ai_edit: { price: 10, available: 25, affordable: true },
    });
  });

  it('says why not: another’s image for an author, not an image, still processing, a missing scope', async () => {
    const { a, author, noScope, writer } = cast;
    const editors = await image(a.editor.auth);
    expect(
      (await request(t.app).get(at(editors.id, 'image-editor-access')).set(author.auth).expect(200)).body,
    ).toMatchObject({ allowed: false, reason: 'not_yours', role: 'author' });
    const readerOnly = await request(t.app).get(at(editors.id, 'image-editor-access')).set(noScope).expect(403);
    expect(readerOnly.body.detail).toMatch(/media:read/);
    const sound = await image(a.editor.auth, toneWav(0.5), 'tone.wav');
    expect((await request(t.app).get(at(sound.id, 'image-editor-access')).set(writer).expect(200)).body).toMatchObject({
      allowed: false,
      reason: 'not_an_image',
      role: 'service',
    });
    await t.services.db.query(
      sql.typeAlias('void')`update media_items set status = 'processing' where id = ${editors.id}`,
    );
    expect(
      (await request(t.app).get(at(editors.id, 'image-editor-access')).set(a.editor.auth).expect(200)).body,
    ).toMatchObject({ allowed: false, reason: 'still_processing' });
    await t.services.db.query(sql.typeAlias('void')`update media_items set status = 'ready' where id = ${editors.id}`);
    const { b } = cast;
    await request(t.app).get(at(editors.id, 'image-editor-access')).set(b.admin.auth).expect(404);
    await request(t.app).get(at(editors.id, 'image-editor-access')).expect(401);
  });
});

describe('save-edited-image', () => {
  it('applies operations in order as a new version, keeps the old file, and processes the new one', async () => {
    const { a } = cast;
    const item = await image(a.editor.auth);
    const before = await storedKeys(item.id);
    expect(before.variants.length).toBeGreaterThan(0);
    const res = await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({
        operations: [
          { op: 'crop', left: 0, top: 0, width: 200, height: 100 },
          { op: 'rotate', angle: 90 },
          { op: 'flip', direction: 'horizontal' },
          { op: 'adjust', brightness: 1.2 },
        ],
      })
      .expect(200);
    // Crop first, then a quarter turn: 100 wide, 200 high.
    expect(res.body).toMatchObject({
      id: item.id,
      status: 'processing',
      width: 100,
      height: 200,
      mime_type: 'image/png',
      variants: [],
    });
    await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
    const after = await storedKeys(item.id);
    expect(after.versions).toEqual([before.current]);
    expect(existsSync(localFile(t, before.current))).toBe(true);
    for (const key of before.variants) expect(existsSync(localFile(t, key))).toBe(false);
    const file = await request(t.app).get(at(item.id, 'view')).set(a.editor.auth).buffer(true).expect(200);
    expect(await sharp(file.body as Buffer).metadata()).toMatchObject({ width: 100, height: 200 });
    const versions = await request(t.app).get(at(item.id, 'image-versions')).set(a.editor.auth).expect(200);
    expect(
      versions.body.items.map((version: { version: number; current: boolean; width: number }) => [
        version.version,
        version.current,
        version.width,
      ]),
    ).toEqual([
      [2, true, 100],
      [1, false, 400],
    ]);
    expect(versions.body.items[0].created_by).toBe(a.editor.user.id);
    // Deleting the item removes every version's file.
    await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(204);
    expect(existsSync(localFile(t, before.current))).toBe(false);
    expect(existsSync(localFile(t, after.current))).toBe(false);
  });

  it('takes a new file as the new version', async () => {
    const { a } = cast;
    const item = await image(a.editor.auth);
    const replacement = await sharp({ create: { width: 50, height: 60, channels: 3, background: '#00ff00' } })
      .jpeg()
      .toBuffer();
    const res = await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .attach('file', replacement, 'new.jpg')
      .expect(200);
    expect(res.body).toMatchObject({ mime_type: 'image/jpeg', width: 50, height: 60, size_bytes: replacement.length });
    const versions = await request(t.app).get(at(item.id, 'image-versions')).set(a.editor.auth).expect(200);
    expect(versions.body.items).toHaveLength(2);
  });

  it('refuses bad operations (422), other media (409), a file that is no image (415, not kept), and keeps the image as it was', async () => {
    const { a } = cast;
    const item = await image(a.editor.auth);
    const before = await storedKeys(item.id);
    const outside = await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({ operations: [{ op: 'crop', left: 350, top: 0, width: 100, height: 10 }] })
      .expect(422);
    expect(outside.body.detail).toMatch(/outside the 400×300 image/);
    await request(t.app).post(at(item.id, 'save-edited-image')).set(a.editor.auth).send({ operations: [] }).expect(422);
    await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({ operations: [{ op: 'blur' }] })
      .expect(422);
    await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({ operations: [{ op: 'resize' }] })
      .expect(422);
    const files = () => readdirSync(localFile(t, `${a.site.tenant_id}/${a.site.id}`)).length;
    const count = files();
    await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .attach('file', toneWav(0.3), 'x.wav')
      .expect(415);
    expect(files()).toBe(count);
    const sound = await image(a.editor.auth, toneWav(0.5), 'tone.wav');
    await request(t.app)
      .post(at(sound.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(409);
    expect(await storedKeys(item.id)).toEqual(before);
  });

  it('tells the tenant in a plain sentence when the image cannot be read, never the image library’s words', async () => {
    const { a } = cast;
    const item = await image(a.editor.auth);
    const key = await t.services.db.oneFirst(
      sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${item.id}`,
    );
    // The stored file goes bad after processing: sharp has words of its own for it.
    writeFileSync(localFile(t, key), Buffer.from('not an image any more'));
    const said = await sharp(Buffer.from('not an image any more'))
      .toBuffer()
      .then(
        () => '',
        (error: Error) => error.message,
      );
    expect(said).not.toBe('');
    const res = await request(t.app)
      .post(at(item.id, 'save-edited-image'))
      .set(a.editor.auth)
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(422);
    expect(res.body.detail).toBe('The operations cannot be applied to this image.');
    expect(JSON.stringify(res.body)).not.toContain(said);
  });

  it('lets authors edit only their own images; another tenant’s are not there', async () => {
    const { a, b, author } = cast;
    const editors = await image(a.editor.auth);
    await request(t.app)
      .post(at(editors.id, 'save-edited-image'))
      .set(author.auth)
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(403);
    await request(t.app)
      .post(at(editors.id, 'save-edited-image'))
      .set(author.auth)
      .attach('file', await photo(), 'p.png')
      .expect(403);
    const own = await image(author.auth);
    await request(t.app)
      .post(at(own.id, 'save-edited-image'))
      .set(author.auth)
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(200);
    await request(t.app)
      .post(at(editors.id, 'save-edited-image'))
      .set(b.admin.auth)
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(404);
    await request(t.app).get(at(editors.id, 'image-versions')).set(b.admin.auth).expect(404);
    await request(t.app)
      .post(at(editors.id, 'save-edited-image'))
      .send({ operations: [{ op: 'flip', direction: 'vertical' }] })
      .expect(401);
  });
});
