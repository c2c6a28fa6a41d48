// The storage quota of a tenant's plan: what the tenant stores (originals,
// variants and earlier versions, per site and kind), and the uploads and saved
// edits refused with 413 when they would not fit — with nothing kept.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { storageUsage, usedBytes } from '../../../core/billing/storage.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import type { Tenant } from '../../../core/tenancy/tenants.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import { unique } from '../../helpers/identity.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const freeQuota = 1024 ** 3;
const setFreeQuota = (bytes: number | null) =>
  t.services.db.query(sql.typeAlias('void')`update plans set storage_quota_bytes = ${bytes} where is_free`);
afterEach(() => setFreeQuota(freeQuota));

/** A tenant of its own with one site and an editor of it, so each test counts only its own bytes. */
async function tenantWithEditor(): Promise<{ tenant: Tenant; site: Site; editor: Caller; tenantId: string }> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
  return { tenant, site, editor, tenantId: tenant.id };
}

/** A PNG of solid colour; a larger side makes a larger file. */
const picture = (side: number, red = 200) =>
  sharp({ create: { width: side, height: side, channels: 3, background: { r: red, g: 40, b: 90 } } })
    .png()
    .toBuffer();
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

const upload = (site: Site, editor: Caller, file: Buffer, name = 'picture.png') =>
  request(t.app).post(`/${site.slug}/media/`).set(editor.auth).attach('file', file, name);

const saveEdited = (site: Site, editor: Caller, id: string) =>
  request(t.app).post(`/${site.slug}/media/${id}/save-edited-image`).set(editor.auth);

/** What the site holds: stored files, media rows and version rows. */
async function holdings(site: Site) {
  if (t.config.storage.driver !== 'local') throw new Error('local storage expected');
  const dir = path.join(t.config.storage.root, site.tenant_id, site.id);
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => !name.endsWith('.partial'))
        .sort()
    : [];
  const counts = await t.services.db.one(sql.type(z.object({ items: z.number(), versions: z.number() }))`
    select (select count(*) from media_items where site_id = ${site.id})::int as items,
           (select count(*) from media_versions mv join media_items m on m.id = mv.media_id where m.site_id = ${site.id})::int as versions`);
  return { files, ...counts };
}

function expectQuotaProblem(res: request.Response, quota: number, used: number, incoming: number) {
  expect(res.status).toBe(413);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: '/problems/storage-quota-exceeded',
    title: 'Storage quota exceeded',
    status: 413,
    quota_bytes: quota,
    used_bytes: used,
    incoming_bytes: incoming,
  });
}

