// Public media: GET /public/{site}/media/{id} and .../view serve ready items
// of sites made public, without a token and cacheable; anything else is the
// same 404. With S3 and S3_REDIRECT_SECONDS, views (public or not) answer with
// a redirect to a presigned URL that the S3 server honours.
import sharp from 'sharp';
import request from 'supertest';
import { sql } from '../../../db/pool.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp, accessChangeHeard } from '../../helpers/app.ts';
import { startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaCast, type MediaCast } from '../../helpers/media.ts';
import { startLocalS3, type LocalS3 } from '../../helpers/s3.ts';

let s3: LocalS3;
beforeAll(async () => {
  s3 = await startLocalS3();
});
afterAll(async () => {
  await s3.close();
});

/** Uploads the file to A's site as its editor and waits until it is processed. */
async function uploaded(t: TestApp, cast: MediaCast, file: Buffer, name: string) {
  const res = await request(t.app)
    .post(`/${cast.a.site.slug}/media/`)
    .set(cast.a.editor.auth)
    .attach('file', file, name)
    .expect(201);
  await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
  return (await request(t.app).get(`/${cast.a.site.slug}/media/${res.body.id}`).set(cast.a.editor.auth).expect(200))
    .body;
}

const photo = () =>
  sharp({ create: { width: 700, height: 500, channels: 3, background: { r: 200, g: 90, b: 20 } } })
    .jpeg()
    .toBuffer();

describe('on a public site', () => {
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

  const publicPath = (id: string, site = cast.a.site.slug) => `/public/${site}/media/${id}`;
  const publish = (visibility: 'public' | 'private') =>
    request(t.app).patch(`/sites/${cast.a.site.id}`).set(cast.a.admin.auth).send({ visibility }).expect(200);

  it('serves nothing until the site is made public, then the metadata and the file without a token', async () => {
    const file = await photo();
    const item = await uploaded(t, cast, file, 'sunset.jpg');
    await request(t.app).get(publicPath(item.id)).expect(404);
    await request(t.app)
      .get(`${publicPath(item.id)}/view`)
      .expect(404);
    await publish('public');
    try {
      const meta = await request(t.app).get(publicPath(item.id)).expect(200);
      expect(meta.headers['cache-control']).toBe('public, max-age=60');
      expect(meta.body).toEqual({
        id: item.id,
        kind: 'image',
        mime_type: 'image/jpeg',
        size_bytes: file.length,
        width: 700,
        height: 500,
        duration_seconds: null,
        alt: '',
        title: '',
        caption: '',
        tags: [],
        focal_point: null,
        dominant_color: item.dominant_color,
        blurhash: item.blurhash,
        variants: item.variants,
        version: 1,
        updated_at: item.updated_at,
      });
      // Also by the site's id.
      await request(t.app).get(publicPath(item.id, cast.a.site.id)).expect(200);
      const view = await request(t.app)
        .get(`${publicPath(item.id)}/view`)
        .buffer(true)
        .expect(200);
      expect(view.headers['cache-control']).toBe('public, max-age=3600');
      expect(view.headers['content-type']).toBe('image/jpeg');
      expect((view.body as Buffer).equals(file)).toBe(true);
      await request(t.app)
        .get(`${publicPath(item.id)}/view`)
        .set('If-None-Match', view.headers.etag!)
        .expect(304);
      const range = await request(t.app)
        .get(`${publicPath(item.id)}/view`)
        .set('Range', 'bytes=0-9')
        .buffer(true)
        .expect(206);
      expect((range.body as Buffer).equals(file.subarray(0, 10))).toBe(true);
      const small = await request(t.app)
        .get(`${publicPath(item.id)}/view?width=320&format=avif`)
        .buffer(true)
        .expect(200);
      expect(small.headers['content-type']).toBe('image/avif');
      await request(t.app)
        .get(`${publicPath(item.id)}/view?width=321`)
        .expect(422);
      // A token, even another tenant's, changes nothing.
      await request(t.app).get(publicPath(item.id)).set(cast.b.admin.auth).expect(200);
    } finally {
      await publish('private');
    }
    await request(t.app).get(publicPath(item.id)).expect(404);
  });

  it('serves a photo that says where it was taken without its metadata; its owner still gets the upload', async () => {
    const located = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#888888' } })
      .jpeg()
      .withExif({
        IFD0: { Make: 'Acme' },
        IFD3: {
          GPSLatitudeRef: 'N',
          GPSLatitude: '52/1 22/1 30/1',
          GPSLongitudeRef: 'E',
          GPSLongitude: '4/1 53/1 0/1',
        },
      })
      .toBuffer();
    const item = await uploaded(t, cast, located, 'home.jpg');
    await publish('public');
    try {
      const open = await request(t.app)
        .get(`${publicPath(item.id)}/view`)
        .buffer(true)
        .expect(200);
      expect(open.headers['content-type']).toBe('image/jpeg');
      const openMeta = await sharp(open.body as Buffer).metadata();
      expect([openMeta.width, openMeta.height, openMeta.exif]).toEqual([300, 200, undefined]);
      const own = await request(t.app)
        .get(`/${cast.a.site.slug}/media/${item.id}/view`)
        .set(cast.a.editor.auth)
        .buffer(true)
        .expect(200);
      expect((own.body as Buffer).equals(located)).toBe(true);
    } finally {
      await publish('private');
    }
  });

  it('answers the same 404 for items not ready, of another site, of a suspended tenant, or unknown', async () => {
    const ready = await uploaded(t, cast, await photo(), 'ready.jpg');
    await publish('public');
    try {
      const failed = await uploaded(t, cast, Buffer.from('%PDF-1.4 not really a pdf\n'), 'broken.pdf');
      await t.services.db.query(
        sql.typeAlias('void')`update media_items set status = 'processing' where id = ${failed.id}`,
      );
      const theirs = await uploadedElsewhere(t, cast);
      for (const path of [
        publicPath(failed.id),
        publicPath(theirs),
        publicPath(ready.id, cast.b.site.slug),
        publicPath(ready.id, 'no-such-site'),
        publicPath('00000000-0000-4000-8000-000000000000'),
      ]) {
        const res = await request(t.app).get(path).expect(404);
        expect(res.body).toMatchObject({ status: 404, detail: 'Not found, or not public.' });
        await request(t.app).get(`${path}/view`).expect(404);
      }
      await request(t.app).get(publicPath('not-a-uuid')).expect(422);
      await t.services.db.query(
        sql.typeAlias('void')`update tenants set status = 'suspended' where id = ${cast.a.tenant.id}`,
      );
      await accessChangeHeard(t);
      await request(t.app).get(publicPath(ready.id)).expect(404);
      await t.services.db.query(
        sql.typeAlias('void')`update tenants set status = 'active' where id = ${cast.a.tenant.id}`,
      );
      await accessChangeHeard(t);
      await request(t.app).get(publicPath(ready.id)).expect(200);
    } finally {
      await publish('private');
    }
  });

  /** A media item of B's site (B's site made public too): never served under A's. */
  async function uploadedElsewhere(t: TestApp, cast: MediaCast): Promise<string> {
    await request(t.app)
      .patch(`/sites/${cast.b.site.id}`)
      .set(cast.b.admin.auth)
      .send({ visibility: 'public' })
      .expect(200);
    const res = await request(t.app)
      .post(`/${cast.b.site.slug}/media/`)
      .set(cast.b.admin.auth)
      .attach('file', await photo(), 'b.jpg')
      .expect(201);
    await waitForJob(t, res.body.job_id, ['succeeded', 'failed']);
    await request(t.app).get(publicPath(res.body.id, cast.b.site.slug)).expect(200);
    return res.body.id;
  }
});

