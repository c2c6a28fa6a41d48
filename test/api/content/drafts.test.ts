// Drafts beside the live version (issue 41) through HTTP: a published
// element's or page's edits wait in its draft, checked by the draft rules,
// shown beside the live fields with what differs; publish (now or at a time,
// by the publish rules, If-Match) and discard are explicit; status changes by
// PATCH work as before. Who may: readers read, authors change only their own.
import request from 'supertest';
import { z } from 'zod';
import { publishDueElement } from '../../../core/content/element-drafts.ts';
import { publishDuePage } from '../../../core/content/page-drafts.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, createElement, createType, pathsOf, type ContentCast } from '../../helpers/content.ts';
import { unique } from '../../helpers/identity.ts';
import { startTestWorker } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

const at = (id: string, rest = '') => `/${site.slug}/elements/${id}${rest}`;
const pageAt = (id: string, rest = '') => `/${site.slug}/pages/${id}${rest}`;
const editor = () => c.a.editor.auth;
const future = () => new Date(Date.now() + 3_600_000).toISOString();

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = c.a.site;
  await createType(t, editor(), site, {
    api_id: 'note',
    fields: [
      { id: 'title', label: 'Title', type: 'text', required: true },
      { id: 'code', label: 'Code', type: 'slug', unique: true },
      { id: 'rating', label: 'Rating', type: 'number' },
    ],
  });
});
afterAll(() => stopTestApp(t));

const publishedNote = (data: Record<string, unknown> = {}) =>
  createElement(t, editor(), site, {
    type: 'note',
    name: 'Live',
    data: { title: 'Live', ...data },
    status: 'published',
  });

const queuedJob = (key: string) =>
  t.services.db.maybeOne(sql.type(z.object({ run_at: z.string() }))`
    select run_at::text from graphile_worker.jobs where key = ${key}`);

