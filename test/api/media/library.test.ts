// The media library of a site through HTTP: list (order, every filter, cursor
// pages, totals), count, one item under both paths, metadata changes (PATCH),
// moves into and out of folders and deletion with the stored file; who may read
// and who may change (authors only what they added), and the 4xx answers.
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { z } from 'zod';
import { insertMedia, mediaKinds, type MediaItem } from '../../../core/media/items.ts';
import { createStorage } from '../../../core/storage/index.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { mediaCast } from '../../helpers/media.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { assignToSite, newSite, serviceAccount, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, idsOf, type Auth, type Staffed } from '../../helpers/identity.ts';
import { localFile } from '../../helpers/jobs.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let admin: Caller;
let author: Caller;
let otherAuthor: Caller;
let reader: Auth;
let writer: Auth;
let noScope: Auth;

const missing = '00000000-0000-4000-8000-000000000000';

const itemKeys = [
  'id',
  'site_id',
  'folder_id',
  'kind',
  'mime_type',
  'size_bytes',
  'width',
  'height',
  'duration_seconds',
  'status',
  'file_name',
  'alt',
  'title',
  'caption',
  'tags',
  'focal_point',
  'dominant_color',
  'blurhash',
  'exif',
  'variants',
  'processing_error',
  'version',
  'job_id',
  'created_by',
  'created_at',
  'updated_at',
  // The file, fetchable without a token (test/api/media/file-urls.test.ts).
  'url',
  'url_expires_at',
].sort();

beforeAll(async () => {
  // Answers carry file URLs made on PUBLIC_URL: without it, on the host asked, which supertest changes per request.
  t = await startTestApp({ env: { PUBLIC_URL: 'http://api.test' } });
  ({ a, b, admin, author, otherAuthor, reader, writer, noScope } = await mediaCast(t));
});
afterAll(() => stopTestApp(t));

const hex = () => randomBytes(4).toString('hex');

type ItemFields = Partial<{
  createdBy: string | null;
  kind: (typeof mediaKinds)[number];
  mimeType: string;
  fileName: string;
  title: string;
  alt: string;
  caption: string;
  tags: string[];
  status: 'processing' | 'ready' | 'failed';
  folderId: string | null;
  createdAt: string;
  focalPoint: { x: number; y: number } | null;
  file: boolean;
}>;

/** A media item of the site (made as insertMedia makes it), its other columns set by SQL, and optionally a real stored file. */
async function newItem(site: Site, fields: ItemFields = {}): Promise<MediaItem & Row> {
  // Letters only, so a search for digits ('50') cannot find an item by its random name.
  const name = `${hex().replace(/[0-9]/g, (digit) => 'ghijklmnop'[Number(digit)]!)}.png`;
  const storageKey = `${site.tenant_id}/${site.id}/${name}`;
  if (fields.file) await createStorage(t.config).put(storageKey, Buffer.from('abc'), 'image/png');
  const item = await insertMedia(
    t.services.db,
    {
      tenantId: site.tenant_id,
      siteId: site.id,
      jobId: null,
      createdBy: fields.createdBy === undefined ? a.editor.user.id : fields.createdBy,
    },
    {
      kind: fields.kind ?? 'image',
      mimeType: fields.mimeType ?? 'image/png',
      sizeBytes: 3,
      storageKey,
      fileName: fields.fileName ?? name,
      ...(fields.title !== undefined ? { title: fields.title } : {}),
    },
  );
  const db = t.services.db;
  if (fields.alt !== undefined)
    await db.query(sql.typeAlias('void')`update media_items set alt = ${fields.alt} where id = ${item.id}`);
  if (fields.caption !== undefined)
    await db.query(sql.typeAlias('void')`update media_items set caption = ${fields.caption} where id = ${item.id}`);
  if (fields.tags !== undefined)
    await db.query(
      sql.typeAlias('void')`update media_items set tags = ${sql.array(fields.tags, 'text')} where id = ${item.id}`,
    );
  if (fields.status !== undefined)
    await db.query(sql.typeAlias('void')`update media_items set status = ${fields.status} where id = ${item.id}`);
  if (fields.folderId !== undefined)
    await db.query(sql.typeAlias('void')`update media_items set folder_id = ${fields.folderId} where id = ${item.id}`);
  if (fields.createdAt !== undefined)
    await db.query(
      sql.typeAlias('void')`update media_items set created_at = ${fields.createdAt}::timestamptz where id = ${item.id}`,
    );
  if (fields.focalPoint !== undefined) {
    await db.query(
      sql.typeAlias(
        'void',
      )`update media_items set focal_point = ${fields.focalPoint ? sql.jsonb(fields.focalPoint) : null} where id = ${item.id}`,
    );
  }
  const row = await readRow(item.id);
  if (!row) throw new Error('the item just made is gone');
  return { ...item, ...row };
}