describe('with S3 and S3_REDIRECT_SECONDS', () => {
  let t: TestApp;
  let cast: MediaCast;
  let worker: WorkerHandle;
  beforeAll(async () => {
    t = await startTestApp({ env: { ...s3.env, S3_REDIRECT_SECONDS: '120' } });
    cast = await mediaCast(t);
    worker = await startTestWorker(t, s3.env);
  });
  afterAll(async () => {
    await worker.stop();
    await stopTestApp(t);
  });

  it('redirects views to a short-lived presigned URL that serves the file with its type', async () => {
    const file = await photo();
    const item = await uploaded(t, cast, file, 'bucket.jpg');
    const res = await request(t.app)
      .get(`/${cast.a.site.slug}/media/${item.id}/view`)
      .set(cast.a.editor.auth)
      .expect(302);
    expect(res.headers['cache-control']).toBe('private, max-age=60');
    const location = new URL(res.headers.location!);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('120');
    expect(location.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(location.searchParams.get('X-Amz-Credential')).toMatch(/^S3RVER\//);
    const fetched = await fetch(location);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await fetched.arrayBuffer()).equals(file)).toBe(true);
    // A variant, and the public view, redirect the same way. (s3rver does not check signatures; a real S3 refuses a tampered one.)
    const variant = await request(t.app)
      .get(`/${cast.a.site.slug}/media/${item.id}/view?variant=w320`)
      .set(cast.a.editor.auth)
      .expect(302);
    expect((await fetch(variant.headers.location!)).headers.get('content-type')).toBe('image/webp');
    await request(t.app)
      .patch(`/sites/${cast.a.site.id}`)
      .set(cast.a.admin.auth)
      .send({ visibility: 'public' })
      .expect(200);
    const open = await request(t.app).get(`/public/${cast.a.site.slug}/media/${item.id}/view`).expect(302);
    expect(Buffer.from(await (await fetch(open.headers.location!)).arrayBuffer()).equals(file)).toBe(true);
    // Without a token nothing is redirected.
    await request(t.app).get(`/${cast.a.site.slug}/media/${item.id}/view`).expect(401);
  });
});