describe('storageUsage', () => {
  it('counts originals, variants and earlier versions per site and kind, and only the tenant’s own', async () => {
    const { tenant, site, editor, tenantId } = await tenantWithEditor();
    const quiet = await newSite(t, tenant);
    const first = await picture(40);
    const second = await picture(90, 10);
    const image = (await upload(site, editor, first).expect(201)).body;
    // A saved edit keeps the first file as a version; the second is the original now.
    const edited = await saveEdited(site, editor, image.id).attach('file', second, 'second.png').expect(200);
    expect(edited.body).toMatchObject({ version: 2, size_bytes: second.length });
    // Variants are the processing job's; written here as it writes them, without running it.
    const variants = [
      {
        name: 'w320',
        key: `${tenantId}/${site.id}/v320`,
        mime_type: 'image/webp',
        width: 320,
        height: 320,
        size_bytes: 1234,
      },
      {
        name: 'w640',
        key: `${tenantId}/${site.id}/v640`,
        mime_type: 'image/webp',
        width: 640,
        height: 640,
        size_bytes: 5678,
      },
    ];
    await t.services.db.query(
      sql.typeAlias('void')`update media_items set variants = ${sql.jsonb(variants)} where id = ${image.id}`,
    );
    await upload(site, editor, pdf, 'paper.pdf').expect(201);
    // Another tenant's media are not counted.
    const other = await tenantWithEditor();
    await upload(other.site, other.editor, await picture(60)).expect(201);

    const usage = await storageUsage(t.services.db, tenantId);
    const used = second.length + 1234 + 5678 + first.length + pdf.length;
    expect(usage).toEqual({
      tenant_id: tenantId,
      plan: { id: expect.any(String), name: 'Free' },
      quota_bytes: freeQuota,
      used_bytes: used,
      available_bytes: freeQuota - used,
      percent_used: Math.round((used / freeQuota) * 10_000) / 100,
      sites: [
        {
          site_id: site.id,
          slug: site.slug,
          name: site.name,
          used_bytes: used,
          originals_bytes: second.length + pdf.length,
          variants_bytes: 1234 + 5678,
          versions_bytes: first.length,
          kinds: [
            { kind: 'document', items: 1, originals_bytes: pdf.length, variants_bytes: 0, versions_bytes: 0 },
            {
              kind: 'image',
              items: 1,
              originals_bytes: second.length,
              variants_bytes: 1234 + 5678,
              versions_bytes: first.length,
            },
          ],
        },
        {
          site_id: quiet.id,
          slug: quiet.slug,
          name: quiet.name,
          used_bytes: 0,
          originals_bytes: 0,
          variants_bytes: 0,
          versions_bytes: 0,
          kinds: [],
        },
      ],
    });
    expect(await usedBytes(t.services.db, tenantId)).toBe(used);
    expect(await usedBytes(t.services.db, other.tenantId)).toBe(
      (await storageUsage(t.services.db, other.tenantId)).used_bytes,
    );
  });

  it('says what is left of the quota, none past it, and nothing without one', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const file = await picture(30);
    await upload(site, editor, file).expect(201);
    await setFreeQuota(file.length * 4);
    expect(await storageUsage(t.services.db, tenantId)).toMatchObject({
      quota_bytes: file.length * 4,
      used_bytes: file.length,
      available_bytes: file.length * 3,
      percent_used: 25,
    });
    await setFreeQuota(file.length - 1);
    expect(await storageUsage(t.services.db, tenantId)).toMatchObject({ available_bytes: 0, percent_used: 100 });
    await setFreeQuota(null);
    expect(await storageUsage(t.services.db, tenantId)).toMatchObject({
      quota_bytes: null,
      used_bytes: file.length,
      available_bytes: null,
      percent_used: null,
    });
  });

  it('keeps sizes past 2^32 exact', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const item = (await upload(site, editor, pdf, 'paper.pdf').expect(201)).body;
    const huge = 3 * 2 ** 40 + 7;
    await t.services.db.query(sql.typeAlias('void')`update media_items set size_bytes = ${huge} where id = ${item.id}`);
    expect(await usedBytes(t.services.db, tenantId)).toBe(huge);
    expect((await storageUsage(t.services.db, tenantId)).sites[0]!.originals_bytes).toBe(huge);
  });
});