const itemRow = z.object({
  id: z.string(),
  folder_id: z.string().nullable(),
  alt: z.string(),
  title: z.string(),
  caption: z.string(),
  tags: z.array(z.string()),
  focal_point: z.object({ x: z.number(), y: z.number() }).nullable(),
  storage_key: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

type Row = z.infer<typeof itemRow>;

/** The row as stored (with its storage key), or null when it is gone. */
const readRow = (id: string): Promise<Row | null> =>
  t.services.db.maybeOne(sql.type(itemRow)`
    select id, folder_id, alt, title, caption, tags, focal_point, storage_key, created_at, updated_at from media_items where id = ${id}`);

/** A folder of the site, made directly. */
async function newFolder(site: Site, name = `folder-${hex()}`): Promise<string> {
  return t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into media_folders (tenant_id, site_id, name, created_by) values (${site.tenant_id}, ${site.id}, ${name}, ${a.admin.user.id}) returning id`);
}

/** A fresh site of tenant A reached by its editor and both authors, so lists hold only this test's items. */
async function freshSite(): Promise<Site> {
  const site = await newSite(t, a.tenant);
  for (const caller of [a.editor, author, otherAuthor]) await assignToSite(t, site, caller.user.id);
  return site;
}

/** Microseconds since the epoch of an API timestamp (ISO with up to six fractional digits). */
function micros(iso: string): bigint {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!match) throw new Error(`not an ISO UTC timestamp: ${iso}`);
  return BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt((match[2] ?? '').padEnd(6, '0').slice(0, 6));
}

const paths = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((error) => error.path);

const list = async (site: Site, query: string, auth: Auth = a.editor.auth) =>
  idsOf((await request(t.app).get(`/${site.slug}/media/?${query}`).set(auth).expect(200)).body);

const count = async (site: Site, query: string, auth: Auth = a.editor.auth) =>
  (await request(t.app).get(`/${site.slug}/media/count?${query}`).set(auth).expect(200)).body.count as number;

describe('who reaches the media library', () => {
  it('answers 401 without a token on every library endpoint', async () => {
    const item = await newItem(a.site);
    const base = `/${a.site.slug}/media`;
    for (const res of [
      await request(t.app).get(`${base}/`),
      await request(t.app).get(`${base}/count`),
      await request(t.app).get(`${base}/${item.id}`),
      await request(t.app).get(`${base}/by-id/${item.id}`),
      await request(t.app).patch(`${base}/${item.id}`).send({ alt: 'x' }),
      await request(t.app).post(`${base}/${item.id}/move`).send({ folder_id: null }),
      await request(t.app).delete(`${base}/${item.id}`),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
    }
    expect(await readRow(item.id)).not.toBeNull();
  });

  it('lets everyone who reaches the site read: editor, assigned author, tenant admin, global admin, a media:read service account', async () => {
    const site = await freshSite();
    const item = await newItem(site);
    for (const auth of [a.editor.auth, author.auth, a.admin.auth, admin.auth, reader]) {
      expect(idsOf((await request(t.app).get(`/${site.slug}/media/`).set(auth).expect(200)).body)).toEqual([item.id]);
      expect((await request(t.app).get(`/${site.slug}/media/count`).set(auth).expect(200)).body).toEqual({ count: 1 });
      expect((await request(t.app).get(`/${site.slug}/media/${item.id}`).set(auth).expect(200)).body.id).toBe(item.id);
      expect((await request(t.app).get(`/${site.slug}/media/by-id/${item.id}`).set(auth).expect(200)).body.id).toBe(
        item.id,
      );
    }
    // The site by its id, too.
    expect(idsOf((await request(t.app).get(`/${site.id}/media/`).set(a.editor.auth).expect(200)).body)).toEqual([
      item.id,
    ]);
    expect((await request(t.app).get(`/${site.id}/media/${item.id}`).set(a.editor.auth).expect(200)).body.id).toBe(
      item.id,
    );
  });

  it('refuses a service account without media:read with 403 on every read', async () => {
    const item = await newItem(a.site);
    for (const path of [
      `/${a.site.slug}/media/`,
      `/${a.site.slug}/media/count`,
      `/${a.site.slug}/media/${item.id}`,
      `/${a.site.slug}/media/by-id/${item.id}`,
    ]) {
      const res = await request(t.app).get(path).set(noScope).expect(403);
      expect(res.body.detail).toMatch(/media:read/);
    }
  });

  it('answers 404 for a site the caller does not reach: another tenant’s, or one the author is not assigned to', async () => {
    const item = await newItem(a.site);
    for (const auth of [b.editor.auth, b.admin.auth, a.author.auth]) {
      for (const path of [
        `/${a.site.slug}/media/`,
        `/${a.site.slug}/media/count`,
        `/${a.site.slug}/media/${item.id}`,
        `/${a.site.slug}/media/by-id/${item.id}`,
      ]) {
        await request(t.app).get(path).set(auth).expect(404);
      }
      await request(t.app).patch(`/${a.site.slug}/media/${item.id}`).set(auth).send({ alt: 'no' }).expect(404);
      await request(t.app)
        .post(`/${a.site.slug}/media/${item.id}/move`)
        .set(auth)
        .send({ folder_id: null })
        .expect(404);
      await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(auth).expect(404);
    }
    // Tenant B's service account, whatever its scopes.
    const bBot = (await serviceAccount(t, b.tenant, ['sites:read', 'media:read', 'media:write'], b.admin)).auth;
    await request(t.app).get(`/${a.site.slug}/media/`).set(bBot).expect(404);
    await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(bBot).expect(404);
    await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(bBot).expect(404);
    expect((await readRow(item.id))?.alt).toBe('');
  });

  it('answers 404 for another tenant’s item under one’s own site, for reads and changes alike', async () => {
    const theirs = await newItem(b.site, { createdBy: b.editor.user.id, file: true });
    const base = `/${a.site.slug}/media`;
    for (const auth of [a.editor.auth, a.admin.auth, writer]) {
      await request(t.app).get(`${base}/${theirs.id}`).set(auth).expect(404);
      await request(t.app).get(`${base}/by-id/${theirs.id}`).set(auth).expect(404);
      await request(t.app).patch(`${base}/${theirs.id}`).set(auth).send({ alt: 'mine now' }).expect(404);
      await request(t.app).post(`${base}/${theirs.id}/move`).set(auth).send({ folder_id: null }).expect(404);
      await request(t.app).delete(`${base}/${theirs.id}`).set(auth).expect(404);
    }
    const row = await readRow(theirs.id);
    expect(row?.alt).toBe('');
    expect(existsSync(localFile(t, theirs.storage_key))).toBe(true);
    // Another site of the same tenant is no different.
    const sibling = await newItem(await freshSite());
    await request(t.app).get(`${base}/${sibling.id}`).set(a.editor.auth).expect(404);
  });

  it('answers 404 for an unknown item id and 422 for an id that is not a uuid', async () => {
    const base = `/${a.site.slug}/media`;
    await request(t.app).get(`${base}/${missing}`).set(a.editor.auth).expect(404);
    await request(t.app).get(`${base}/by-id/${missing}`).set(a.editor.auth).expect(404);
    await request(t.app).patch(`${base}/${missing}`).set(a.editor.auth).send({ alt: 'x' }).expect(404);
    await request(t.app).post(`${base}/${missing}/move`).set(a.editor.auth).send({ folder_id: null }).expect(404);
    await request(t.app).delete(`${base}/${missing}`).set(a.editor.auth).expect(404);
    for (const res of [
      await request(t.app).get(`${base}/not-a-uuid`).set(a.editor.auth),
      await request(t.app).get(`${base}/by-id/not-a-uuid`).set(a.editor.auth),
      await request(t.app).patch(`${base}/not-a-uuid`).set(a.editor.auth).send({ alt: 'x' }),
      await request(t.app).post(`${base}/not-a-uuid/move`).set(a.editor.auth).send({ folder_id: null }),
      await request(t.app).delete(`${base}/not-a-uuid`).set(a.editor.auth),
    ]) {
      expect(res.status).toBe(422);
      expect(paths(res.body)).toContain('params.media_id');
    }
  });

  it('lets editors, tenant admins, global admins and media:write service accounts change any item', async () => {
    const folder = await newFolder(a.site);
    for (const [index, auth] of [a.editor.auth, a.admin.auth, admin.auth, writer].entries()) {
      const item = await newItem(a.site, { createdBy: otherAuthor.user.id, file: true });
      const patched = await request(t.app)
        .patch(`/${a.site.slug}/media/${item.id}`)
        .set(auth)
        .send({ alt: `changed ${index}` })
        .expect(200);
      expect(patched.body.alt).toBe(`changed ${index}`);
      const moved = await request(t.app)
        .post(`/${a.site.slug}/media/${item.id}/move`)
        .set(auth)
        .send({ folder_id: folder })
        .expect(200);
      expect(moved.body.folder_id).toBe(folder);
      await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(auth).expect(204);
      expect(await readRow(item.id)).toBeNull();
      expect(existsSync(localFile(t, item.storage_key))).toBe(false);
    }
  });

  it('refuses changes with 403 to a service account without media:write', async () => {
    const item = await newItem(a.site, { file: true });
    for (const auth of [reader, noScope]) {
      const res = await request(t.app)
        .patch(`/${a.site.slug}/media/${item.id}`)
        .set(auth)
        .send({ alt: 'no' })
        .expect(403);
      expect(res.body.detail).toMatch(/media:write/);
      await request(t.app)
        .post(`/${a.site.slug}/media/${item.id}/move`)
        .set(auth)
        .send({ folder_id: null })
        .expect(403);
      await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(auth).expect(403);
    }
    expect((await readRow(item.id))?.alt).toBe('');
    expect(existsSync(localFile(t, item.storage_key))).toBe(true);
  });

  it('lets an author change the items they added, and answers 403 for anyone else’s', async () => {
    const folder = await newFolder(a.site);
    const own = await newItem(a.site, { createdBy: author.user.id, file: true });
    const others = await newItem(a.site, { createdBy: otherAuthor.user.id, file: true });
    const nobodys = await newItem(a.site, { createdBy: null, file: true });
    const base = `/${a.site.slug}/media`;

    expect(
      (await request(t.app).patch(`${base}/${own.id}`).set(author.auth).send({ title: 'Mine' }).expect(200)).body.title,
    ).toBe('Mine');
    expect(
      (await request(t.app).post(`${base}/${own.id}/move`).set(author.auth).send({ folder_id: folder }).expect(200))
        .body.folder_id,
    ).toBe(folder);

    for (const item of [others, nobodys]) {
      const res = await request(t.app).patch(`${base}/${item.id}`).set(author.auth).send({ title: 'Mine' }).expect(403);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      await request(t.app).post(`${base}/${item.id}/move`).set(author.auth).send({ folder_id: folder }).expect(403);
      await request(t.app).delete(`${base}/${item.id}`).set(author.auth).expect(403);
      const row = await readRow(item.id);
      expect(row).toMatchObject({ title: '', folder_id: null });
      expect(existsSync(localFile(t, item.storage_key))).toBe(true);
    }

    await request(t.app).delete(`${base}/${own.id}`).set(author.auth).expect(204);
    expect(await readRow(own.id)).toBeNull();
    expect(existsSync(localFile(t, own.storage_key))).toBe(false);
  });
});

describe('GET /{site}/media/{media_id} and /by-id/{media_id}', () => {
  it('answers exactly the MediaItem fields, the same under both paths, without storage_key or tenant_id', async () => {
    const folder = await newFolder(a.site);
    const item = await newItem(a.site, {
      createdBy: author.user.id,
      title: 'Sunset',
      alt: 'A red sky',
      caption: 'Over the bay',
      tags: ['sky', 'red'],
      folderId: folder,
      focalPoint: { x: 0.25, y: 0.75 },
    });
    const one = await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(200);
    expect(Object.keys(one.body).sort()).toEqual(itemKeys);
    expect(one.body).not.toHaveProperty('storage_key');
    expect(one.body).not.toHaveProperty('tenant_id');
    expect(one.body).toMatchObject({
      id: item.id,
      site_id: a.site.id,
      folder_id: folder,
      kind: 'image',
      mime_type: 'image/png',
      size_bytes: 3,
      width: null,
      height: null,
      duration_seconds: null,
      status: 'ready',
      title: 'Sunset',
      alt: 'A red sky',
      caption: 'Over the bay',
      tags: ['sky', 'red'],
      focal_point: { x: 0.25, y: 0.75 },
      job_id: null,
      created_by: author.user.id,
    });
    expect(Number.isNaN(Date.parse(one.body.created_at))).toBe(false);
    const byId = await request(t.app).get(`/${a.site.slug}/media/by-id/${item.id}`).set(a.editor.auth).expect(200);
    expect(byId.body).toEqual(one.body);
  });
});

describe('GET /{site}/media/', () => {
  it('lists the site’s items oldest first (by created_at, not insertion), each with exactly the MediaItem fields', async () => {
    const site = await freshSite();
    const late = await newItem(site, { createdAt: '2024-03-01T00:00:00Z' });
    const early = await newItem(site, { createdAt: '2024-01-01T00:00:00Z' });
    const middle = await newItem(site, { createdAt: '2024-02-01T00:00:00Z' });
    await newItem(a.site); // another site of the same tenant: not listed
    const res = await request(t.app).get(`/${site.slug}/media/`).set(a.editor.auth).expect(200);
    expect(idsOf(res.body)).toEqual([early.id, middle.id, late.id]);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body).not.toHaveProperty('total');
    for (const item of res.body.items) {
      expect(Object.keys(item).sort()).toEqual(itemKeys);
      expect(item.site_id).toBe(site.id);
    }
    expect(await list(await freshSite(), '')).toEqual([]);
  });

  it('filters by folder (an id, or none), kind, status and tag (case-insensitive), alone and combined', async () => {
    const site = await freshSite();
    const folder = await newFolder(site);
    const otherFolder = await newFolder(site);
    const i0 = await newItem(site, { kind: 'image', folderId: folder, tags: ['sky', 'blue'] });
    const i1 = await newItem(site, {
      kind: 'video',
      mimeType: 'video/mp4',
      folderId: folder,
      status: 'processing',
      tags: ['sky'],
    });
    const i2 = await newItem(site, { kind: 'audio', mimeType: 'audio/mpeg', status: 'failed' });
    const i3 = await newItem(site, { kind: 'image', folderId: otherFolder, tags: ['sea'] });
    const i4 = await newItem(site, { kind: 'document', mimeType: 'application/pdf', tags: ['sky', 'sea'] });

    expect(await list(site, `folder_id=${folder}`)).toEqual([i0.id, i1.id]);
    expect(await list(site, `folder_id=${otherFolder}`)).toEqual([i3.id]);
    expect(await list(site, 'folder_id=none')).toEqual([i2.id, i4.id]);
    expect(await list(site, `folder_id=${missing}`)).toEqual([]);
    expect(await list(site, 'kind=image')).toEqual([i0.id, i3.id]);
    expect(await list(site, 'kind=video')).toEqual([i1.id]);
    expect(await list(site, 'kind=document')).toEqual([i4.id]);
    expect(await list(site, 'status=ready')).toEqual([i0.id, i3.id, i4.id]);
    expect(await list(site, 'status=processing')).toEqual([i1.id]);
    expect(await list(site, 'status=failed')).toEqual([i2.id]);
    expect(await list(site, 'tag=sky')).toEqual([i0.id, i1.id, i4.id]);
    expect(await list(site, 'tag=SKY')).toEqual([i0.id, i1.id, i4.id]);
    expect(await list(site, 'tag=Sea')).toEqual([i3.id, i4.id]);
    expect(await list(site, 'tag=sk')).toEqual([]);
    expect(await list(site, `folder_id=${folder}&status=ready`)).toEqual([i0.id]);
    expect(await list(site, 'kind=image&tag=sea')).toEqual([i3.id]);
    expect(await list(site, 'folder_id=none&tag=sky&kind=document&status=ready')).toEqual([i4.id]);
    expect(await list(site, 'folder_id=none&kind=image')).toEqual([]);
  });

  it('finds text in the title, alt, caption or file name, case-insensitively, with % and _ taken literally', async () => {
    const site = await freshSite();
    const byTitle = await newItem(site, { title: 'Harbour at Dawn' });
    const byAlt = await newItem(site, { alt: 'boats in the HARBOUR' });
    const byCaption = await newItem(site, { caption: 'The old harbour wall' });
    const byFile = await newItem(site, { fileName: 'harbour_2024.png' });
    const fifty = await newItem(site, { title: 'fifty' });
    const fiveHundred = await newItem(site, { title: '500 pixels' });
    const percent = await newItem(site, { caption: 'Now 50% off' });
    const underscore = await newItem(site, { fileName: 'a_b.png' });
    const axb = await newItem(site, { fileName: 'axb.png' });

    expect(await list(site, 'q=harbour')).toEqual([byTitle.id, byAlt.id, byCaption.id, byFile.id]);
    expect(await list(site, 'q=HarBour')).toEqual([byTitle.id, byAlt.id, byCaption.id, byFile.id]);
    expect(await list(site, 'q=dawn')).toEqual([byTitle.id]);
    expect(await list(site, 'q=boats')).toEqual([byAlt.id]);
    expect(await list(site, 'q=old%20harbour')).toEqual([byCaption.id]);
    expect(await list(site, 'q=_2024')).toEqual([byFile.id]);
    expect(await list(site, `q=${encodeURIComponent('50%')}`)).toEqual([percent.id]);
    expect(await list(site, 'q=50')).toEqual([fiveHundred.id, percent.id]);
    expect(await list(site, 'q=fifty')).toEqual([fifty.id]);
    expect(await list(site, `q=${encodeURIComponent('%')}`)).toEqual([percent.id]);
    expect(await list(site, 'q=a_b')).toEqual([underscore.id]);
    expect(await list(site, `q=${encodeURIComponent('\\')}`)).toEqual([]);
    expect(await list(site, 'q=nowhere')).toEqual([]);
    expect(await list(site, 'q=axb')).toEqual([axb.id]);
    expect(await list(site, 'q=harbour&tag=none-such')).toEqual([]);
  });

  it('filters by creation time: created_after is inclusive, created_before exclusive, offsets honoured', async () => {
    const site = await freshSite();
    const jan = await newItem(site, { createdAt: '2024-01-15T12:00:00Z' });
    const feb = await newItem(site, { createdAt: '2024-02-15T12:00:00Z' });
    const mar = await newItem(site, { createdAt: '2024-03-15T12:00:00Z' });
    const q = (query: Record<string, string>) => new URLSearchParams(query).toString();

    expect(await list(site, q({ created_after: '2024-02-01T00:00:00Z' }))).toEqual([feb.id, mar.id]);
    expect(await list(site, q({ created_before: '2024-02-01T00:00:00Z' }))).toEqual([jan.id]);
    expect(
      await list(site, q({ created_after: '2024-02-01T00:00:00Z', created_before: '2024-03-01T00:00:00Z' })),
    ).toEqual([feb.id]);
    expect(await list(site, q({ created_after: '2024-02-15T12:00:00Z' }))).toEqual([feb.id, mar.id]);
    expect(await list(site, q({ created_before: '2024-02-15T12:00:00Z' }))).toEqual([jan.id]);
    // 14:00 at +02:00 is 12:00 UTC.
    expect(
      await list(site, q({ created_after: '2024-02-15T14:00:00+02:00', created_before: '2024-02-15T14:00:01+02:00' })),
    ).toEqual([feb.id]);
    expect(await list(site, q({ created_after: '2025-01-01T00:00:00Z' }))).toEqual([]);
    expect(await list(site, q({ created_after: '2024-01-01T00:00:00.000Z', kind: 'image' }))).toEqual([
      jan.id,
      feb.id,
      mar.id,
    ]);
  });

  it('pages through five items two at a time without repeats, with include_total, also under a filter', async () => {
    const site = await freshSite();
    const ids: string[] = [];
    // Two share a created_at: the id breaks the tie.
    for (const [i, at] of [
      '2024-01-01T00:00:00Z',
      '2024-01-02T00:00:00Z',
      '2024-01-02T00:00:00Z',
      '2024-01-03T00:00:00Z',
      '2024-01-04T00:00:00Z',
    ].entries()) {
      ids.push((await newItem(site, { createdAt: at, kind: i % 2 ? 'video' : 'image' })).id);
    }
    const expected = (await list(site, '')).slice();
    expect([...expected].sort()).toEqual([...ids].sort());
    expect(expected[0]).toBe(ids[0]);
    expect(expected[4]).toBe(ids[4]);

    const walk = async (filter: string) => {
      const walked: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const res: request.Response = await request(t.app)
          .get(
            `/${site.slug}/media/?limit=2&include_total=true${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          )
          .set(a.editor.auth)
          .expect(200);
        walked.push(...idsOf(res.body));
        sizes.push(res.body.items.length);
        cursor = res.body.next_cursor;
        expect(sizes.length).toBeLessThanOrEqual(5);
        if (filter === '') expect(res.body.total).toBe(5);
      } while (cursor);
      return { walked, sizes };
    };
    const all = await walk('');
    expect(all.sizes).toEqual([2, 2, 1]);
    expect(all.walked).toEqual(expected);
    expect(new Set(all.walked).size).toBe(5);

    const images = await walk('&kind=image');
    expect(images.walked).toEqual(expected.filter((id) => [ids[0], ids[2], ids[4]].includes(id)));
    expect(images.sizes).toEqual([2, 1]);
    const totals = await request(t.app)
      .get(`/${site.slug}/media/?limit=1&include_total=true&kind=video`)
      .set(a.editor.auth)
      .expect(200);
    expect(totals.body.total).toBe(2);
    expect(totals.body.items).toHaveLength(1);

    // The shared checker: one at a time, include_total, a garbage cursor 400, limit=0 422.
    expect(await expectPaginates(t, a.editor.auth, `/${site.slug}/media/`)).toEqual(expected);
    expect(await expectPaginates(t, reader, `/${site.slug}/media/?kind=image`)).toEqual(images.walked);
  });

  it('answers 422 for filters and limits it cannot read', async () => {
    const cases: [string, string][] = [
      ['kind=gif', 'query.kind'],
      ['status=deleted', 'query.status'],
      ['folder_id=xyz', 'query.folder_id'],
      ['created_after=yesterday', 'query.created_after'],
      ['created_before=2024-01-01', 'query.created_before'],
      ['limit=0', 'query.limit'],
      ['limit=201', 'query.limit'],
      ['limit=two', 'query.limit'],
      ['q=%20%20', 'query.q'],
      ['q=a%00b', 'query.q'],
      ['tag=s%00ky', 'query.tag'],
    ];
    for (const [query, path] of cases) {
      const res = await request(t.app).get(`/${a.site.slug}/media/?${query}`).set(a.editor.auth);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(paths(res.body)).toContain(path);
    }
    // Every mistake at once.
    const both = await request(t.app)
      .get(`/${a.site.slug}/media/?kind=gif&folder_id=xyz`)
      .set(a.editor.auth)
      .expect(422);
    expect(paths(both.body)).toEqual(expect.arrayContaining(['query.kind', 'query.folder_id']));
  });
});

