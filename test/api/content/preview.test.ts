// Preview tokens through HTTP: made, listed and revoked by those who write a
// site's content; sent as `Preview-Token` to the public delivery endpoints,
// they show drafts as if published — a draft beside a published element or
// page, elements and pages never published, scheduled posts — with the same
// fallback and depth, uncached (private, no-store), while the same URLs
// without the token keep serving, and caching, the published content. A
// token that is unknown, expired, revoked or another site's is a 401.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  withLocales,
  type ContentCast,
  type ElementRow,
} from '../../helpers/content.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;
let ada: ElementRow;
let story: ElementRow;
let fresh: ElementRow;
let pageId: string;
let hiddenPageId: string;
let token: string;

const pub = (path: string) => request(t.app).get(`/public/${site.slug}${path}`);
const preview = (path: string, with_ = token) => pub(path).set('Preview-Token', with_);
const editor = () => c.a.editor.auth;

async function makeToken(auth: Record<string, string>, target = site, body: object = { name: 'Staging' }) {
  const res = await request(t.app).post(`/${target.slug}/preview-tokens`).set(auth).send(body).expect(201);
  return res.body as { id: string; token: string; hint: string; expires_at: string };
}

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de']);
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await accessChangeHeard(t);
  await createType(t, editor(), site, { api_id: 'person', fields: [{ id: 'full_name', label: 'Name', type: 'text' }] });
  await createType(t, editor(), site, {
    api_id: 'article',
    fields: [
      { id: 'title', label: 'Title', type: 'text', required: true, localized: true },
      { id: 'author', label: 'Author', type: 'reference', validations: { reference_types: ['person'] } },
    ],
  });
  ada = await createElement(t, editor(), site, { type: 'person', data: { full_name: 'Ada' }, status: 'published' });
  story = await createElement(t, editor(), site, {
    type: 'article',
    name: 'Story',
    data: { title: 'Hello', author: ada.id },
    status: 'published',
  });
  await createElement(t, editor(), site, {
    master_id: story.id,
    locale: 'de',
    data: { title: 'Hallo' },
    status: 'published',
  });
  fresh = await createElement(t, editor(), site, { type: 'article', name: 'Fresh', data: { title: 'Never out' } });
  const page = await request(t.app)
    .post(`/${site.slug}/pages/`)
    .set(editor())
    .send({ title: 'Home', slug: 'home', status: 'published' })
    .expect(201);
  pageId = page.body.id;
  await request(t.app)
    .post(`/${site.slug}/pages/${pageId}/elements`)
    .set(editor())
    .send({ element_id: story.id })
    .expect(201);
  const hidden = await request(t.app)
    .post(`/${site.slug}/pages/`)
    .set(editor())
    .send({ title: 'Coming soon', slug: 'soon' })
    .expect(201);
  hiddenPageId = hidden.body.id;
  // Drafts beside the published story (its name and title) and the page (its title), as an edit leaves them.
  await t.services.db.query(sql.typeAlias('void')`
    update content_elements set draft = ${sql.jsonb({ name: 'Story v2', data: { title: 'Hello again', author: ada.id }, schema_version: story.schema_version })},
      draft_updated_at = now() where id = ${story.id}`);
  await t.services.db.query(sql.typeAlias('void')`
    update pages set draft = ${sql.jsonb({ title: 'Home, redone', seo: {}, template: null })}, draft_updated_at = now()
    where id = ${pageId}`);
  token = (await makeToken(editor())).token;
});
afterAll(() => stopTestApp(t));

type Served = { id: string; name: string; served_locale: string; data: Record<string, unknown> };