describe('POST /{site}/media/', () => {
  it('takes a file that fits, up to the last byte of the quota', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const file = await picture(50);
    await upload(site, editor, file).expect(201);
    await setFreeQuota((await usedBytes(t.services.db, tenantId)) + file.length);
    await upload(site, editor, file).expect(201);
    expect(await usedBytes(t.services.db, tenantId)).toBe(2 * file.length);
  });

  it('refuses a file that does not fit with 413, and keeps nothing', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const file = await picture(50);
    await upload(site, editor, file).expect(201);
    const used = await usedBytes(t.services.db, tenantId);
    await setFreeQuota(used + file.length - 1);
    const before = await holdings(site);
    expectQuotaProblem(await upload(site, editor, file), used + file.length - 1, used, file.length);
    expect(await holdings(site)).toEqual(before);
    expect(await usedBytes(t.services.db, tenantId)).toBe(used);
  });

  it('refuses a tenant already over its quota before storing anything', async () => {
    const { site, editor } = await tenantWithEditor();
    const file = await picture(50);
    await upload(site, editor, file).expect(201);
    await setFreeQuota(0);
    const before = await holdings(site);
    // Nothing received yet when it is refused.
    expectQuotaProblem(await upload(site, editor, file), 0, file.length, 0);
    expect(await holdings(site)).toEqual(before);
  });

  it('takes anything on a plan without a quota, and the subscribed plan’s quota over the free one', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const file = await picture(50);
    await setFreeQuota(0);
    await upload(site, editor, file).expect(413);
    await setFreeQuota(null);
    await upload(site, editor, file).expect(201);

    await setFreeQuota(0);
    const plan = await t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into plans (name, monthly_credits, price, stripe_price_id, storage_quota_bytes)
      values ('Unlimited storage', 0, 1000, ${`price_${unique()}`}, null) returning id`);
    await t.services.db.query(sql.typeAlias('void')`
      insert into subscriptions (tenant_id, plan_id, status) values (${tenantId}, ${plan}, 'active')`);
    await upload(site, editor, file).expect(201);
    // A canceled subscription's plan no longer applies: the free plan's quota does.
    await t.services.db.query(
      sql.typeAlias('void')`update subscriptions set status = 'canceled' where tenant_id = ${tenantId}`,
    );
    await upload(site, editor, file).expect(413);
  });

  it('lets only one of two uploads that each fit, but not together, through', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const file = await picture(50);
    await setFreeQuota(Math.floor(file.length * 1.5));
    const before = await holdings(site);
    const answers = await Promise.all([upload(site, editor, file), upload(site, editor, file)]);
    expect(answers.map((res) => res.status).sort()).toEqual([201, 413]);
    expect(await usedBytes(t.services.db, tenantId)).toBe(file.length);
    expect((await holdings(site)).files).toHaveLength(before.files.length + 1);
  });
});

describe('POST /{site}/media/{id}/save-edited-image', () => {
  it('counts an uploaded new version beside the one it keeps: 413 when it does not fit, nothing changed', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const first = await picture(40);
    const item = (await upload(site, editor, first).expect(201)).body;
    const next = await picture(60, 20);
    const used = await usedBytes(t.services.db, tenantId);
    await setFreeQuota(used + next.length - 1);
    const before = await holdings(site);
    expectQuotaProblem(
      await saveEdited(site, editor, item.id).attach('file', next, 'next.png'),
      used + next.length - 1,
      used,
      next.length,
    );
    expect(await holdings(site)).toEqual(before);
    const still = await request(t.app).get(`/${site.slug}/media/${item.id}`).set(editor.auth).expect(200);
    expect(still.body).toMatchObject({ version: 1, size_bytes: first.length });

    await setFreeQuota(used + next.length);
    await saveEdited(site, editor, item.id).attach('file', next, 'next.png').expect(200);
    expect(await usedBytes(t.services.db, tenantId)).toBe(first.length + next.length);
    await setFreeQuota(null);
    await saveEdited(site, editor, item.id).attach('file', first, 'again.png').expect(200);
  });

  it('counts an edit by operations the same way', async () => {
    const { site, editor, tenantId } = await tenantWithEditor();
    const item = (await upload(site, editor, await picture(80)).expect(201)).body;
    const operations = { operations: [{ op: 'flip', direction: 'horizontal' }] };
    const used = await usedBytes(t.services.db, tenantId);
    await setFreeQuota(used);
    const before = await holdings(site);
    const refused = await saveEdited(site, editor, item.id).send(operations);
    expectQuotaProblem(refused, used, used, refused.body.incoming_bytes);
    expect(refused.body.incoming_bytes).toBeGreaterThan(0);
    expect(await holdings(site)).toEqual(before);

    await setFreeQuota(null);
    const saved = await saveEdited(site, editor, item.id).send(operations).expect(200);
    expect(saved.body.version).toBe(2);
    expect(await usedBytes(t.services.db, tenantId)).toBe(used + saved.body.size_bytes);
  });
});