describe('GET /{site}/media/count', () => {
  it('counts what the list holds under the same filters', async () => {
    const site = await freshSite();
    const folder = await newFolder(site);
    await newItem(site, {
      kind: 'image',
      folderId: folder,
      tags: ['sky'],
      title: 'Sky one',
      createdAt: '2024-01-10T00:00:00Z',
    });
    await newItem(site, { kind: 'image', tags: ['sky', 'sea'], alt: 'sea and SKY', createdAt: '2024-02-10T00:00:00Z' });
    await newItem(site, {
      kind: 'video',
      mimeType: 'video/mp4',
      status: 'processing',
      folderId: folder,
      createdAt: '2024-03-10T00:00:00Z',
    });
    await newItem(site, {
      kind: 'audio',
      mimeType: 'audio/mpeg',
      status: 'failed',
      caption: '50% louder',
      createdAt: '2024-04-10T00:00:00Z',
    });
    await newItem(a.site, { kind: 'image' }); // another site: never counted

    const filters = [
      '',
      `folder_id=${folder}`,
      'folder_id=none',
      'kind=image',
      'kind=document',
      'status=processing',
      'tag=SKY',
      'q=sky',
      `q=${encodeURIComponent('50%')}`,
      'created_after=2024-02-10T00:00:00Z',
      'created_before=2024-03-10T00:00:00Z',
      `kind=image&tag=sea&created_after=2024-01-01T00:00:00Z`,
      `folder_id=${folder}&status=ready`,
    ];
    const expectedCounts = [4, 2, 2, 2, 0, 1, 2, 2, 1, 3, 2, 1, 1];
    for (const [index, filter] of filters.entries()) {
      const listed = await request(t.app)
        .get(`/${site.slug}/media/?limit=1&include_total=true&${filter}`)
        .set(a.editor.auth)
        .expect(200);
      const counted = await count(site, filter);
      expect({ filter, counted }).toEqual({ filter, counted: listed.body.total });
      expect({ filter, counted }).toEqual({ filter, counted: expectedCounts[index] });
    }
    expect(await count(site, 'kind=image', reader)).toBe(2);
  });

  it('answers 422 for the same unreadable filters as the list', async () => {
    for (const [query, path] of [
      ['kind=gif', 'query.kind'],
      ['folder_id=xyz', 'query.folder_id'],
      ['created_after=yesterday', 'query.created_after'],
    ]) {
      const res = await request(t.app).get(`/${a.site.slug}/media/count?${query}`).set(a.editor.auth).expect(422);
      expect(paths(res.body)).toContain(path);
    }
  });
});

