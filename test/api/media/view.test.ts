// GET /{site}/media/{media_id}/view: the file, with revalidation (ETag,
// Last-Modified → 304) and byte ranges (206, 416) for seeking in audio and
// video, to callers who reach the site.
import request from 'supertest';
import { z } from 'zod';
import { insertMedia } from '../../../core/media/items.ts';
import { createStorage } from '../../../core/storage/index.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { staffedTenant, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));

beforeAll(async () => {
  t = await startTestApp();
  a = await staffedTenant(t);
  b = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

async function stored(site: Site, body = bytes, mimeType = 'audio/mpeg') {
  const key = `${site.tenant_id}/${site.id}/view-${Math.random().toString(36).slice(2)}.mp3`;
  await createStorage(t.config).put(key, body, mimeType);
  return insertMedia(
    t.services.db,
    { tenantId: site.tenant_id, siteId: site.id, jobId: null, createdBy: null },
    {
      kind: 'audio',
      mimeType,
      sizeBytes: body.length,
      storageKey: key,
      fileName: 'view.mp3',
    },
  );
}

const view = (site: Site, id: string) => request(t.app).get(`/${site.slug}/media/${id}/view`).set(a.editor.auth);
const binary = (res: request.Response) => res.body as Buffer;

it('streams the whole file with its type, length, validators and caching', async () => {
  const item = await stored(a.site);
  const res = await view(a.site, item.id).buffer(true).expect(200);
  expect(res.headers['content-type']).toBe('audio/mpeg');
  expect(res.headers['content-length']).toBe('1000');
  expect(res.headers['accept-ranges']).toBe('bytes');
  expect(res.headers.etag).toMatch(/^".+"$/);
  expect(new Date(res.headers['last-modified']!).getTime()).toBeGreaterThan(0);
  expect(res.headers['cache-control']).toBe('private, max-age=300');
  expect(res.headers['content-security-policy']).toContain('sandbox');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(binary(res).equals(bytes)).toBe(true);
});

it('answers a byte range with 206, a suffix range, and 416 outside the file', async () => {
  const item = await stored(a.site);
  const first = await view(a.site, item.id).set('Range', 'bytes=10-19').buffer(true).expect(206);
  expect(first.headers['content-range']).toBe('bytes 10-19/1000');
  expect(first.headers['content-length']).toBe('10');
  expect(binary(first).equals(bytes.subarray(10, 20))).toBe(true);
  const open = await view(a.site, item.id).set('Range', 'bytes=990-').buffer(true).expect(206);
  expect(binary(open).equals(bytes.subarray(990))).toBe(true);
  const suffix = await view(a.site, item.id).set('Range', 'bytes=-5').buffer(true).expect(206);
  expect(suffix.headers['content-range']).toBe('bytes 995-999/1000');
  const outside = await view(a.site, item.id).set('Range', 'bytes=5000-6000').expect(416);
  expect(outside.headers['content-range']).toBe('bytes */1000');
  expect(outside.headers['content-type']).toMatch(/problem\+json/);
  // A Range header that is not one is ignored: the whole file.
  await view(a.site, item.id).set('Range', 'pages=1-2').expect(200);
});

it('answers 304 to a client that has this version, and the whole file to one whose If-Range is stale', async () => {
  const item = await stored(a.site);
  const first = await view(a.site, item.id).expect(200);
  const etag = first.headers.etag!;
  await view(a.site, item.id).set('If-None-Match', etag).expect(304);
  await view(a.site, item.id).set('If-None-Match', `W/${etag}`).expect(304);
  await view(a.site, item.id).set('If-Modified-Since', first.headers['last-modified']!).expect(304);
  await view(a.site, item.id).set('If-Range', '"old"').set('Range', 'bytes=0-9').expect(200);
  await view(a.site, item.id).set('If-Range', etag).set('Range', 'bytes=0-9').expect(206);
  // A change to the item changes its ETag.
  await request(t.app)
    .patch(`/${a.site.slug}/media/${item.id}`)
    .set(a.editor.auth)
    .send({ alt: 'changed' })
    .expect(200);
  const after = await view(a.site, item.id).set('If-None-Match', etag).expect(200);
  expect(after.headers.etag).not.toBe(etag);
});

it('answers HEAD with the headers alone', async () => {
  const item = await stored(a.site);
  const res = await request(t.app).head(`/${a.site.slug}/media/${item.id}/view`).set(a.editor.auth).expect(200);
  expect(res.headers['content-length']).toBe('1000');
});

it('keeps the file to those who reach the site', async () => {
  const item = await stored(a.site);
  await request(t.app).get(`/${a.site.slug}/media/${item.id}/view`).expect(401);
  await request(t.app)
    .get(`/${a.site.slug}/media/${item.id}/view`)
    .set('Authorization', 'Bearer not-a-token')
    .expect(401);
  await request(t.app).get(`/${a.site.slug}/media/${item.id}/view`).set(b.admin.auth).expect(404);
  await request(t.app).get(`/${b.site.slug}/media/${item.id}/view`).set(b.admin.auth).expect(404);
  const noMedia = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
  await request(t.app).get(`/${a.site.slug}/media/${item.id}/view`).set(noMedia.auth).expect(403);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin);
  await request(t.app).get(`/${a.site.slug}/media/${item.id}/view`).set(reader.auth).expect(200);
  await request(t.app).get(`/${a.site.slug}/media/not-an-id/view`).set(a.editor.auth).expect(422);
});

it('says 404 when the file is gone from storage', async () => {
  const item = await stored(a.site);
  const key = await t.services.db.oneFirst(sql.type(z.object({ storage_key: z.string() }))`
    select storage_key from media_items where id = ${item.id}`);
  await createStorage(t.config).delete(key);
  const res = await view(a.site, item.id).expect(404);
  expect(res.body.detail).toMatch(/file is missing/);
});
