// Files a client can fetch (issue 40 item 4): media items and the jobs that
// made media carry the file's URL — the public view on a public site, a
// signed, expiring URL anywhere else — and the URL, fetched with no token,
// gives the file's bytes; a signed one refuses once tampered with or expired.
import request from 'supertest';
import { insertMedia } from '../../../core/media/items.ts';
import { signedUrl, signingKey } from '../../../core/media/urls.ts';
import { createStorage } from '../../../core/storage/index.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant } from '../../helpers/identity.ts';
import { giveCredits, startTestWorker } from '../../helpers/jobs.ts';

let t: TestApp;
let worker: WorkerHandle | undefined;
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => stopTestApp(t));

const bytes = Buffer.from(Array.from({ length: 500 }, (_, i) => (i * 7) % 256));

async function stored(site: Site) {
  const key = `${site.tenant_id}/${site.id}/url-${Math.random().toString(36).slice(2)}.mp3`;
  await createStorage(t.config).put(key, bytes, 'audio/mpeg');
  return insertMedia(
    t.services.db,
    { tenantId: site.tenant_id, siteId: site.id, jobId: null, createdBy: null },
    { kind: 'audio', mimeType: 'audio/mpeg', sizeBytes: bytes.length, storageKey: key, fileName: 'url.mp3' },
  );
}

/** Fetches a URL the API gave, with no token: its path and query against the test app. */
const fetchUrl = (url: string) => {
  const parsed = new URL(url);
  return request(t.app).get(`${parsed.pathname}${parsed.search}`).buffer(true);
};

const makePublic = (site: Site) =>
  t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);

describe('media items', () => {
  it('carry a signed, expiring URL on a private site, which gives the file with no token', async () => {
    const { site, editor } = await staffedTenant(t);
    const item = await stored(site);
    const before = Date.now();
    const res = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(editor.auth).expect(200);
    expect(res.body.url).toMatch(
      new RegExp(`/${site.id}/media/${item.id}/signed-view\\?expires=\\d+&signature=[A-Za-z0-9_-]+$`),
    );
    // At least an hour, at most an hour and a quarter (rounded up to the quarter-hour).
    const expires = Date.parse(res.body.url_expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 4500_000);
    const file = await fetchUrl(res.body.url).expect(200);
    expect(file.headers['content-type']).toBe('audio/mpeg');
    expect((file.body as Buffer).equals(bytes)).toBe(true);
    // The same URL for the same item within the quarter-hour, so a copy of the file is reused.
    const again = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(editor.auth).expect(200);
    const [first, second] = [new URL(res.body.url), new URL(again.body.url)];
    const step = Number(second.searchParams.get('expires')) - Number(first.searchParams.get('expires'));
    // (Unless a quarter-hour began between the two reads.)
    expect([0, 900]).toContain(step);
    if (step === 0) expect(second.search).toBe(first.search);
  });

  it('carry the public view’s URL, which does not expire, on a public site', async () => {
    const { site, editor } = await staffedTenant(t);
    await makePublic(site);
    const item = await stored(site);
    const res = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(editor.auth).expect(200);
    expect(res.body.url).toMatch(new RegExp(`/public/${site.slug}/media/${item.id}/view$`));
    expect(res.body.url_expires_at).toBeNull();
    const file = await fetchUrl(res.body.url).expect(200);
    expect((file.body as Buffer).equals(bytes)).toBe(true);
  });

  it('carry it in lists, uploads and changes too', async () => {
    const { site, editor } = await staffedTenant(t);
    const item = await stored(site);
    const list = await request(t.app).get(`/${site.slug}/media/`).set(editor.auth).expect(200);
    expect(list.body.items).toEqual([expect.objectContaining({ id: item.id, url: expect.stringContaining('signed') })]);
    const changed = await request(t.app)
      .patch(`/${site.slug}/media/${item.id}`)
      .set(editor.auth)
      .send({ alt: 'a tone' })
      .expect(200);
    expect(changed.body.url).toEqual(expect.stringContaining(`/media/${item.id}/signed-view?`));
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII=',
      'base64',
    );
    const upload = await request(t.app)
      .post(`/${site.slug}/media/`)
      .set(editor.auth)
      .attach('file', png, 'dot.png')
      .expect(201);
    expect(upload.body.url_expires_at).toEqual(expect.any(String));
    const file = await fetchUrl(upload.body.url).expect(200);
    expect((file.body as Buffer).equals(png)).toBe(true);
  });

  it('a service account’s read carries it too', async () => {
    const { tenant, site, admin } = await staffedTenant(t);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'media:read'], admin);
    const item = await stored(site);
    const res = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(bot.auth).expect(200);
    await fetchUrl(res.body.url).expect(200);
  });
});