describe('element drafts', () => {
  it('keeps a published element’s edits in its draft, shows both and what differs', async () => {
    const note = await publishedNote({ rating: 1 });
    const saved = await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ name: 'Drafted', data: { title: 'Draft title' } })
      .expect(200);
    expect(saved.headers.etag).toBe('"2"');
    expect(saved.body).toMatchObject({
      name: 'Live',
      data: { title: 'Live', rating: 1 },
      status: 'published',
      has_draft: true,
      draft: { name: 'Drafted', data: { title: 'Draft title', rating: 1 }, updated_by: c.a.editor.user.id },
      publish_at: null,
    });
    // A second save starts from the draft.
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { rating: 5 } })
      .expect(200);
    const read = await request(t.app).get(at(note.id)).set(c.reader).expect(200);
    expect(read.body.draft.data).toEqual({ title: 'Draft title', rating: 5 });
    expect(read.body.data).toEqual({ title: 'Live', rating: 1 });
    const listed = await request(t.app).get(`/${site.slug}/elements/?type=note`).set(c.reader).expect(200);
    expect(listed.body.items.find((item: { id: string }) => item.id === note.id).has_draft).toBe(true);
    const drafted = await request(t.app).get(`/${site.slug}/elements/?has_draft=true`).set(c.reader).expect(200);
    expect(drafted.body.items.map((item: { id: string }) => item.id)).toContain(note.id);
    const clean = await request(t.app).get(`/${site.slug}/elements/?has_draft=false`).set(c.reader).expect(200);
    expect(clean.body.items.map((item: { id: string }) => item.id)).not.toContain(note.id);
    await request(t.app).get(`/${site.slug}/elements/?has_draft=maybe`).set(c.reader).expect(422);
    const diff = await request(t.app).get(at(note.id, '/draft-diff')).set(c.reader).expect(200);
    expect(diff.body).toEqual({
      has_draft: true,
      changes: [
        { field: 'name', live: 'Live', draft: 'Drafted' },
        { field: 'data.rating', live: 1, draft: 5 },
        { field: 'data.title', live: 'Live', draft: 'Draft title' },
      ],
    });
  });

  it('checks a draft by the draft rules and publishes it by all of them, with If-Match', async () => {
    const other = await publishedNote({ code: `taken-${unique()}` });
    const note = await publishedNote();
    // Required fields may wait in a draft; a unique value held live by another element may not.
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: '' } })
      .expect(200);
    const taken = await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { code: other.data.code } })
      .expect(422);
    expect(pathsOf(taken.body)).toEqual(['body.data.code']);
    const incomplete = await request(t.app).post(at(note.id, '/publish')).set(editor()).expect(422);
    expect(pathsOf(incomplete.body)).toEqual(['body.data.title']);
    const fixed = await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'New' } })
      .expect(200);
    await request(t.app).post(at(note.id, '/publish')).set(editor()).set('If-Match', '"1"').expect(412);
    const published = await request(t.app)
      .post(at(note.id, '/publish'))
      .set(editor())
      .set('If-Match', fixed.headers.etag!)
      .expect(200);
    expect(published.body).toMatchObject({
      data: { title: 'New' },
      has_draft: false,
      draft: null,
      status: 'published',
    });
    expect(published.headers.etag).toBe(`"${published.body.version}"`);
    await request(t.app).post(at(note.id, '/publish')).set(editor()).expect(409);
  });

  it('discards a draft, leaving the live element as it was', async () => {
    const note = await publishedNote();
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'Never' } })
      .expect(200);
    const discarded = await request(t.app).delete(at(note.id, '/draft')).set(editor()).expect(200);
    expect(discarded.body).toMatchObject({ data: { title: 'Live' }, has_draft: false, draft: null });
    expect((await request(t.app).get(at(note.id, '/draft-diff')).set(editor()).expect(200)).body).toEqual({
      has_draft: false,
      changes: [],
    });
    // A draft equal to the live content is no draft.
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'Live' } })
      .expect(200);
    expect((await request(t.app).get(at(note.id)).set(editor())).body.has_draft).toBe(false);
  });

  it('edits an unpublished element in place, and PATCH status changes work as before', async () => {
    const draft = await createElement(t, editor(), site, { type: 'note', data: { title: 'Draft' } });
    const edited = await request(t.app)
      .patch(at(draft.id))
      .set(editor())
      .send({ data: { title: 'Edited' } })
      .expect(200);
    expect(edited.body).toMatchObject({ data: { title: 'Edited' }, has_draft: false });
    const published = await request(t.app).post(at(draft.id, '/publish')).set(editor()).expect(200);
    expect(published.body).toMatchObject({ status: 'published', published_at: expect.any(String) });
    // status published with a draft publishes the draft and what is given.
    await request(t.app).patch(at(draft.id)).set(editor()).send({ name: 'Renamed' }).expect(200);
    const both = await request(t.app)
      .patch(at(draft.id))
      .set(editor())
      .send({ status: 'published', data: { rating: 2 } })
      .expect(200);
    expect(both.body).toMatchObject({ name: 'Renamed', data: { title: 'Edited', rating: 2 }, has_draft: false });
    // Unpublishing folds the draft into the element's own fields.
    await request(t.app)
      .patch(at(draft.id))
      .set(editor())
      .send({ data: { title: 'Folded' } })
      .expect(200);
    const unpublished = await request(t.app).patch(at(draft.id)).set(editor()).send({ status: 'draft' }).expect(200);
    expect(unpublished.body).toMatchObject({ status: 'draft', data: { title: 'Folded' }, has_draft: false });
  });

  it('plans a publication, runs it once when due, and cancels it', async () => {
    const note = await publishedNote();
    const when = future();
    await request(t.app).post(at(note.id, '/publish')).set(editor()).send({ at: when }).expect(422);
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'Later' } })
      .expect(200);
    const past = await request(t.app)
      .post(at(note.id, '/publish'))
      .set(editor())
      .send({ at: '2020-01-01T00:00:00Z' })
      .expect(422);
    expect(pathsOf(past.body)).toEqual(['body.publish_at']);
    const planned = await request(t.app).post(at(note.id, '/publish')).set(editor()).send({ at: when }).expect(200);
    expect(Date.parse(planned.body.publish_at)).toBe(Date.parse(when));
    expect(await queuedJob(`content-publish:element:${note.id}`)).not.toBeNull();
    // Not due yet: the job does nothing.
    expect(await publishDueElement(t.services.db, note.id)).toEqual({ published: false });
    await t.services.db.query(sql.typeAlias('void')`
      update content_elements set publish_at = now() - interval '1 second' where id = ${note.id}`);
    expect(await publishDueElement(t.services.db, note.id)).toEqual({ published: true });
    expect(await publishDueElement(t.services.db, note.id)).toEqual({ published: false });
    const after = await request(t.app).get(at(note.id)).set(editor()).expect(200);
    expect(after.body).toMatchObject({ data: { title: 'Later' }, has_draft: false, publish_at: null });

    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'Again' } })
      .expect(200);
    await request(t.app).patch(at(note.id)).set(editor()).send({ publish_at: when }).expect(200);
    const cancelled = await request(t.app).patch(at(note.id)).set(editor()).send({ publish_at: null }).expect(200);
    expect(cancelled.body.publish_at).toBeNull();
    expect(await queuedJob(`content-publish:element:${note.id}`)).toBeNull();
  });

  it('drops a due publication whose draft no longer passes the publish rules', async () => {
    const note = await publishedNote();
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: '' } })
      .expect(200);
    await request(t.app).post(at(note.id, '/publish')).set(editor()).send({ at: future() }).expect(200);
    await t.services.db.query(sql.typeAlias('void')`
      update content_elements set publish_at = now() - interval '1 second' where id = ${note.id}`);
    const result = await publishDueElement(t.services.db, note.id);
    expect(result.published).toBe(false);
    expect(result.problem).toMatch(/not valid/);
    const after = await request(t.app).get(at(note.id)).set(editor()).expect(200);
    expect(after.body).toMatchObject({ data: { title: 'Live' }, has_draft: true, publish_at: null });
  });

  it('takes a force-deleted element out of a draft that refers to it, as out of the live data', async () => {
    const linkerType = await createType(t, editor(), site, {
      api_id: `linker_${unique()}`,
      fields: [{ id: 'target', label: 'Target', type: 'reference' }],
    });
    const target = await publishedNote();
    const linker = await createElement(t, editor(), site, {
      type: linkerType.id,
      data: { target: target.id },
      status: 'published',
    });
    await request(t.app).patch(at(linker.id)).set(editor()).send({ name: 'Drafted' }).expect(200);
    await request(t.app).delete(at(target.id, '/force')).set(editor()).expect(204);
    const after = await request(t.app).get(at(linker.id)).set(editor()).expect(200);
    expect(after.body).toMatchObject({ data: { target: null }, draft: { name: 'Drafted', data: { target: null } } });
    await request(t.app).post(at(linker.id, '/publish')).set(editor()).expect(200);
  });

  it('answers 401, 403, 404 and 422 as the element’s own routes do', async () => {
    const note = await publishedNote();
    await request(t.app).get(at(note.id, '/draft-diff')).expect(401);
    await request(t.app).post(at(note.id, '/publish')).expect(401);
    // Authors change only what they made; reading is for everyone who reaches the site.
    await request(t.app).get(at(note.id, '/draft-diff')).set(c.author.auth).expect(200);
    await request(t.app).post(at(note.id, '/publish')).set(c.author.auth).expect(403);
    await request(t.app).delete(at(note.id, '/draft')).set(c.author.auth).expect(403);
    await request(t.app).post(at(note.id, '/publish')).set(c.reader).expect(403);
    const own = await createElement(t, c.author.auth, site, { type: 'note', data: { title: 'Mine' } });
    await request(t.app).post(at(own.id, '/publish')).set(c.author.auth).expect(200);
    // Another tenant's site does not have it.
    const elsewhere = `/${c.b.site.slug}/elements/${note.id}`;
    await request(t.app).get(`${elsewhere}/draft-diff`).set(c.b.editor.auth).expect(404);
    await request(t.app).post(`${elsewhere}/publish`).set(c.b.editor.auth).expect(404);
    await request(t.app).delete(`${elsewhere}/draft`).set(c.b.editor.auth).expect(404);
    const bad = await request(t.app).post(at(note.id, '/publish')).set(editor()).send({ at: 'soon' }).expect(422);
    expect(pathsOf(bad.body)).toContain('body.at');
    await request(t.app).post(at(note.id, '/publish')).set(editor()).send({ when: future() }).expect(422);
    await request(t.app).patch(at(note.id)).set(editor()).send({ publish_at: 'soon' }).expect(422);
  });
});

