// History of elements and pages (issue 41) through HTTP: a version at every
// create, save, publish and restore, with who, when and which fields
// changed; listed newest first in cursor pages, read one by one, compared
// field by field, restored as a new draft (published items) or into the
// columns (unpublished ones); saves pruned after CONTENT_SAVE_VERSIONS_DAYS.
import request from 'supertest';
import { removeExpiredRows } from '../../../core/cleanup.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, createElement, createType, pathsOf, type ContentCast } from '../../helpers/content.ts';
import { expectPaginates, unique } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

const at = (id: string, rest = '') => `/${site.slug}/elements/${id}${rest}`;
const pageAt = (id: string, rest = '') => `/${site.slug}/pages/${id}${rest}`;
const editor = () => c.a.editor.auth;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = c.a.site;
  await createType(t, editor(), site, {
    api_id: 'card',
    fields: [
      { id: 'title', label: 'Title', type: 'text', required: true },
      { id: 'rating', label: 'Rating', type: 'number' },
    ],
  });
});
afterAll(() => stopTestApp(t));

describe('element history', () => {
  it('keeps a version at every create, save and publish, with who, when and what changed', async () => {
    const card = await createElement(t, editor(), site, { type: 'card', name: 'Card', data: { title: 'One' } });
    await request(t.app)
      .patch(at(card.id))
      .set(editor())
      .send({ data: { rating: 2 } })
      .expect(200);
    await request(t.app).post(at(card.id, '/publish')).set(editor()).expect(200);
    await request(t.app).patch(at(card.id)).set(c.writer).send({ name: 'Card 2' }).expect(200);
    const list = await request(t.app).get(at(card.id, '/versions')).set(c.reader).expect(200);
    expect(list.body.next_cursor).toBeNull();
    expect(
      list.body.items.map((v: { number: number; reason: string; changed: string[] }) => [
        v.number,
        v.reason,
        v.changed,
      ]),
    ).toEqual([
      [4, 'save', ['name']],
      [3, 'publish', []],
      [2, 'save', ['data.rating']],
      [1, 'save', ['name', 'data.title']],
    ]);
    expect(list.body.items[3]).toMatchObject({ created_by: c.a.editor.user.id, created_at: expect.any(String) });
    expect(list.body.items[3]).not.toHaveProperty('content');
    const saves = await request(t.app).get(at(card.id, '/versions?reason=publish')).set(c.reader).expect(200);
    expect(saves.body.items.map((v: { number: number }) => v.number)).toEqual([3]);
    await expectPaginates(t, c.reader, at(card.id, '/versions'));

    const one = await request(t.app).get(at(card.id, '/versions/2')).set(c.reader).expect(200);
    expect(one.body).toMatchObject({
      number: 2,
      reason: 'save',
      content: { name: 'Card', data: { title: 'One', rating: 2 }, schema_version: 1 },
    });
    const compared = await request(t.app).get(at(card.id, '/versions/compare?from=1&to=4')).set(c.reader).expect(200);
    expect(compared.body).toMatchObject({ from: { number: 1 }, to: { number: 4 } });
    expect(compared.body.changes).toEqual([
      { field: 'name', from: 'Card', to: 'Card 2' },
      { field: 'data.rating', from: null, to: 2 },
    ]);
  });

  it('restores a version as a new draft of a published element, and into an unpublished one’s fields', async () => {
    const card = await createElement(t, editor(), site, {
      type: 'card',
      name: 'Old',
      data: { title: 'Old' },
      status: 'published',
    });
    await request(t.app)
      .patch(at(card.id))
      .set(editor())
      .send({ name: 'New', data: { title: 'New' } })
      .expect(200);
    const published = await request(t.app).post(at(card.id, '/publish')).set(editor()).expect(200);
    await request(t.app).post(at(card.id, '/versions/1/restore')).set(editor()).set('If-Match', '"1"').expect(412);
    const restored = await request(t.app)
      .post(at(card.id, '/versions/1/restore'))
      .set(editor())
      .set('If-Match', published.headers.etag!)
      .expect(200);
    expect(restored.body).toMatchObject({
      name: 'New',
      data: { title: 'New' },
      has_draft: true,
      draft: { name: 'Old', data: { title: 'Old' } },
    });
    const versions = await request(t.app).get(at(card.id, '/versions?limit=1')).set(editor()).expect(200);
    expect(versions.body.items[0]).toMatchObject({ number: 4, reason: 'restore', changed: ['name', 'data.title'] });

    const draft = await createElement(t, editor(), site, { type: 'card', name: 'A', data: { title: 'A' } });
    await request(t.app)
      .patch(at(draft.id))
      .set(editor())
      .send({ name: 'B', data: { title: 'B' } })
      .expect(200);
    const back = await request(t.app).post(at(draft.id, '/versions/1/restore')).set(editor()).expect(200);
    expect(back.body).toMatchObject({ name: 'A', data: { title: 'A' }, has_draft: false, status: 'draft' });
  });

  it('prunes saves past the retention, keeping publishes and the latest version', async () => {
    const card = await createElement(t, editor(), site, { type: 'card', data: { title: 'Kept' }, status: 'published' });
    await request(t.app)
      .patch(at(card.id))
      .set(editor())
      .send({ data: { title: 'Saved' } })
      .expect(200);
    const latest = await createElement(t, editor(), site, { type: 'card', data: { title: 'Draft' } });
    await t.services.db.query(sql.typeAlias('void')`
      update content_versions set created_at = now() - interval '31 days'
      where element_id = ${card.id} or element_id = ${latest.id}`);
    const reasons = async (id: string) =>
      (await request(t.app).get(at(id, '/versions')).set(editor()).expect(200)).body.items.map(
        (v: { number: number; reason: string }) => `${v.number} ${v.reason}`,
      );
    // The save is card's latest version: it stays (its number is not given again) until another follows.
    await removeExpiredRows(t.services.db, t.services.config);
    expect(await reasons(card.id)).toEqual(['2 save', '1 publish']);
    await request(t.app).post(at(card.id, '/publish')).set(editor()).expect(200);
    const removed = await removeExpiredRows(t.services.db, t.services.config);
    expect(removed.content_versions).toBeGreaterThanOrEqual(1);
    expect(await reasons(card.id)).toEqual(['3 publish', '1 publish']);
    expect(await reasons(latest.id)).toEqual(['1 save']);
  });

  it('answers 401, 403, 404 and 422', async () => {
    const card = await createElement(t, editor(), site, { type: 'card', data: { title: 'X' } });
    await request(t.app)
      .patch(at(card.id))
      .set(editor())
      .send({ data: { title: 'Y' } })
      .expect(200);
    await request(t.app).get(at(card.id, '/versions')).expect(401);
    await request(t.app).get(at(card.id, '/versions/1')).expect(401);
    await request(t.app).get(at(card.id, '/versions/compare?from=1&to=2')).expect(401);
    await request(t.app).post(at(card.id, '/versions/1/restore')).expect(401);
    await request(t.app).get(at(card.id, '/versions')).set(c.author.auth).expect(200);
    await request(t.app).post(at(card.id, '/versions/1/restore')).set(c.author.auth).expect(403);
    await request(t.app).post(at(card.id, '/versions/1/restore')).set(c.reader).expect(403);
    const elsewhere = `/${c.b.site.slug}/elements/${card.id}`;
    await request(t.app).get(`${elsewhere}/versions`).set(c.b.editor.auth).expect(404);
    await request(t.app).get(`${elsewhere}/versions/1`).set(c.b.editor.auth).expect(404);
    await request(t.app).get(`${elsewhere}/versions/compare?from=1&to=2`).set(c.b.editor.auth).expect(404);
    await request(t.app).post(`${elsewhere}/versions/1/restore`).set(c.b.editor.auth).expect(404);
    await request(t.app).get(at(card.id, '/versions/9')).set(editor()).expect(404);
    const bad = await request(t.app).get(at(card.id, '/versions/compare?from=0')).set(editor()).expect(422);
    expect(pathsOf(bad.body)).toEqual(['query.from', 'query.to']);
    await request(t.app).get(at(card.id, '/versions/first')).set(editor()).expect(422);
    await request(t.app).post(at(card.id, '/versions/1/restore')).set(editor()).send({ extra: true }).expect(422);
    await request(t.app).get(at(card.id, '/versions?cursor=bad')).set(editor()).expect(400);
  });
});