describe('reading drafts with a preview token', () => {
  it('shows the draft beside a published element, with references resolved as published reads are', async () => {
    const live = await pub(`/elements/${story.id}`).expect(200);
    expect(live.body).toMatchObject({ name: 'Story', data: { title: 'Hello', author: { id: ada.id } } });
    const res = await preview(`/elements/${story.id}`).expect(200);
    expect(res.body).toMatchObject({
      id: story.id,
      type: 'article',
      name: 'Story v2',
      served_locale: 'en',
      data: { title: 'Hello again', author: { id: ada.id, data: { full_name: 'Ada' } } },
    });
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['surrogate-key']).toContain(`element:${story.id}`);
    // The public answer was not touched: still the published one, still cacheable.
    const again = await pub(`/elements/${story.id}`).expect(200);
    expect(again.body).toEqual(live.body);
    expect(again.headers['cache-control']).toMatch(/^public/);
  });

  it('keeps the locale fallback: a translation published beside the draft master still serves its locale', async () => {
    const res = await preview(`/elements/${story.id}?locale=de`).expect(200);
    expect(res.body).toMatchObject({ served_locale: 'de', name: 'Story v2', data: { title: 'Hallo' } });
  });

  it('shows elements never published, in lists and reads', async () => {
    await pub(`/elements/${fresh.id}`).expect(404);
    const read = await preview(`/elements/${fresh.id}`).expect(200);
    expect(read.body).toMatchObject({ name: 'Fresh', data: { title: 'Never out' } });
    const list = await preview('/elements?type=article').expect(200);
    expect((list.body.items as Served[]).map((item) => item.name).sort()).toEqual(['Fresh', 'Story v2']);
    const live = await pub('/elements?type=article').expect(200);
    expect((live.body.items as Served[]).map((item) => item.name)).toEqual(['Story']);
  });

  it('shows a page’s draft title with its elements’ drafts, and pages never published, in the navigation too', async () => {
    const live = await pub(`/pages/${pageId}`).expect(200);
    expect(live.body.title).toBe('Home');
    expect(live.body.elements[0].element.name).toBe('Story');
    const res = await preview(`/pages/${pageId}`).expect(200);
    expect(res.body.title).toBe('Home, redone');
    expect(res.body.elements[0].element).toMatchObject({ name: 'Story v2', data: { title: 'Hello again' } });
    await pub(`/pages/${hiddenPageId}`).expect(404);
    await preview(`/pages/${hiddenPageId}`).expect(200);
    const navigation = await preview('/navigation').expect(200);
    expect((navigation.body.items as { title: string }[]).map((node) => node.title).sort()).toEqual([
      'Coming soon',
      'Home, redone',
    ]);
    const byPath = await preview('/pages?path=/soon').expect(200);
    expect(byPath.body.items).toHaveLength(1);
  });

  it('answers 304 to the ETag of the same preview, and a new body once the draft changes', async () => {
    const first = await preview(`/elements/${story.id}`).expect(200);
    await preview(`/elements/${story.id}`).set('If-None-Match', first.headers.etag!).expect(304);
    await t.services.db.query(sql.typeAlias('void')`
      update content_elements set draft = jsonb_set(draft, '{name}', '"Story v3"') where id = ${story.id}`);
    const changed = await preview(`/elements/${story.id}`).set('If-None-Match', first.headers.etag!).expect(200);
    expect(changed.body.name).toBe('Story v3');
  });

  it('shows scheduled and draft posts', async () => {
    await t.services.db.query(sql.typeAlias('void')`
      insert into posts (tenant_id, site_id, title, slug, locale, status, scheduled_for)
      values (${site.tenant_id}, ${site.id}, 'Tomorrow', 'tomorrow', 'en', 'scheduled', now() + interval '1 day')`);
    const live = await pub('/posts').expect(200);
    expect(live.body.items).toHaveLength(0);
    const res = await preview('/posts').expect(200);
    expect((res.body.items as { title: string }[]).map((post) => post.title)).toEqual(['Tomorrow']);
    await preview('/posts/tomorrow').expect(200);
  });

  it('previews a site that is not public yet', async () => {
    const closed = c.b.site;
    const own = await makeToken(c.b.editor.auth, closed);
    await request(t.app).get(`/public/${closed.slug}/navigation`).expect(404);
    await request(t.app).get(`/public/${closed.slug}/navigation`).set('Preview-Token', own.token).expect(200);
  });

  it('never leaves a trace: the live tables are untouched and the next public read is as before', async () => {
    const drafts = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from content_elements where site_id = ${site.id} and status = 'published'`);
    await preview('/elements').expect(200);
    const after = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from content_elements where site_id = ${site.id} and status = 'published'`);
    expect(after).toBe(drafts);
    // Public reads on connections that previewed before plan against the live tables again.
    for (let i = 0; i < 8; i++) {
      await preview(`/pages/${pageId}`).expect(200);
      const res = await pub(`/pages/${pageId}?i=${i}`).expect(200);
      expect(res.body.title).toBe('Home');
    }
  });
});