describe('scheduled publication by the worker', () => {
  it('publishes an element’s draft and a draft page at their time, once', async () => {
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
    const note = await publishedNote();
    await request(t.app)
      .patch(at(note.id))
      .set(editor())
      .send({ data: { title: 'Scheduled' } })
      .expect(200);
    await request(t.app)
      .post(at(note.id, '/publish'))
      .set(editor())
      .send({ at: soon(800) })
      .expect(200);
    const page = (
      await request(t.app)
        .post(`/${site.slug}/pages/`)
        .set(editor())
        .send({ slug: `s-${unique()}`, title: 'Soon' })
        .expect(201)
    ).body as { id: string };
    await request(t.app)
      .patch(pageAt(page.id))
      .set(editor())
      .send({ publish_at: soon(900) })
      .expect(200);
    // No worker runs until after the time (a restart, a deploy).
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const worker = await startTestWorker(t);
    try {
      const element = await pollUntil(
        async () => (await request(t.app).get(at(note.id)).set(editor())).body,
        (body) => body.has_draft === false,
        { tries: 100, everyMs: 100 },
      );
      expect(element).toMatchObject({ data: { title: 'Scheduled' }, publish_at: null });
      const published = await pollUntil(
        async () => (await request(t.app).get(pageAt(page.id)).set(editor())).body,
        (body) => body.status === 'published',
        { tries: 100, everyMs: 100 },
      );
      expect(published).toMatchObject({ title: 'Soon', publish_at: null });
    } finally {
      await worker.stop();
    }
    const versions = await request(t.app).get(at(note.id, '/versions?reason=publish&limit=1')).set(editor());
    expect(versions.body.items[0]).toMatchObject({ reason: 'publish', created_by: null });
  });
});

