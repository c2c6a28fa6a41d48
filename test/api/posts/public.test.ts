// Public posts through HTTP: published posts of public sites only, newest
// first, each post and its translations served once in the best locale of
// the fallback chain, by id or slug; Markdown rendered and sanitised; ETag,
// 304 and Surrogate-Key; and every change served from the next read on.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, withLocales, type ContentCast } from '../../helpers/content.ts';
import { newSite } from '../../helpers/factories.ts';
import { idsOf, unique } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

type Served = { id: string; slug: string; title: string; served_locale: string; body_html?: string };

const pub = (path: string) => request(t.app).get(`/public/${site.slug}${path}`);

async function makePublic(target: Site): Promise<void> {
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${target.id}`);
  await accessChangeHeard(t);
}

async function post(body: Record<string, unknown>) {
  const res = await request(t.app)
    .post(`/${site.slug}/posts/`)
    .set(c.a.admin.auth)
    .send({ title: `Post ${unique()}`, status: 'published', ...body });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body as { id: string; slug: string; version: number };
}

const patch = (id: string, body: object) =>
  request(t.app).patch(`/${site.slug}/posts/${id}`).set(c.a.admin.auth).send(body).expect(200);

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de', 'de-CH']);
  await makePublic(site);
});
afterAll(() => stopTestApp(t));

describe('public posts', () => {
  it('lists published posts newest first, each once in the best locale, by tag and category, in pages', async () => {
    const first = await post({ title: 'First', tags: ['news'], categories: ['blog'] });
    const second = await post({ title: 'Second', tags: ['news'] });
    await post({ title: 'Hidden draft', status: 'draft', tags: ['news'] });
    await post({ title: 'Later', status: 'scheduled', scheduled_for: new Date(Date.now() + 3_600_000).toISOString() });
    await post({ title: 'Zweiter', master_id: second.id, locale: 'de' });
    const swiss = await post({ title: 'Erster (CH)', master_id: first.id, locale: 'de-CH', status: 'draft' });

    const english = await pub('/posts?tag=news').expect(200);
    expect(english.body.items.map((item: Served) => item.title)).toEqual(['Second', 'First']);
    expect(english.body.items[0]).not.toHaveProperty('body_html');
    const german = await pub('/posts?tag=news&locale=de-CH').expect(200);
    expect(german.body.items.map((item: Served) => [item.title, item.served_locale])).toEqual([
      ['Zweiter', 'de'],
      ['First', 'en'],
    ]);
    expect(idsOf((await pub('/posts?category=blog').expect(200)).body)).toEqual([first.id]);
    // A translation published later is served from the next read on, as of when it was published.
    await patch(swiss.id, { status: 'published' });
    const now = await pub('/posts?tag=news&locale=de-CH').expect(200);
    expect(now.body.items.map((item: Served) => item.title)).toEqual(['Erster (CH)', 'Zweiter']);

    const one = await pub('/posts?limit=1').expect(200);
    expect(one.body.items).toHaveLength(1);
    const next = await pub(`/posts?limit=1&cursor=${one.body.next_cursor}`).expect(200);
    expect(next.body.items[0].id).not.toBe(one.body.items[0].id);
    expect((await pub('/posts?limit=1&include_total=true').expect(200)).body.total).toBe(
      (await pub('/posts?limit=200').expect(200)).body.items.length,
    );
    await pub('/posts?limit=0').expect(422);
  });

  it('reads a post by its id, a translation’s id or its slug, in the locale asked, its Markdown rendered and sanitised', async () => {
    const master = await post({
      title: 'Markdown',
      slug: 'markdown-post',
      body: '# Title\n\nSome *text* <script>alert(1)</script> [x](javascript:alert(1)) <img src="a.png" onerror="x()">',
    });
    const german = await post({ title: 'Auf Deutsch', slug: 'auf-deutsch', master_id: master.id, locale: 'de' });
    const byId = await pub(`/posts/${master.id}`).expect(200);
    expect(byId.body).toMatchObject({ id: master.id, served_locale: 'en', title: 'Markdown' });
    expect(byId.body.body_html).toContain('<h1>Title</h1>');
    expect(byId.body.body_html).toContain('<em>text</em>');
    expect(byId.body.body_html).not.toMatch(/script|javascript:|onerror/);
    expect((await pub(`/posts/${german.id}`).expect(200)).body.id).toBe(master.id);
    expect((await pub('/posts/auf-deutsch?locale=de').expect(200)).body).toMatchObject({
      id: german.id,
      served_locale: 'de',
    });
    // A slug of another locale still names the post; it is served in the locale asked.
    expect((await pub('/posts/auf-deutsch?locale=en').expect(200)).body.served_locale).toBe('en');
    expect((await pub('/posts/markdown-post?locale=de').expect(200)).body.title).toBe('Auf Deutsch');
    const html = await post({ title: 'HTML', body_format: 'html', body: '<p>kept <b>as</b> is</p>' });
    expect((await pub(`/posts/${html.id}`).expect(200)).body.body_html).toBe('<p>kept <b>as</b> is</p>');
  });

  it('is a 404 for a draft, an unknown slug, another site’s post and a private site', async () => {
    const draft = await post({ status: 'draft' });
    await pub(`/posts/${draft.id}`).expect(404);
    await pub('/posts/no-such-post').expect(404);
    const other = await newSite(t, c.a.tenant);
    await makePublic(other);
    const elsewhere = await request(t.app)
      .post(`/${other.slug}/posts/`)
      .set(c.a.admin.auth)
      .send({ title: 'Elsewhere', status: 'published' })
      .expect(201);
    await pub(`/posts/${elsewhere.body.id}`).expect(404);
    const hidden = await newSite(t, c.a.tenant);
    await request(t.app).get(`/public/${hidden.slug}/posts`).expect(404);
  });

  it('answers with an ETag, 304 for it, and the Surrogate-Key of the post, and drops it when the post changes', async () => {
    const item = await post({ title: 'Cached' });
    const first = await pub(`/posts/${item.id}`).expect(200);
    expect(first.headers['surrogate-key']).toContain(`post:${item.id}`);
    expect(first.headers['cache-control']).toMatch(/public/);
    await pub(`/posts/${item.id}`).set('If-None-Match', first.headers.etag!).expect(304);
    await patch(item.id, { title: 'Changed' });
    const changed = await pub(`/posts/${item.id}`).set('If-None-Match', first.headers.etag!).expect(200);
    expect(changed.body.title).toBe('Changed');
    await patch(item.id, { status: 'archived' });
    await pub(`/posts/${item.id}`).expect(404);
  });
});
