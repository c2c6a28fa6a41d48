// POST /{site}/media/: a multipart upload streamed to storage, its type read
// from the bytes, refused whole (nothing stored, no row) when too large, of a
// type outside the allowlist, or with bad fields.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { z } from 'zod';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { localFile } from '../../helpers/jobs.ts';
import { mediaCast, toneWav, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
const maxBytes = 200_000;

beforeAll(async () => {
  t = await startTestApp({ env: { MEDIA_MAX_UPLOAD_BYTES: String(maxBytes) } });
  cast = await mediaCast(t);
});
afterAll(() => stopTestApp(t));

// A 1×1 PNG, the smallest real image.
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

const upload = (site: Site, auth: Record<string, string>) => request(t.app).post(`/${site.slug}/media/`).set(auth);

/** What the site has stored: every object under its prefix. */
function storedFiles(site: Site): string[] {
  if (t.config.storage.driver !== 'local') throw new Error('local storage expected');
  const dir = path.join(t.config.storage.root, site.tenant_id, site.id);
  return existsSync(dir) ? readdirSync(dir).filter((name) => !name.endsWith('.partial')) : [];
}

const rows = (site: Site) =>
  t.services.db.oneFirst(
    sql.type(
      z.object({ count: z.number() }),
    )`select count(*)::int as count from media_items where site_id = ${site.id}`,
  );

it('stores an image with its sniffed type, fields and a generated key, and serves the same bytes back', async () => {
  const { a } = cast;
  const res = await upload(a.site, a.editor.auth)
    .field('title', '  A dot  ')
    .field('alt', 'One pixel')
    .field('tags', 'Tiny, PIXEL, tiny')
    .attach('file', png, { filename: '../../etc/passwd.png', contentType: 'application/octet-stream' })
    .expect(201);
  expect(res.headers.location).toBe(`/${a.site.slug}/media/${res.body.id}`);
  // Metadata and variants come from a job: the item says processing until it has run.
  expect(res.body).toMatchObject({
    kind: 'image',
    mime_type: 'image/png',
    size_bytes: png.length,
    title: 'A dot',
    alt: 'One pixel',
    tags: ['tiny', 'pixel'],
    status: 'processing',
  });
  expect(res.body.job_id).toEqual(expect.any(String));
  // The client's file name is a label, never the key.
  expect(res.body.file_name).not.toContain('/');
  const key = await t.services.db.oneFirst(
    sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${res.body.id}`,
  );
  expect(key).toMatch(new RegExp(`^${a.site.tenant_id}/${a.site.id}/[0-9a-f-]{36}$`));
  const back = await request(t.app)
    .get(`/${a.site.slug}/media/${res.body.id}/view`)
    .set(a.editor.auth)
    .buffer(true)
    .expect(200);
  expect(back.headers['content-type']).toBe('image/png');
  expect((back.body as Buffer).equals(png)).toBe(true);
});

it('takes audio and documents by their bytes, and files into a folder with JSON tags', async () => {
  const { a } = cast;
  const folder = await request(t.app)
    .post(`/${a.site.slug}/media/folders/`)
    .set(a.editor.auth)
    .send({ name: `Uploads ${Date.now()}` })
    .expect(201);
  const wav = await upload(a.site, a.editor.auth)
    .field('folder_id', folder.body.id)
    .field('tags', '["Sound"]')
    .attach('file', toneWav(1), 'tone.bin')
    .expect(201);
  expect(wav.body).toMatchObject({ kind: 'audio', mime_type: 'audio/wav', folder_id: folder.body.id, tags: ['sound'] });
  const doc = await upload(a.site, a.editor.auth).attach('file', pdf, 'paper.pdf').expect(201);
  expect(doc.body).toMatchObject({ kind: 'document', mime_type: 'application/pdf' });
});

it('refuses a type outside the allowlist, whatever the client claims, and keeps nothing', async () => {
  const { a } = cast;
  const site = a.site;
  const before = { files: storedFiles(site).length, rows: await rows(site) };
  const spoofed = await upload(site, a.editor.auth)
    .attach('file', Buffer.from('just some text, not an image at all'), {
      filename: 'photo.png',
      contentType: 'image/png',
    })
    .expect(415);
  expect(spoofed.body.detail).toMatch(/cannot be uploaded/);
  await upload(site, a.editor.auth)
    .attach('file', svg, { filename: 'logo.svg', contentType: 'image/svg+xml' })
    .expect(415);
  expect({ files: storedFiles(site).length, rows: await rows(site) }).toEqual(before);
});

it('refuses a file over MEDIA_MAX_UPLOAD_BYTES with 413 and keeps nothing', async () => {
  const { a } = cast;
  const before = { files: storedFiles(a.site).length, rows: await rows(a.site) };
  const big = toneWav(maxBytes / 2 / 22_050 + 1);
  expect(big.length).toBeGreaterThan(maxBytes);
  const res = await upload(a.site, a.editor.auth).attach('file', big, 'big.wav').expect(413);
  expect(res.body.detail).toMatch(String(maxBytes));
  expect({ files: storedFiles(a.site).length, rows: await rows(a.site) }).toEqual(before);
});

it('refuses bad fields with 422 and removes the stored file', async () => {
  const { a, b } = cast;
  const before = { files: storedFiles(a.site).length, rows: await rows(a.site) };
  const foreignFolder = await request(t.app)
    .post(`/${b.site.slug}/media/folders/`)
    .set(b.admin.auth)
    .send({ name: 'Theirs' })
    .expect(201);
  const wrongFolder = await upload(a.site, a.editor.auth)
    .field('folder_id', foreignFolder.body.id)
    .attach('file', png, 'a.png')
    .expect(422);
  expect(wrongFolder.body.errors).toEqual([expect.objectContaining({ path: 'body.folder_id' })]);
  const badTags = await upload(a.site, a.editor.auth)
    .field('tags', '[not json')
    .attach('file', png, 'a.png')
    .expect(422);
  expect(badTags.body.errors).toEqual([expect.objectContaining({ path: 'body.tags' })]);
  const unknown = await upload(a.site, a.editor.auth).field('owner', 'me').attach('file', png, 'a.png').expect(422);
  expect(unknown.body.errors[0].path).toBe('body');
  await upload(a.site, a.editor.auth).field('alt', 'nul\u0000byte').attach('file', png, 'a.png').expect(422);
  expect({ files: storedFiles(a.site).length, rows: await rows(a.site) }).toEqual(before);
});

it('needs a multipart body with exactly one file part named file', async () => {
  const { a } = cast;
  await upload(a.site, a.editor.auth).send({ file: 'base64...' }).expect(415);
  const none = await upload(a.site, a.editor.auth).field('title', 'no file').expect(422);
  expect(none.body.errors).toEqual([{ path: 'body.file', message: 'required' }]);
  await upload(a.site, a.editor.auth).attach('image', png, 'a.png').expect(422);
  await upload(a.site, a.editor.auth).attach('file', png, 'a.png').attach('file', png, 'b.png').expect(422);
});

it('lets whoever reaches the site upload; service accounts need media:write', async () => {
  const { a, b, author, writer, noScope } = cast;
  await request(t.app).post(`/${a.site.slug}/media/`).attach('file', png, 'a.png').expect(401);
  await upload(a.site, b.admin.auth).attach('file', png, 'a.png').expect(404);
  await upload(a.site, noScope).attach('file', png, 'a.png').expect(403);
  const reader = await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin);
  await upload(a.site, reader.auth).attach('file', png, 'a.png').expect(403);
  const byWriter = await upload(a.site, writer).attach('file', png, 'a.png').expect(201);
  expect(byWriter.body.created_by).toBeNull();
  const byAuthor = await upload(a.site, author.auth).attach('file', png, 'a.png').expect(201);
  expect(byAuthor.body.created_by).toBe(author.user.id);
  expect(
    existsSync(
      localFile(
        t,
        await t.services.db.oneFirst(sql.type(z.object({ storage_key: z.string() }))`
    select storage_key from media_items where id = ${byAuthor.body.id}`),
      ),
    ),
  ).toBe(true);
});