describe('page drafts', () => {
  const newPage = async (body: Record<string, unknown> = {}) =>
    (
      await request(t.app)
        .post(`/${site.slug}/pages/`)
        .set(editor())
        .send({ slug: `p-${unique()}`, title: 'Live title', status: 'published', ...body })
        .expect(201)
    ).body as { id: string; slug: string; path: string; version: number };

  it('keeps title, seo and template in the draft; the slug changes the live page', async () => {
    const page = await newPage();
    const slug = `moved-${unique()}`;
    const saved = await request(t.app)
      .patch(pageAt(page.id))
      .set(editor())
      .send({ title: 'Draft title', seo: { description: 'D' }, slug })
      .expect(200);
    expect(saved.body).toMatchObject({
      title: 'Live title',
      seo: {},
      slug,
      path: `/${slug}`,
      has_draft: true,
      draft: { title: 'Draft title', seo: { description: 'D' }, template: null, updated_by: c.a.editor.user.id },
    });
    const diff = await request(t.app).get(pageAt(page.id, '/draft-diff')).set(c.reader).expect(200);
    expect(diff.body.changes).toEqual([
      { field: 'title', live: 'Live title', draft: 'Draft title' },
      { field: 'seo.description', live: null, draft: 'D' },
    ]);
    const drafted = await request(t.app).get(`/${site.slug}/pages/?has_draft=true`).set(c.reader).expect(200);
    expect(drafted.body.items.map((item: { id: string }) => item.id)).toEqual([page.id]);
    const full = await request(t.app).get(pageAt(page.id)).set(editor()).expect(200);
    expect(full.body).toMatchObject({ has_draft: true, elements: [] });
    const published = await request(t.app).post(pageAt(page.id, '/publish')).set(editor()).expect(200);
    expect(published.body).toMatchObject({ title: 'Draft title', seo: { description: 'D' }, has_draft: false });
    await request(t.app).post(pageAt(page.id, '/publish')).set(editor()).expect(409);
    await request(t.app).patch(pageAt(page.id)).set(editor()).send({ title: 'Gone' }).expect(200);
    const discarded = await request(t.app).delete(pageAt(page.id, '/draft')).set(editor()).expect(200);
    expect(discarded.body).toMatchObject({ title: 'Draft title', has_draft: false });
  });

  it('edits an unpublished page in place and plans a publication', async () => {
    const page = await newPage({ status: 'draft' });
    const edited = await request(t.app).patch(pageAt(page.id)).set(editor()).send({ title: 'In place' }).expect(200);
    expect(edited.body).toMatchObject({ title: 'In place', has_draft: false });
    const when = future();
    await request(t.app).post(pageAt(page.id, '/publish')).set(editor()).send({ at: when }).expect(200);
    expect(await queuedJob(`content-publish:page:${page.id}`)).not.toBeNull();
    await t.services.db.query(sql.typeAlias('void')`
      update pages set publish_at = now() - interval '1 second' where id = ${page.id}`);
    expect(await publishDuePage(t.services.db, page.id)).toEqual({ published: true });
    expect(await publishDuePage(t.services.db, page.id)).toEqual({ published: false });
    const after = await request(t.app).get(pageAt(page.id)).set(editor()).expect(200);
    expect(after.body).toMatchObject({ status: 'published', title: 'In place', publish_at: null });
  });

  it('answers 401, 403, 404 and 422', async () => {
    const page = await newPage();
    await request(t.app).get(pageAt(page.id, '/draft-diff')).expect(401);
    await request(t.app).delete(pageAt(page.id, '/draft')).expect(401);
    await request(t.app).post(pageAt(page.id, '/publish')).set(c.author.auth).expect(403);
    await request(t.app).delete(pageAt(page.id, '/draft')).set(c.author.auth).expect(403);
    const elsewhere = `/${c.b.site.slug}/pages/${page.id}`;
    await request(t.app).get(`${elsewhere}/draft-diff`).set(c.b.editor.auth).expect(404);
    await request(t.app).post(`${elsewhere}/publish`).set(c.b.editor.auth).expect(404);
    await request(t.app).post(pageAt(page.id, '/publish')).set(editor()).send({ at: 12 }).expect(422);
    await request(t.app).patch(pageAt(page.id)).set(editor()).send({ title: 'x', publish_at: 'never' }).expect(422);
  });
});