describe('previewing an edit made through the API', () => {
  it('shows the edit to the token while the public sees the published element, until it is published', async () => {
    const person = await createElement(t, editor(), site, {
      type: 'person',
      data: { full_name: 'Grace' },
      status: 'published',
    });
    await request(t.app)
      .patch(`/${site.slug}/elements/${person.id}`)
      .set(editor())
      .send({ data: { full_name: 'Grace Hopper' } })
      .expect(200);
    expect((await pub(`/elements/${person.id}`).expect(200)).body.data).toEqual({ full_name: 'Grace' });
    expect((await preview(`/elements/${person.id}`).expect(200)).body.data).toEqual({ full_name: 'Grace Hopper' });
    await request(t.app).post(`/${site.slug}/elements/${person.id}/publish`).set(editor()).send({}).expect(200);
    expect((await pub(`/elements/${person.id}`).expect(200)).body.data).toEqual({ full_name: 'Grace Hopper' });
  });
});

describe('refused tokens', () => {
  it('refuses an unknown token, another site’s, an expired one and a revoked one with 401', async () => {
    const refused = await preview(`/elements/${story.id}`, 'cpv_nonsense').expect(401);
    expect(refused.headers['content-type']).toMatch(/problem\+json/);
    const other = await makeToken(c.b.editor.auth, c.b.site);
    await preview(`/elements/${story.id}`, other.token).expect(401);
    const short = await makeToken(editor(), site, { name: 'Short', expires_in_seconds: 60 });
    await t.services.db.query(sql.typeAlias('void')`
      update preview_tokens set expires_at = now() - interval '1 second' where id = ${short.id}`);
    await preview(`/elements/${story.id}`, short.token).expect(401);
    const doomed = await makeToken(editor());
    await preview(`/elements/${story.id}`, doomed.token).expect(200);
    await request(t.app).delete(`/${site.slug}/preview-tokens/${doomed.id}`).set(editor()).expect(204);
    await preview(`/elements/${story.id}`, doomed.token).expect(401);
  });
});

describe('managing preview tokens', () => {
  it('shows the token once, then lists it by its hint, without the secret', async () => {
    const made = await makeToken(editor(), site, { name: 'Review', expires_in_seconds: 600 });
    expect(made.token).toMatch(/^cpv_[A-Za-z0-9_-]{40}$/);
    expect(made.hint).toBe(`cpv_…${made.token.slice(-4)}`);
    expect(Date.parse(made.expires_at) - Date.now()).toBeGreaterThan(500_000);
    const list = await request(t.app).get(`/${site.slug}/preview-tokens`).set(editor()).expect(200);
    const listed = (list.body.items as { id: string }[]).find((item) => item.id === made.id);
    expect(listed).toMatchObject({ name: 'Review', hint: made.hint });
    expect(JSON.stringify(list.body)).not.toContain(made.token);
  });

  it('lets authors and content writers make them, not readers; 401 without a token', async () => {
    await makeToken(c.author.auth);
    await makeToken(c.writer);
    await request(t.app).post(`/${site.slug}/preview-tokens`).set(c.reader).send({ name: 'x' }).expect(403);
    await request(t.app).get(`/${site.slug}/preview-tokens`).set(c.reader).expect(403);
    await request(t.app).post(`/${site.slug}/preview-tokens`).send({ name: 'x' }).expect(401);
  });

  it('answers 404 for another tenant’s site and token', async () => {
    const theirs = await makeToken(c.b.editor.auth, c.b.site);
    await request(t.app).post(`/${c.b.site.slug}/preview-tokens`).set(editor()).send({ name: 'x' }).expect(404);
    await request(t.app).delete(`/${site.slug}/preview-tokens/${theirs.id}`).set(editor()).expect(404);
    await request(t.app).delete(`/${c.b.site.slug}/preview-tokens/${theirs.id}`).set(editor()).expect(404);
  });

  it('refuses a bad body with 422', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'x', expires_in_seconds: 30 },
      { name: 'x', expires_in_seconds: 8 * 86400 },
      { name: 'x', extra: 1 },
    ]) {
      await request(t.app).post(`/${site.slug}/preview-tokens`).set(editor()).send(body).expect(422);
    }
  });
});
