// The figure of issue 41's drafts, through HTTP against PostgreSQL: public
// reads while a published element's or page's draft is being edited show the
// published version only (same body, same ETag, answered from the public
// cache, which drafts do not drop); after publish, the next read shows the
// draft's content (the cache dropped, as for any live change).
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, createElement, createType, type ContentCast } from '../../helpers/content.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

const editor = () => c.a.editor.auth;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = c.a.site;
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await accessChangeHeard(t);
  await createType(t, editor(), site, {
    api_id: 'block',
    fields: [{ id: 'title', label: 'Title', type: 'text', required: true }],
  });
});
afterAll(() => stopTestApp(t));

/** A public read once every change committed so far has been heard (so the cache is as it will stay). */
async function publicRead(path: string) {
  await t.services.notifications.sync();
  const res = await request(t.app).get(`/public/${site.slug}${path}`).expect(200);
  return { etag: res.headers.etag as string, body: res.body as Record<string, unknown> & { title?: string } };
}

const hits = () => t.services.publicCache.counts().hits;

/** The element's public row (migration 0021), as text: what public delivery serves it from. */
const publicRow = (id: string) =>
  t.services.db.oneFirst(sql.type(z.object({ row: z.string() }))`
    select to_jsonb(p)::text as row from public_elements p where master_id = ${id}`);

it('serves the published element and page while drafts are edited, and the draft from the read after publish', async () => {
  const element = await createElement(t, editor(), site, {
    type: 'block',
    name: 'Block',
    data: { title: 'Published' },
    status: 'published',
  });
  const page = (
    await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(editor())
      .send({ slug: 'home', title: 'Home', status: 'published' })
      .expect(201)
  ).body as { id: string };
  await request(t.app)
    .post(`/${site.slug}/pages/${page.id}/elements`)
    .set(editor())
    .send({ element_id: element.id })
    .expect(201);

  const row = await publicRow(element.id);
  const elementPath = `/elements/${element.id}`;
  const pagePath = `/pages/${page.id}`;
  const firstElement = await publicRead(elementPath);
  const firstPage = await publicRead(pagePath);
  expect(firstElement.body).toMatchObject({ name: 'Block', data: { title: 'Published' } });
  expect(firstPage.body).toMatchObject({ title: 'Home', elements: [{ element: { data: { title: 'Published' } } }] });

  for (const n of [1, 2, 3]) {
    await request(t.app)
      .patch(`/${site.slug}/elements/${element.id}`)
      .set(editor())
      .send({ name: `Block ${n}`, data: { title: `Draft ${n}` } })
      .expect(200);
    const before = hits();
    expect(await publicRead(elementPath)).toEqual(firstElement);
    expect(await publicRead(pagePath)).toEqual(firstPage);
    // Both answered from the cache: a draft announces nothing public.
    expect(hits() - before).toBe(2);
    await request(t.app).get(`/public/${site.slug}${elementPath}`).set('If-None-Match', firstElement.etag).expect(304);
  }
  // Saving drafts left the public row as it was; publishing rewrites it as a live edit does.
  expect(await publicRow(element.id)).toBe(row);
  const admin = await request(t.app).get(`/${site.slug}/elements/${element.id}`).set(editor()).expect(200);
  expect(admin.body).toMatchObject({ data: { title: 'Published' }, draft: { data: { title: 'Draft 3' } } });

  await request(t.app).post(`/${site.slug}/elements/${element.id}/publish`).set(editor()).expect(200);
  expect(JSON.parse(await publicRow(element.id))).toMatchObject({ data: { title: 'Draft 3' } });
  const publishedElement = await publicRead(elementPath);
  const publishedPage = await publicRead(pagePath);
  expect(publishedElement.body).toMatchObject({ name: 'Block 3', data: { title: 'Draft 3' } });
  expect(publishedElement.etag).not.toBe(firstElement.etag);
  expect(publishedPage.body).toMatchObject({
    elements: [{ element: { name: 'Block 3', data: { title: 'Draft 3' } } }],
  });
  expect(publishedPage.etag).not.toBe(firstPage.etag);

  // The page's own title, the same way.
  for (const n of [1, 2]) {
    await request(t.app)
      .patch(`/${site.slug}/pages/${page.id}`)
      .set(editor())
      .send({ title: `Home draft ${n}` })
      .expect(200);
    const before = hits();
    expect(await publicRead(pagePath)).toEqual(publishedPage);
    expect(hits() - before).toBe(1);
  }
  await request(t.app).post(`/${site.slug}/pages/${page.id}/publish`).set(editor()).expect(200);
  const retitled = await publicRead(pagePath);
  expect(retitled.body.title).toBe('Home draft 2');
  expect(retitled.etag).not.toBe(publishedPage.etag);
  expect(retitled.body).toMatchObject({ elements: [{ element: { data: { title: 'Draft 3' } } }] });
});