describe('PATCH /{site}/media/{media_id}', () => {
  it('trims the texts, lower-cases and de-duplicates the tags, sets the focal point, and moves updated_at forward', async () => {
    const item = await newItem(a.site, { title: 'Old title', alt: 'Old alt', caption: 'Old caption', tags: ['old'] });
    const res = await request(t.app)
      .patch(`/${a.site.slug}/media/${item.id}`)
      .set(a.editor.auth)
      .send({
        alt: '  A dog  ',
        title: '\tRex\n',
        caption: ' On the beach ',
        tags: ['Dog', 'dog', ' BEACH ', 'beach', 'Sun'],
        focal_point: { x: 0.3, y: 0.6 },
      })
      .expect(200);
    expect(Object.keys(res.body).sort()).toEqual(itemKeys);
    expect(res.body).toMatchObject({
      id: item.id,
      alt: 'A dog',
      title: 'Rex',
      caption: 'On the beach',
      tags: ['dog', 'beach', 'sun'],
      focal_point: { x: 0.3, y: 0.6 },
    });
    expect(res.body.created_at).toBe(item.created_at);
    expect(micros(res.body.updated_at)).toBeGreaterThan(micros(item.updated_at));

    const row = await readRow(item.id);
    expect(row).toMatchObject({
      alt: 'A dog',
      title: 'Rex',
      caption: 'On the beach',
      tags: ['dog', 'beach', 'sun'],
      focal_point: { x: 0.3, y: 0.6 },
    });
    expect((await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(200)).body).toEqual(
      res.body,
    );
    // The new tags are found by the list's tag filter.
    expect(
      idsOf((await request(t.app).get(`/${a.site.slug}/media/?tag=beach`).set(a.editor.auth).expect(200)).body),
    ).toContain(item.id);
  });

  it('leaves omitted fields unchanged, clears the focal point with null and accepts its bounds 0 and 1', async () => {
    const item = await newItem(a.site, {
      title: 'Keep',
      alt: 'Keep alt',
      caption: 'Keep caption',
      tags: ['keep'],
      focalPoint: { x: 0.1, y: 0.2 },
    });
    const base = `/${a.site.slug}/media/${item.id}`;

    const alt = await request(t.app).patch(base).set(a.editor.auth).send({ alt: 'New alt' }).expect(200);
    expect(alt.body).toMatchObject({
      alt: 'New alt',
      title: 'Keep',
      caption: 'Keep caption',
      tags: ['keep'],
      focal_point: { x: 0.1, y: 0.2 },
    });

    const tagsOnly = await request(t.app).patch(base).set(a.editor.auth).send({ tags: [] }).expect(200);
    expect(tagsOnly.body).toMatchObject({
      alt: 'New alt',
      title: 'Keep',
      caption: 'Keep caption',
      tags: [],
      focal_point: { x: 0.1, y: 0.2 },
    });

    const bounds = await request(t.app)
      .patch(base)
      .set(a.editor.auth)
      .send({ focal_point: { x: 0, y: 1 } })
      .expect(200);
    expect(bounds.body.focal_point).toEqual({ x: 0, y: 1 });

    const cleared = await request(t.app).patch(base).set(a.editor.auth).send({ focal_point: null }).expect(200);
    expect(cleared.body).toMatchObject({
      alt: 'New alt',
      title: 'Keep',
      caption: 'Keep caption',
      tags: [],
      focal_point: null,
    });
    expect((await readRow(item.id))?.focal_point).toBeNull();

    const title = await request(t.app).patch(base).set(a.editor.auth).send({ title: 'Other' }).expect(200);
    expect(title.body).toMatchObject({ alt: 'New alt', title: 'Other', focal_point: null });

    // An empty (or blank) text clears that text and only it.
    const blank = await request(t.app).patch(base).set(a.editor.auth).send({ caption: '   ' }).expect(200);
    expect(blank.body).toMatchObject({ alt: 'New alt', title: 'Other', caption: '' });
  });

  it('answers 422 for an empty body, unknown fields, a focal point out of range and too many or too long tags, changing nothing', async () => {
    const item = await newItem(a.site, { title: 'Same', tags: ['same'] });
    const base = `/${a.site.slug}/media/${item.id}`;
    const cases: [unknown, string | null][] = [
      [{}, null],
      [{ alt: 'ok', storage_key: 'x/y.png' }, null],
      [{ folder_id: null }, null],
      [{ focal_point: { x: 1.5, y: 0.5 } }, 'body.focal_point.x'],
      [{ focal_point: { x: 0.5, y: -0.1 } }, 'body.focal_point.y'],
      [{ focal_point: { x: 0.5 } }, 'body.focal_point.y'],
      [{ tags: Array.from({ length: 51 }, (_, i) => `tag${i}`) }, 'body.tags'],
      [{ tags: ['x'.repeat(51)] }, 'body.tags.0'],
      [{ tags: ['ok', '   '] }, 'body.tags.1'],
      [{ tags: 'one' }, 'body.tags'],
      [{ alt: 'x'.repeat(1001) }, 'body.alt'],
      [{ title: 42 }, 'body.title'],
    ];
    for (const [body, path] of cases) {
      const res = await request(t.app)
        .patch(base)
        .set(a.editor.auth)
        .send(body as object);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      if (path) expect(paths(res.body)).toContain(path);
    }
    // Exactly 50 tags of 50 characters are fine.
    const fifty = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')}${'t'.repeat(48)}`);
    expect((await request(t.app).patch(base).set(a.editor.auth).send({ tags: fifty }).expect(200)).body.tags).toEqual(
      fifty,
    );
    await request(t.app)
      .patch(base)
      .set(a.editor.auth)
      .send({ tags: ['same'] })
      .expect(200);
    expect(await readRow(item.id)).toMatchObject({ title: 'Same', tags: ['same'], alt: '', focal_point: null });
  });

  it('answers 422 (not 500) for text with a NUL character, naming the field', async () => {
    const item = await newItem(a.site, { alt: 'before' });
    const base = `/${a.site.slug}/media/${item.id}`;
    const alt = await request(t.app).patch(base).set(a.editor.auth).send({ alt: 'bad\u0000alt' }).expect(422);
    expect(paths(alt.body)).toContain('body.alt');
    const caption = await request(t.app).patch(base).set(a.editor.auth).send({ caption: '\u0000' }).expect(422);
    expect(paths(caption.body)).toContain('body.caption');
    const tag = await request(t.app)
      .patch(base)
      .set(a.editor.auth)
      .send({ tags: ['fine', 'nu\u0000l'] })
      .expect(422);
    expect(paths(tag.body)).toContain('body.tags.1');
    expect((await readRow(item.id))?.alt).toBe('before');
  });

  it('answers 400 for a body that is not JSON and 415 for another media type', async () => {
    const item = await newItem(a.site);
    const base = `/${a.site.slug}/media/${item.id}`;
    await request(t.app)
      .patch(base)
      .set(a.editor.auth)
      .set('Content-Type', 'application/json')
      .send('{"alt":')
      .expect(400);
    await request(t.app).patch(base).set(a.editor.auth).set('Content-Type', 'text/plain').send('alt').expect(415);
  });
});

