// GET /{site}/translations/{kind}/{id} and POST .../sync-translations for the
// four kinds: per localized field whether a translation is stale after a
// master edit (and current again once a person edits it), the locales still
// missing, and a sync that copies the non-localized fields and never writes
// a localized one.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, createType, mediaRow, withLocales, type ContentCast } from '../../helpers/content.ts';
import { unique, type Auth } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de', 'fr']);
});
afterAll(() => stopTestApp(t));

const admin = () => c.a.admin.auth;

async function post(path: string, body: Record<string, unknown>, auth: Auth = admin(), status = 201) {
  const res = await request(t.app).post(`/${site.slug}${path}`).set(auth).send(body);
  if (res.status !== status) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function patch(path: string, body: Record<string, unknown>, auth: Auth = admin()) {
  const res = await request(t.app).patch(`/${site.slug}${path}`).set(auth).send(body);
  if (res.status !== 200) throw new Error(`PATCH ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const overview = (kind: string, id: string, auth: Auth = admin()) =>
  request(t.app).get(`/${site.slug}/translations/${kind}/${id}`).set(auth);

const sync = (kind: string, id: string, auth: Auth = admin()) =>
  request(t.app).post(`/${site.slug}/translations/${kind}/${id}/sync-translations`).set(auth).send();

/** A type with localized text and rich text, and non-localized number and media fields. */
async function articleType() {
  return createType(t, admin(), site, {
    api_id: `article_${unique()}`,
    fields: [
      { id: 'headline', label: 'Headline', type: 'text', localized: true },
      { id: 'story', label: 'Story', type: 'rich_text', localized: true },
      { id: 'price', label: 'Price', type: 'number' },
      { id: 'photo', label: 'Photo', type: 'media' },
    ],
  });
}

describe('staleness', () => {
  it('marks an element translation’s field stale after a master edit, and current once a person edits it', async () => {
    const type = await articleType();
    const master = await post('/elements/', {
      type: type.api_id,
      name: 'Offer',
      data: { headline: 'Fresh bread', story: '<p>Baked <b>daily</b>.</p>', price: 3 },
    });
    const german = await post('/elements/', {
      master_id: master.id,
      locale: 'de',
      name: 'Angebot',
      data: { headline: 'Frisches Brot' },
    });

    const before = await overview('elements', master.id).expect(200);
    expect(before.body).toMatchObject({
      kind: 'elements',
      master: { id: master.id, locale: 'en', status: 'draft' },
      localized_fields: ['headline', 'story'],
      synced_fields: [],
      inherited_fields: ['price', 'photo'],
      missing_locales: ['fr'],
    });
    expect(before.body.translations).toEqual([
      expect.objectContaining({
        id: german.id,
        locale: 'de',
        stale: true,
        stale_fields: ['story'],
        fields: {
          headline: expect.objectContaining({ state: 'current', stale: false, source: 'person' }),
          story: { state: 'untranslated', stale: true, source: null, taken_at: null },
        },
      }),
    ]);

    // The master's headline changes: the German one is now behind it; its story is as it was.
    await patch(`/elements/${master.id}`, { data: { headline: 'Fresh bread and rolls' } });
    const after = await overview('elements', german.id).expect(200);
    expect(after.body.master.id).toBe(master.id);
    expect(after.body.translations[0].fields.headline).toMatchObject({ state: 'stale', stale: true, source: 'person' });
    expect(after.body.translations[0].stale_fields).toEqual(['headline', 'story']);

    // A non-localized edit of the master makes nothing stale.
    await patch(`/elements/${master.id}`, { data: { price: 4 } });
    expect((await overview('elements', master.id).expect(200)).body.translations[0].stale_fields).toEqual([
      'headline',
      'story',
    ]);

    // The translator updates the headline: it has taken the master's current text.
    await patch(`/elements/${german.id}`, { data: { headline: 'Frisches Brot und Brötchen' } });
    const fixed = await overview('elements', master.id).expect(200);
    expect(fixed.body.translations[0].fields.headline).toMatchObject({ state: 'current', stale: false });
    expect(fixed.body.translations[0].stale_fields).toEqual(['story']);
  });

  it('tracks each localized field of posts and pages, the seo text included', async () => {
    const master = await post('/posts/', {
      title: 'Spring sale',
      excerpt: 'Everything must go',
      body: 'Come **early**.',
      seo: { title: 'Sale', noindex: true },
    });
    const german = await post('/posts/', {
      master_id: master.id,
      locale: 'de',
      title: 'Frühlingsverkauf',
      body: 'Kommt **früh**.',
    });
    await patch(`/posts/${master.id}`, { seo: { title: 'Big sale', noindex: true } });
    const posts = await overview('posts', master.id).expect(200);
    expect(posts.body.localized_fields).toEqual(['title', 'slug', 'excerpt', 'body', 'seo.title', 'seo.description']);
    expect(posts.body.synced_fields).toEqual([
      'tags',
      'categories',
      'featured_media_id',
      'seo.image_id',
      'seo.noindex',
    ]);
    const states = posts.body.translations[0].fields;
    expect(
      Object.fromEntries(Object.entries(states).map(([name, value]) => [name, (value as { state: string }).state])),
    ).toEqual({
      title: 'current',
      slug: 'current',
      excerpt: 'untranslated',
      body: 'current',
      'seo.title': 'untranslated',
      'seo.description': 'empty',
    });
    expect(posts.body.translations[0].id).toBe(german.id);

    const page = await post('/pages/', { slug: 'about', title: 'About us' });
    const pageDe = await post('/pages/', { slug: 'ueber-uns', title: 'Über uns', locale: 'de', master_id: page.id });
    await patch(`/pages/${page.id}`, { title: 'About our bakery' });
    const pages = await overview('pages', pageDe.id).expect(200);
    expect(pages.body.master.id).toBe(page.id);
    expect(pages.body.translations[0].stale_fields).toEqual(['title']);
    expect(pages.body.missing_locales).toEqual(['fr']);
  });

  it('lists a media item with no translations, every other locale missing', async () => {
    const media = await mediaRow(t, site);
    const res = await overview('media', media).expect(200);
    expect(res.body).toMatchObject({
      kind: 'media',
      master: { id: media, locale: 'en', status: 'ready' },
      localized_fields: ['alt', 'title', 'caption'],
      translations: [],
      missing_locales: ['de', 'fr'],
    });
  });
});

describe('sync', () => {
  it('copies a post’s tags, categories, featured image and seo image into its translations, and never a localized field', async () => {
    const image = await mediaRow(t, site);
    const master = await post('/posts/', {
      title: 'Harvest',
      body: 'Apples.',
      tags: ['autumn'],
      seo: { title: 'Harvest time' },
    });
    const german = await post('/posts/', {
      master_id: master.id,
      locale: 'de',
      title: 'Ernte',
      body: 'Äpfel.',
      seo: { title: 'Erntezeit', description: 'Alles über die Ernte' },
    });
    await post('/posts/', { master_id: master.id, locale: 'fr', title: 'Récolte' });
    // The master changes both kinds of field.
    await patch(`/posts/${master.id}`, {
      title: 'Harvest festival',
      body: 'Apples and pears.',
      tags: ['autumn', 'fruit'],
      categories: ['events'],
      featured_media_id: image,
      seo: { title: 'Harvest festival', image_id: image, noindex: true },
    });

    const res = await sync('posts', master.id).expect(200);
    expect(res.body).toMatchObject({ kind: 'posts', master_id: master.id });
    const byLocale = Object.fromEntries(
      res.body.translations.map((entry: { locale: string }) => [entry.locale, entry]),
    );
    expect(byLocale.de).toEqual({
      id: german.id,
      locale: 'de',
      copied: ['tags', 'categories', 'featured_media_id', 'seo.image_id', 'seo.noindex'],
      stale_fields: ['title', 'body', 'seo.title'],
    });
    expect(byLocale.fr.stale_fields).toEqual(['title', 'body', 'seo.title']);

    const de = (await request(t.app).get(`/${site.slug}/posts/${german.id}`).set(admin()).expect(200)).body;
    expect(de).toMatchObject({
      title: 'Ernte',
      body: 'Äpfel.',
      tags: ['autumn', 'fruit'],
      categories: ['events'],
      featured_media_id: image,
      seo: { title: 'Erntezeit', description: 'Alles über die Ernte', image_id: image, noindex: true },
    });
    // The localized fields stay stale: a sync is not a translation.
    const after = await overview('posts', master.id).expect(200);
    expect(after.body.translations.find((entry: { locale: string }) => entry.locale === 'de').stale_fields).toEqual([
      'title',
      'body',
      'seo.title',
    ]);
    // Again: nothing left to copy.
    const again = await sync('posts', german.id).expect(200);
    expect(again.body.translations.map((entry: { copied: string[] }) => entry.copied)).toEqual([[], []]);
  });

  it('copies a page’s template and seo image, keeping its title, slug and seo text', async () => {
    const image = await mediaRow(t, site);
    const page = await post('/pages/', { slug: 'menu', title: 'Menu', template: 'plain' });
    const pageDe = await post('/pages/', {
      slug: 'speisekarte',
      title: 'Speisekarte',
      locale: 'de',
      master_id: page.id,
      seo: { title: 'Unsere Karte' },
    });
    await patch(`/pages/${page.id}`, { title: 'Our menu', template: 'wide', seo: { title: 'Menu', image_id: image } });
    const res = await sync('pages', page.id).expect(200);
    expect(res.body.translations).toEqual([
      { id: pageDe.id, locale: 'de', copied: ['template', 'seo.image_id'], stale_fields: ['title', 'seo.title'] },
    ]);
    const de = (await request(t.app).get(`/${site.slug}/pages/${pageDe.id}`).set(admin()).expect(200)).body;
    expect(de).toMatchObject({
      title: 'Speisekarte',
      slug: 'speisekarte',
      template: 'wide',
      seo: { title: 'Unsere Karte', image_id: image },
    });
  });

  it('leaves element and media translations as they are: their other fields are read from the master', async () => {
    const type = await articleType();
    const master = await post('/elements/', { type: type.api_id, name: 'Item', data: { headline: 'Hi', price: 1 } });
    const german = await post('/elements/', {
      master_id: master.id,
      locale: 'de',
      name: 'Item',
      data: { headline: 'Hallo' },
    });
    await patch(`/elements/${master.id}`, { data: { headline: 'Hello', price: 2 } });
    const res = await sync('elements', master.id).expect(200);
    expect(res.body).toMatchObject({
      synced_fields: [],
      inherited_fields: ['price', 'photo'],
      translations: [{ id: german.id, locale: 'de', copied: [], stale_fields: ['headline'] }],
    });
    const de = (await request(t.app).get(`/${site.slug}/elements/${german.id}`).set(admin()).expect(200)).body;
    expect(de).toMatchObject({ data: { headline: 'Hallo' }, version: german.version });

    const media = await mediaRow(t, site);
    expect((await sync('media', media).expect(200)).body).toMatchObject({ translations: [], synced_fields: [] });
  });
});

describe('access and input', () => {
  it('answers 401 without a token, 403 to an author syncing what they did not make, 404 across tenants', async () => {
    const master = await post('/posts/', { title: 'Mine' });
    await request(t.app).get(`/${site.slug}/translations/posts/${master.id}`).expect(401);
    await request(t.app).post(`/${site.slug}/translations/posts/${master.id}/sync-translations`).expect(401);
    await overview('posts', master.id, c.author.auth).expect(200);
    await sync('posts', master.id, c.author.auth).expect(403);
    await overview('posts', master.id, c.b.admin.auth).expect(404);
    await request(t.app).get(`/${c.b.site.slug}/translations/posts/${master.id}`).set(c.b.admin.auth).expect(404);
    await sync('posts', master.id, c.b.admin.auth).expect(404);
    // Each kind finds only its own ids.
    await overview('pages', master.id).expect(404);
    await overview('elements', master.id).expect(404);
    await overview('media', master.id).expect(404);
    // Service accounts: the area's scopes.
    await overview('posts', master.id, c.reader).expect(200);
    await sync('posts', master.id, c.reader).expect(403);
    await sync('posts', master.id, c.writer).expect(200);
  });

  it('lets an author sync what they made', async () => {
    const master = await post('/posts/', { title: 'By the author', tags: ['a'] }, c.author.auth);
    await post('/posts/', { master_id: master.id, locale: 'de', title: 'Vom Autor' }, c.author.auth);
    await patch(`/posts/${master.id}`, { tags: ['b'] }, c.author.auth);
    const res = await sync('posts', master.id, c.author.auth).expect(200);
    expect(res.body.translations[0].copied).toEqual(['tags']);
  });

  it('answers 422 for an id that is not one, and for a body where none is taken', async () => {
    const bad = await overview('posts', 'not-a-uuid').expect(422);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
    const master = await post('/posts/', { title: 'Body' });
    await sync('posts', 'nope').expect(422);
    await request(t.app)
      .post(`/${site.slug}/translations/posts/${master.id}/sync-translations`)
      .set(admin())
      .send({ overwrite: true })
      .expect(422);
  });
});
