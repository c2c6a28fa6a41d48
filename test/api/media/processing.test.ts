// After an upload a worker reads the file: an image's size, dominant colour
// and WebP widths; a video's duration, size and poster; an audio's duration.
// A decompression bomb fails at once and says why. Variants are served with
// ?variant= and deleted with their item.
import { existsSync } from 'node:fs';
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { pickExif } from '../../../worker/media/exif.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { localFile, startTestWorker } from '../../helpers/jobs.ts';
import { mediaCast, processedUpload, testClip, toneWav, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let worker: WorkerHandle;

beforeAll(async () => {
  t = await startTestApp({ env: { MEDIA_MAX_PIXELS: '20000000' } });
  cast = await mediaCast(t);
  worker = await startTestWorker(t, { MEDIA_MAX_PIXELS: '20000000' });
});
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
});

const uploaded = (file: Buffer, name: string) => processedUpload(t, cast, file, name);

const keysOf = (id: string) =>
  t.services.db.one(sql.type(z.object({ storage_key: z.string(), variant_keys: z.array(z.string()) }))`
    select storage_key, array(select v->>'key' from jsonb_array_elements(variants) v) as variant_keys from media_items where id = ${id}`);

it('reads an image: size, dominant colour, blurhash, EXIF without GPS, WebP and AVIF widths below its own, served by ?variant= and ?width=', async () => {
  const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 20, g: 120, b: 200 } } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'Acme', Model: 'Lens One', Copyright: 'Ada' },
      IFD2: { FNumber: '28/10', ISOSpeedRatings: '200' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 22/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '4/1 53/1 0/1' },
    })
    .toBuffer();
  // The photo does carry a position, which MEDIA_EXIF_GPS=true would keep.
  expect(pickExif((await sharp(photo).metadata()).exif, true)).toMatchObject({
    GPSLatitudeRef: 'N',
    GPSLatitude: [52, 22, 30],
  });
  const { job, item } = await uploaded(photo, 'photo.jpg');
  expect(job.status).toBe('succeeded');
  expect(item).toMatchObject({
    status: 'ready',
    kind: 'image',
    mime_type: 'image/jpeg',
    width: 800,
    height: 600,
    processing_error: null,
  });
  expect(item.dominant_color).toMatch(/^#[0-9a-f]{6}$/);
  // A blurhash of 4 × 3 components is 28 characters of its base 83.
  expect(item.blurhash).toMatch(/^[0-9A-Za-z#$%*+,-.:;=?@[\]^_{|}~]{28}$/);
  expect(item.exif).toMatchObject({ Make: 'Acme', Model: 'Lens One', Copyright: 'Ada', FNumber: 2.8 });
  expect(Object.keys(item.exif).filter((field) => field.startsWith('GPS'))).toEqual([]);
  // The upload says where it was taken: a copy without metadata is kept for the public view.
  expect(item.variants.map((variant: { name: string }) => variant.name)).toEqual([
    'w320',
    'w640',
    'w320-avif',
    'w640-avif',
    'stripped',
  ]);
  const stripped = await request(t.app)
    .get(`/${cast.a.site.slug}/media/${item.id}/view?variant=stripped`)
    .set(cast.a.editor.auth)
    .buffer(true)
    .expect(200);
  expect(stripped.headers['content-type']).toBe('image/jpeg');
  const strippedMeta = await sharp(stripped.body as Buffer).metadata();
  expect([strippedMeta.width, strippedMeta.height, strippedMeta.exif]).toEqual([800, 600, undefined]);
  expect(item.variants[0]).toEqual({
    name: 'w320',
    mime_type: 'image/webp',
    width: 320,
    height: 240,
    size_bytes: expect.any(Number),
  });
  expect(item.variants[3]).toEqual({
    name: 'w640-avif',
    mime_type: 'image/avif',
    width: 640,
    height: 480,
    size_bytes: expect.any(Number),
  });
  const view = `/${cast.a.site.slug}/media/${item.id}/view`;
  // ?width= picks the smallest preset at least that wide, else the widest there is; format picks AVIF.
  for (const [query, type, width] of [
    ['width=320', 'image/webp', 320],
    ['width=640&format=avif', 'image/avif', 640],
    ['width=1920&format=avif', 'image/avif', 640],
    ['format=avif', 'image/avif', 640],
  ] as const) {
    const res = await request(t.app).get(`${view}?${query}`).set(cast.a.editor.auth).buffer(true).expect(200);
    expect([query, res.headers['content-type']]).toEqual([query, type]);
    expect((await sharp(res.body as Buffer).metadata()).width).toBe(width);
  }
  for (const query of ['width=500', 'width=640&format=gif', 'variant=w320&width=320'])
    await request(t.app).get(`${view}?${query}`).set(cast.a.editor.auth).expect(422);
  const small = await request(t.app)
    .get(`/${cast.a.site.slug}/media/${item.id}/view?variant=w320`)
    .set(cast.a.editor.auth)
    .buffer(true)
    .expect(200);
  expect(small.headers['content-type']).toBe('image/webp');
  expect((await sharp(small.body as Buffer).metadata()).width).toBe(320);
  await request(t.app)
    .get(`/${cast.a.site.slug}/media/${item.id}/view?variant=w9999`)
    .set(cast.a.editor.auth)
    .expect(404);
  // Deleting the item removes the original and every variant.
  const { storage_key, variant_keys } = await keysOf(item.id);
  for (const key of [storage_key, ...variant_keys]) expect(existsSync(localFile(t, key))).toBe(true);
  await request(t.app).delete(`/${cast.a.site.slug}/media/${item.id}`).set(cast.a.editor.auth).expect(204);
  for (const key of [storage_key, ...variant_keys]) expect(existsSync(localFile(t, key))).toBe(false);
});

it('fails a decompression bomb at once, marks the item failed and says why', async () => {
  // 6000 × 6000 of one colour: a few kB of PNG, 36 million pixels when decoded.
  const bomb = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#000' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  expect(bomb.length).toBeLessThan(200_000);
  const { job, item } = await uploaded(bomb, 'bomb.png');
  expect(job).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'image_too_large' } });
  expect(item).toMatchObject({ status: 'failed', width: null, variants: [] });
  expect(item.processing_error).toMatch(/MEDIA_MAX_PIXELS/);
});