describe('POST /{site}/media/{media_id}/move', () => {
  it('files the item into a folder of the site, then into none with null', async () => {
    const site = await freshSite();
    const folder = await newFolder(site);
    const item = await newItem(site);
    const base = `/${site.slug}/media/${item.id}/move`;

    const into = await request(t.app).post(base).set(a.editor.auth).send({ folder_id: folder }).expect(200);
    expect(Object.keys(into.body).sort()).toEqual(itemKeys);
    expect(into.body).toMatchObject({ id: item.id, folder_id: folder });
    expect((await readRow(item.id))?.folder_id).toBe(folder);
    expect(await list(site, `folder_id=${folder}`)).toEqual([item.id]);
    expect(await list(site, 'folder_id=none')).toEqual([]);

    const again = await request(t.app).post(base).set(a.editor.auth).send({ folder_id: folder }).expect(200);
    expect(again.body.folder_id).toBe(folder);

    const out = await request(t.app).post(base).set(a.editor.auth).send({ folder_id: null }).expect(200);
    expect(out.body.folder_id).toBeNull();
    expect((await readRow(item.id))?.folder_id).toBeNull();
    expect(await list(site, 'folder_id=none')).toEqual([item.id]);
    expect(await list(site, `folder_id=${folder}`)).toEqual([]);
  });

  it('answers 422 on body.folder_id for a folder of another site, of another tenant, or unknown, leaving the item where it was', async () => {
    const site = await freshSite();
    const home = await newFolder(site);
    const item = await newItem(site, { folderId: home });
    const base = `/${site.slug}/media/${item.id}/move`;
    for (const folder of [await newFolder(a.site), await newFolder(b.site), missing]) {
      const res = await request(t.app).post(base).set(a.editor.auth).send({ folder_id: folder }).expect(422);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(paths(res.body)).toEqual(['body.folder_id']);
    }
    expect((await readRow(item.id))?.folder_id).toBe(home);
  });

  it('answers 422 for a missing or malformed body', async () => {
    const item = await newItem(a.site);
    const base = `/${a.site.slug}/media/${item.id}/move`;
    await request(t.app).post(base).set(a.editor.auth).expect(422);
    for (const [body, path] of [
      [{}, 'body.folder_id'],
      [{ folder_id: 'xyz' }, 'body.folder_id'],
      [{ folder_id: 7 }, 'body.folder_id'],
    ] as const) {
      const res = await request(t.app).post(base).set(a.editor.auth).send(body).expect(422);
      expect(paths(res.body)).toContain(path);
    }
    await request(t.app).post(base).set(a.editor.auth).send({ folder_id: null, parent: null }).expect(422);
    expect((await readRow(item.id))?.folder_id).toBeNull();
  });
});