describe('page history', () => {
  it('keeps versions of title, seo and template; compares and restores them', async () => {
    const page = (
      await request(t.app)
        .post(`/${site.slug}/pages/`)
        .set(editor())
        .send({ slug: `h-${unique()}`, title: 'First', status: 'published' })
        .expect(201)
    ).body as { id: string };
    await request(t.app).patch(pageAt(page.id)).set(editor()).send({ title: 'Second', template: 'wide' }).expect(200);
    await request(t.app).post(pageAt(page.id, '/publish')).set(editor()).expect(200);
    const list = await request(t.app).get(pageAt(page.id, '/versions')).set(c.reader).expect(200);
    expect(list.body.items.map((v: { reason: string; changed: string[] }) => [v.reason, v.changed])).toEqual([
      ['publish', []],
      ['save', ['title', 'template']],
      ['publish', ['title']],
    ]);
    const one = await request(t.app).get(pageAt(page.id, '/versions/1')).set(c.reader).expect(200);
    expect(one.body.content).toEqual({ title: 'First', seo: {}, template: null });
    const compared = await request(t.app)
      .get(pageAt(page.id, '/versions/compare?from=1&to=3'))
      .set(c.reader)
      .expect(200);
    expect(compared.body.changes).toEqual([
      { field: 'title', from: 'First', to: 'Second' },
      { field: 'template', from: null, to: 'wide' },
    ]);
    const restored = await request(t.app).post(pageAt(page.id, '/versions/1/restore')).set(editor()).expect(200);
    expect(restored.body).toMatchObject({ title: 'Second', draft: { title: 'First', template: null } });
  });

  it('answers 401, 403, 404 and 422', async () => {
    const page = (
      await request(t.app)
        .post(`/${site.slug}/pages/`)
        .set(editor())
        .send({ slug: `h-${unique()}`, title: 'T' })
        .expect(201)
    ).body as { id: string };
    await request(t.app).get(pageAt(page.id, '/versions')).expect(401);
    await request(t.app).post(pageAt(page.id, '/versions/1/restore')).set(c.author.auth).expect(403);
    await request(t.app).get(`/${c.b.site.slug}/pages/${page.id}/versions/1`).set(c.b.editor.auth).expect(404);
    await request(t.app).get(pageAt(page.id, '/versions/compare?from=1&to=x')).set(editor()).expect(422);
  });
});