it('reads a video: duration, size and a poster frame, and serves byte ranges of it for seeking', async () => {
  const video = await testClip(t.config, 2);
  const { job, item } = await uploaded(video, 'clip.mp4');
  expect(job.status).toBe('succeeded');
  expect(item).toMatchObject({ status: 'ready', kind: 'video', mime_type: 'video/mp4', width: 320, height: 240 });
  expect(item.duration_seconds).toBeGreaterThan(1.8);
  expect(item.duration_seconds).toBeLessThan(2.2);
  expect(item.variants).toEqual([
    { name: 'poster', mime_type: 'image/jpeg', width: 320, height: 240, size_bytes: expect.any(Number) },
  ]);
  const view = `/${cast.a.site.slug}/media/${item.id}/view`;
  const middle = await request(t.app)
    .get(view)
    .set(cast.a.editor.auth)
    .set('Range', 'bytes=100-1099')
    .buffer(true)
    .expect(206);
  expect(middle.headers['content-range']).toBe(`bytes 100-1099/${video.length}`);
  expect((middle.body as Buffer).equals(video.subarray(100, 1100))).toBe(true);
  const poster = await request(t.app).get(`${view}?variant=poster`).set(cast.a.editor.auth).buffer(true).expect(200);
  expect((await sharp(poster.body as Buffer).metadata()).format).toBe('jpeg');
});

it('reads an audio file’s duration', async () => {
  const { job, item } = await uploaded(toneWav(1.5), 'tone.wav');
  expect(job.status).toBe('succeeded');
  expect(item).toMatchObject({ status: 'ready', kind: 'audio', width: null, variants: [] });
  expect(item.duration_seconds).toBeCloseTo(1.5, 1);
});

it('marks a file that cannot be read as failed without retrying it', async () => {
  // A JPEG signature on bytes that are no image: the type passes the sniff, the decode fails.
  const broken = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2000, 7)]);
  const { job, item } = await uploaded(broken, 'broken.jpg');
  expect(job).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'unreadable_file' } });
  expect(item.status).toBe('failed');
});