describe('DELETE /{site}/media/{media_id}', () => {
  it('answers 204, then the item is gone (GET 404, no row, no file) and a second delete is 404', async () => {
    const item = await newItem(a.site, { file: true });
    const file = localFile(t, item.storage_key);
    expect(existsSync(file)).toBe(true);
    const res = await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(204);
    expect(res.text).toBe('');
    await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(404);
    await request(t.app).get(`/${a.site.slug}/media/by-id/${item.id}`).set(a.editor.auth).expect(404);
    expect(await readRow(item.id)).toBeNull();
    expect(existsSync(file)).toBe(false);
    await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(404);
  });

  it('removes only the item’s own file and row', async () => {
    const site = await freshSite();
    const gone = await newItem(site, { file: true });
    const kept = await newItem(site, { file: true });
    await request(t.app).delete(`/${site.slug}/media/${gone.id}`).set(a.editor.auth).expect(204);
    expect(await list(site, '')).toEqual([kept.id]);
    expect(existsSync(localFile(t, kept.storage_key))).toBe(true);
    expect(existsSync(localFile(t, gone.storage_key))).toBe(false);
    expect(await count(site, '')).toBe(1);
  });

  it('answers 403 to an author deleting another’s item and removes nothing', async () => {
    const item = await newItem(a.site, { createdBy: a.editor.user.id, file: true });
    const res = await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(author.auth).expect(403);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(await readRow(item.id)).not.toBeNull();
    expect(existsSync(localFile(t, item.storage_key))).toBe(true);
    await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(author.auth).expect(200);
  });

  it('deletes an item whose file is already missing', async () => {
    const item = await newItem(a.site, { file: false });
    await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(writer).expect(204);
    expect(await readRow(item.id)).toBeNull();
  });
});