describe('signed URLs', () => {
  it('refuse a changed signature, a changed expiry, another item’s signature and an expired URL (403)', async () => {
    const { site, editor } = await staffedTenant(t);
    const item = await stored(site);
    const other = await stored(site);
    const res = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(editor.auth).expect(200);
    const url = new URL(res.body.url);
    const signature = url.searchParams.get('signature')!;
    const expires = Number(url.searchParams.get('expires'));
    const path = `/${site.id}/media/${item.id}/signed-view`;

    const tampered = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    const bad = await request(t.app).get(`${path}?expires=${expires}&signature=${tampered}`).expect(403);
    expect(bad.headers['content-type']).toMatch(/problem\+json/);
    expect(bad.body.detail).toMatch(/signature does not match/);
    await request(t.app)
      .get(`${path}?expires=${expires + 86_400}&signature=${signature}`)
      .expect(403);
    await request(t.app)
      .get(`/${site.id}/media/${other.id}/signed-view?expires=${expires}&signature=${signature}`)
      .expect(403);
    // Correctly signed, but past its expiry.
    const links = { base: '', secret: signingKey(t.config) };
    const expired = await request(t.app)
      .get(signedUrl(links, site.id, item.id, Math.floor(Date.now() / 1000) - 1))
      .expect(403);
    expect(expired.body.detail).toMatch(/expired/);
    // Without the signature at all, a 422 naming what is missing.
    await request(t.app).get(path).expect(422);
  });

  it('refuse another site’s URL for the item, answer 404 for a variant it lacks and once the item is deleted', async () => {
    const a = await staffedTenant(t);
    const b = await staffedTenant(t);
    const item = await stored(a.site);
    const links = { base: '', secret: signingKey(t.config) };
    const later = Math.floor(Date.now() / 1000) + 600;
    // Signed for site b: the item is not b's, and the signature is not one for a's item.
    await request(t.app)
      .get(signedUrl(links, b.site.id, item.id, later))
      .expect(404);
    await request(t.app)
      .get(signedUrl(links, a.site.id, item.id, later).replace(`/${a.site.id}/`, `/${b.site.id}/`))
      .expect(403);
    await request(t.app)
      .get(`${signedUrl(links, a.site.id, item.id, later)}&variant=poster`)
      .expect(404);
    await request(t.app).delete(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(204);
    await request(t.app)
      .get(signedUrl(links, a.site.id, item.id, later))
      .expect(404);
  });
});

describe('jobs', () => {
  it('give the URL of the media they made beside its id, which gives the file with no token', async () => {
    const { site, editor } = await staffedTenant(t);
    await giveCredits(t, site, 100, editor.user.id);
    worker = await startTestWorker(t);
    const res = await request(t.app)
      .post(`/${site.slug}/media/tts`)
      .set(editor.auth)
      .set('Prefer', 'wait=30')
      .send({ text: 'Fetch me.' })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'succeeded', media_id: expect.any(String) });
    expect(res.body.media_url).toContain(`/media/${res.body.media_id}/signed-view?`);
    expect(res.body.media_urls_expire_at).toEqual(expect.any(String));
    const item = await request(t.app).get(`/${site.slug}/media/${res.body.media_id}`).set(editor.auth).expect(200);
    const file = await fetchUrl(res.body.media_url).expect(200);
    expect(file.headers['content-type']).toBe(item.body.mime_type);
    expect((file.body as Buffer).length).toBe(item.body.size_bytes);
    // Reading the job, or listing jobs, gives them too.
    const read = await request(t.app).get(`/${site.slug}/jobs/${res.body.id}`).set(editor.auth).expect(200);
    expect(read.body.media_url).toContain(`/media/${res.body.media_id}/`);
    const list = await request(t.app).get(`/${site.slug}/jobs/`).set(editor.auth).expect(200);
    expect(list.body.items[0]).toMatchObject({ media_url: expect.any(String), media_urls: expect.any(Array) });
    // So do its events: a finished job's stream is its one last state.
    const events = await request(t.app).get(`/${site.slug}/jobs/${res.body.id}/events`).set(editor.auth).expect(200);
    const data = JSON.parse(/^data: (.*)$/m.exec(events.text)![1]!) as { media_url: string };
    expect(data.media_url).toContain(`/media/${res.body.media_id}/signed-view?`);
    // And an admin's read of the job (not the admin list, whose rows are many).
    const admin = await globalAdmin(t);
    const detail = await request(t.app).get(`/admin/jobs/${res.body.id}`).set(admin.auth).expect(200);
    expect(detail.body).toMatchObject({
      media_urls: [expect.stringContaining(`/media/${res.body.media_id}/signed-view?`)],
    });
    await fetchUrl(detail.body.media_url).expect(200);
  });

  it('give the public view’s URL on a public site, which does not expire', async () => {
    const { site, editor } = await staffedTenant(t);
    await makePublic(site);
    await giveCredits(t, site, 100, editor.user.id);
    worker = await startTestWorker(t);
    const res = await request(t.app)
      .post(`/${site.slug}/media/tts`)
      .set(editor.auth)
      .set('Prefer', 'wait=30')
      .send({ text: 'Public.' })
      .expect(200);
    expect(res.body.media_url).toMatch(new RegExp(`/public/${site.slug}/media/${res.body.media_id}/view$`));
    expect(res.body.media_urls_expire_at).toBeNull();
    await fetchUrl(res.body.media_url).expect(200);
  });
});
