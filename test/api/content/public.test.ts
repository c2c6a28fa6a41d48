// Public Content through HTTP: only published content of public sites of
// active tenants; the locale fallback chain per item and per localized field,
// in lists, reads and filters; references and media resolved to a depth;
// pages by id and path with their elements, the navigation; ETag and 304,
// Cache-Control, Surrogate-Key; and the cache: a hit costs no round trip, a
// write drops exactly what it changed, global admins clear it by hand.
import request from 'supertest';
import { ForeignKeyIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  mediaRow,
  withLocales,
  type ContentCast,
  type ElementRow,
} from '../../helpers/content.ts';
import { newSite } from '../../helpers/factories.ts';
import { startCountedApp, type CountedApp } from '../../helpers/counted-app.ts';
import { startFakeRedis, type FakeRedis } from '../../helpers/fake-redis.ts';
import type { RoundTripCounter } from '../../helpers/pg-round-trips.ts';
import { stopProcess, twoApiProcesses, type Started } from '../../helpers/processes.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;
let ada: ElementRow;
let story: ElementRow;
let image: string;

const pub = (path: string) => request(t.app).get(`/public/${site.slug}${path}`);
const editor = () => c.a.editor.auth;

async function makePublic(target: Site): Promise<void> {
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${target.id}`);
  await accessChangeHeard(t);
}

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de', 'de-CH']);
  await makePublic(site);
  await createType(t, editor(), site, {
    api_id: 'person',
    fields: [{ id: 'full_name', label: 'Name', type: 'text' }],
  });
  await createType(t, editor(), site, {
    api_id: 'article',
    fields: [
      { id: 'title', label: 'Title', type: 'text', required: true, localized: true },
      { id: 'summary', label: 'Summary', type: 'text', localized: true },
      { id: 'rating', label: 'Rating', type: 'number' },
      { id: 'author', label: 'Author', type: 'reference', validations: { reference_types: ['person'] } },
      { id: 'cover', label: 'Cover', type: 'media' },
    ],
  });
  image = await mediaRow(t, site, 'image');
  ada = await createElement(t, editor(), site, { type: 'person', data: { full_name: 'Ada' }, status: 'published' });
  story = await createElement(t, editor(), site, {
    type: 'article',
    name: 'Story',
    data: { title: 'Hello', summary: 'In English', rating: 4, author: ada.id, cover: image },
    status: 'published',
  });
  await createElement(t, editor(), site, {
    master_id: story.id,
    locale: 'de',
    data: { title: 'Hallo' },
    status: 'published',
  });
  await createElement(t, editor(), site, { master_id: story.id, locale: 'de-CH', data: { title: 'Grüezi' } });
  await createElement(t, editor(), site, { type: 'article', name: 'Draft', data: { title: 'Unseen' } });
});
afterAll(() => stopTestApp(t));

type Served = { id: string; served_locale: string; data: Record<string, unknown> };

describe('locales and fallback', () => {
  it('lists the site’s locales with the fallback chain of each', async () => {
    const res = await pub('/locales').expect(200);
    expect(res.body).toEqual({
      default_locale: 'en',
      locales: ['en', 'de', 'de-CH'],
      fallbacks: { en: ['en'], de: ['de', 'en'], 'de-CH': ['de-CH', 'de', 'en'] },
    });
  });

  it('serves each element in the best locale it has, per field, and says which', async () => {
    const served = async (locale: string) =>
      (await pub(`/elements/${story.id}?locale=${locale}&depth=0`).expect(200)).body as Served;
    // de-CH's translation is a draft: de serves the item; its empty summary falls back to English.
    expect(await served('de-CH')).toMatchObject({
      served_locale: 'de',
      data: { title: 'Hallo', summary: 'In English', rating: 4, author: ada.id },
    });
    expect(await served('de')).toMatchObject({ served_locale: 'de', data: { title: 'Hallo' } });
    expect(await served('en')).toMatchObject({ served_locale: 'en', data: { title: 'Hello' } });
    expect(await served('fr')).toMatchObject({ served_locale: 'en', data: { title: 'Hello' } });
    expect(await served('DE-ch')).toMatchObject({ served_locale: 'de' });
  });

  it('serves each change of a translation or its master from the next read on', async () => {
    const served = async (id: string) => (await pub(`/elements/${id}?locale=de-CH&depth=0`).expect(200)).body as Served;
    const patch = (id: string, body: object) =>
      request(t.app).patch(`/${site.slug}/elements/${id}`).set(editor()).send(body).expect(200);
    const note = await createElement(t, editor(), site, {
      type: 'article',
      data: { title: 'Note', summary: 'Short', rating: 2 },
      status: 'published',
    });
    const swiss = await createElement(t, editor(), site, {
      master_id: note.id,
      locale: 'de-CH',
      data: { title: 'Notiz', summary: 'Kurz' },
    });
    const german = await createElement(t, editor(), site, {
      master_id: note.id,
      locale: 'de',
      data: { title: 'Vermerk' },
      status: 'published',
    });
    // A draft translation is not served; once published it is, field by field.
    expect(await served(note.id)).toMatchObject({ served_locale: 'de', data: { title: 'Vermerk', summary: 'Short' } });
    await patch(swiss.id, { status: 'published' });
    expect(await served(note.id)).toMatchObject({ served_locale: 'de-CH', data: { title: 'Notiz', summary: 'Kurz' } });
    // A field emptied falls back to the next locale that fills it; the master's own changes show through.
    // (A published element's edit waits in its draft; `status: published` publishes it with the edit.)
    await patch(swiss.id, { data: { title: null }, status: 'published' });
    await patch(note.id, { data: { rating: 5 }, status: 'published' });
    expect(await served(note.id)).toMatchObject({ data: { title: 'Vermerk', summary: 'Kurz', rating: 5 } });
    // Unpublished, then deleted: the translation's fields go with it.
    await patch(swiss.id, { status: 'draft' });
    expect(await served(note.id)).toMatchObject({ served_locale: 'de', data: { title: 'Vermerk', summary: 'Short' } });
    await request(t.app).delete(`/${site.slug}/elements/${german.id}`).set(editor()).expect(204);
    expect(await served(note.id)).toMatchObject({ served_locale: 'en', data: { title: 'Note', summary: 'Short' } });
    // A master deleted takes its public row along (what would otherwise be left behind).
    await request(t.app).delete(`/${site.slug}/elements/${swiss.id}`).set(editor()).expect(204);
    await request(t.app).delete(`/${site.slug}/elements/${note.id}`).set(editor()).expect(204);
    expect(
      await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
        select count(*)::int from public_elements where master_id = ${note.id}`),
    ).toBe(0);
  });

  it('keeps both of two concurrent changes to translations of one master', async () => {
    const note = await createElement(t, editor(), site, {
      type: 'article',
      data: { title: 'Memo', summary: 'Brief' },
      status: 'published',
    });
    const german = await createElement(t, editor(), site, {
      master_id: note.id,
      locale: 'de',
      data: { title: 'Notiz' },
      status: 'published',
    });
    const swiss = await createElement(t, editor(), site, {
      master_id: note.id,
      locale: 'de-CH',
      data: { summary: 'Kurz' },
      status: 'published',
    });
    const change = (id: string, data: object) =>
      sql.typeAlias('void')`update content_elements set data = ${JSON.stringify(data)}::jsonb where id = ${id}`;
    // The first holds its transaction open after its change; the second changes the other translation meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let changed!: () => void;
    const firstChanged = new Promise<void>((resolve) => (changed = resolve));
    const first = t.services.db.transaction(async (tx) => {
      await tx.query(change(german.id, { title: 'Vermerk' }));
      changed();
      await held;
    });
    await firstChanged;
    const second = t.services.db.transaction((tx) => tx.query(change(swiss.id, { summary: 'Knapp' })));
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([first, second]);
    const served = (await pub(`/elements/${note.id}?locale=de-CH&depth=0`).expect(200)).body as Served;
    expect(served.data).toMatchObject({ title: 'Vermerk', summary: 'Knapp' });
    for (const { id } of [german, swiss, note])
      await request(t.app).delete(`/${site.slug}/elements/${id}`).set(editor()).expect(204);
  });

  it('filters lists on the values served in the locale asked', async () => {
    const titles = async (query: string) =>
      ((await pub(`/elements?type=article&${query}`).expect(200)).body.items as Served[]).map(
        (item) => item.data.title,
      );
    expect(await titles('locale=de&filter[title]=Hallo')).toEqual(['Hallo']);
    expect(await titles('locale=en&filter[title]=Hallo')).toEqual([]);
    expect(await titles('locale=de-CH&filter[summary]=In English')).toEqual(['Hallo']);
    expect(await titles('locale=de&filter[rating][gte]=4')).toEqual(['Hallo']);
    expect(await titles('locale=de&filter[title][contains]=hal')).toEqual(['Hallo']);
    await pub('/elements?filter[title]=x').expect(422);
    await pub('/elements?type=nothing').expect(422);
  });
});

describe('elements', () => {
  it('lists only published masters, in cursor pages', async () => {
    const res = await pub('/elements?limit=1').expect(200);
    expect(res.body.items).toHaveLength(1);
    const next = await pub(`/elements?limit=1&cursor=${encodeURIComponent(res.body.next_cursor)}`).expect(200);
    const all = [...res.body.items, ...next.body.items].map((item: Served) => item.id);
    expect(all).toEqual([ada.id, story.id]);
    expect(next.body.next_cursor).toBeNull();
  });

  it('resolves references and media to the depth asked', async () => {
    const deep = (await pub(`/elements/${story.id}`).expect(200)).body as Served;
    expect(deep.data.author).toMatchObject({ id: ada.id, type: 'person', data: { full_name: 'Ada' } });
    expect(deep.data.cover).toMatchObject({ id: image, kind: 'image' });
    expect(deep.data.cover).not.toHaveProperty('storage_key');
    const flat = (await pub(`/elements/${story.id}?depth=0`).expect(200)).body as Served;
    expect(flat.data).toMatchObject({ author: ada.id, cover: image });
    await pub(`/elements/${story.id}?depth=4`).expect(422);
  });

  it('resolves the references of a page’s elements as each element alone, to the depth asked', async () => {
    const home = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(editor())
      .send({ title: 'Stories', slug: 'stories', status: 'published' })
      .expect(201);
    const bob = await createElement(t, editor(), site, {
      type: 'person',
      data: { full_name: 'Bob' },
      status: 'published',
    });
    for (const element of [story, bob])
      await request(t.app)
        .post(`/${site.slug}/pages/${home.body.id}/elements`)
        .set(editor())
        .send({ element_id: element.id })
        .expect(201);
    for (const depth of [0, 1, 2]) {
      const onPage = await pub(`/pages/${home.body.id}?locale=de&depth=${depth}`).expect(200);
      const alone = await Promise.all(
        [story, bob].map(async ({ id }) => (await pub(`/elements/${id}?locale=de&depth=${depth}`).expect(200)).body),
      );
      expect(onPage.body.elements.map((slot: { element: Served }) => slot.element)).toEqual(alone);
    }
    const resolved = (await pub(`/pages/${home.body.id}?locale=de`).expect(200)).body.elements[0].element;
    expect(resolved.data).toMatchObject({ title: 'Hallo', author: { id: ada.id }, cover: { id: image } });
  });

  it('reads a translation’s id as its item, and hides drafts and other sites’ elements', async () => {
    const translations = await request(t.app)
      .get(`/${site.slug}/elements/?masters_only=false&locale=de`)
      .set(editor())
      .expect(200);
    const de = (translations.body.items as ElementRow[])[0]!;
    const res = await pub(`/elements/${de.id}?locale=en`).expect(200);
    expect(res.body).toMatchObject({ id: story.id, served_locale: 'en' });
    const draft = await createElement(t, editor(), site, { type: 'person', data: {} });
    await pub(`/elements/${draft.id}`).expect(404);
    const theirType = await createType(t, c.b.admin.auth, c.b.site);
    const theirs = await createElement(t, c.b.admin.auth, c.b.site, { type: theirType.id, status: 'published' });
    await pub(`/elements/${theirs.id}`).expect(404);
  });

  it('shows an unpublished reference as nothing, and again once published', async () => {
    const bob = await createElement(t, editor(), site, { type: 'person', data: { full_name: 'Bob' } });
    const piece = await createElement(t, editor(), site, {
      type: 'article',
      data: { title: 'By Bob', author: bob.id },
      status: 'published',
    });
    expect((await pub(`/elements/${piece.id}`).expect(200)).body.data.author).toBeNull();
    await request(t.app)
      .patch(`/${site.slug}/elements/${bob.id}`)
      .set(editor())
      .send({ status: 'published' })
      .expect(200);
    expect((await pub(`/elements/${piece.id}`).expect(200)).body.data.author).toMatchObject({ id: bob.id });
  });

  it('tells what uses an element', async () => {
    const page = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(editor())
      .send({ slug: 'uses', title: 'Uses', status: 'published' })
      .expect(201);
    await request(t.app)
      .post(`/${site.slug}/pages/${page.body.id}/elements`)
      .set(editor())
      .send({ element_id: ada.id })
      .expect(201);
    const res = await pub(`/elements/${ada.id}/references`).expect(200);
    expect(res.body.pages).toEqual([{ id: page.body.id, title: 'Uses', path: '/uses', locale: 'en' }]);
    expect(res.body.elements.map((element: { id: string }) => element.id)).toContain(story.id);
  });

  it('lists the content types', async () => {
    const res = await pub('/content-types').expect(200);
    expect(res.body.items.map((type: { api_id: string }) => type.api_id)).toEqual(['article', 'person']);
  });
});

describe('pages', () => {
  let pageSite: Site;
  const pubPage = (path: string) => request(t.app).get(`/public/${pageSite.slug}${path}`);

  beforeAll(async () => {
    pageSite = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de']);
    await makePublic(pageSite);
  });

  async function page(body: Record<string, unknown>) {
    const res = await request(t.app)
      .post(`/${pageSite.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ title: 'Page', status: 'published', ...body });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body as { id: string; path: string };
  }

  it('serves a page’s elements exactly as each is served alone, field by field through the fallback chain', async () => {
    const site = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de', 'de-CH', 'fr']);
    await makePublic(site);
    await createType(t, c.a.admin.auth, site, {
      api_id: 'card',
      fields: [
        { id: 'title', label: 'Title', type: 'text', localized: true },
        { id: 'body', label: 'Body', type: 'text', localized: true },
        { id: 'sku', label: 'SKU', type: 'text' },
      ],
    });
    const card = (data: Record<string, unknown>, locale = 'en') =>
      createElement(t, c.a.admin.auth, site, { type: 'card', data, locale, status: 'published' });
    const translate = (master: string, locale: string, data: Record<string, unknown>, status = 'published') =>
      createElement(t, c.a.admin.auth, site, { master_id: master, locale, data, status });
    // Full and partial translations, a draft one, a master in a locale late in the chain, one untranslated.
    const full = await card({ title: 'One', body: 'First', sku: 'A1' });
    await translate(full.id, 'de', { title: 'Eins', body: 'Erstes' });
    await translate(full.id, 'de-CH', { title: 'Eis' });
    const partial = await card({ title: 'Two', body: 'Second', sku: 'B2' });
    await translate(partial.id, 'de', { body: 'Zweites' });
    await translate(partial.id, 'de-CH', { title: 'Zwei (draft)' }, 'draft');
    const french = await card({ title: 'Trois', body: 'Troisième', sku: 'C3' }, 'fr');
    await translate(french.id, 'en', { title: 'Three' });
    const untranslated = await card({ title: 'Four', sku: 'D4' });
    const home = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ title: 'Home', slug: 'home', status: 'published' })
      .expect(201);
    for (const element of [full, partial, french, untranslated])
      await request(t.app)
        .post(`/${site.slug}/pages/${home.body.id}/elements`)
        .set(c.a.admin.auth)
        .send({ element_id: element.id })
        .expect(201);
    for (const locale of ['de-CH', 'de', 'en', 'fr', 'it']) {
      const onPage = await request(t.app)
        .get(`/public/${site.slug}/pages/${home.body.id}?locale=${locale}`)
        .expect(200);
      const served = onPage.body.elements.map((slot: { element: Served }) => slot.element);
      expect(served).toHaveLength(4);
      for (const element of served) {
        const alone = await request(t.app)
          .get(`/public/${site.slug}/elements/${element.id}?locale=${locale}&depth=0`)
          .expect(200);
        // Every key alike, timestamps to the digit (the page's are written by the database, the element's here).
        expect({ locale, ...element }).toEqual({ locale, ...alone.body });
      }
    }
    const swiss = await request(t.app).get(`/public/${site.slug}/pages/${home.body.id}?locale=de-CH`).expect(200);
    expect(swiss.body.elements[0].element).toMatchObject({
      served_locale: 'de-CH',
      data: { title: 'Eis', body: 'Erstes', sku: 'A1' },
    });
  });

  it('serves each change to a placed element, its translations or its type from the next read on', async () => {
    const site = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de']);
    await makePublic(site);
    const auth = c.a.admin.auth;
    const type = await createType(t, auth, site, {
      api_id: 'tile',
      fields: [{ id: 'title', label: 'Title', type: 'text', localized: true }],
    });
    const target = await createElement(t, auth, site, { type: 'tile', data: { title: 'Target' }, status: 'published' });
    const tile = await createElement(t, auth, site, { type: 'tile', data: { title: 'Tile' }, status: 'published' });
    const german = await createElement(t, auth, site, { master_id: tile.id, locale: 'de', data: { title: 'Kachel' } });
    const home = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(auth)
      .send({ title: 'Home', slug: 'home', status: 'published' })
      .expect(201);
    // Placed by its translation's id: the page shows the master, as a read of that id does.
    await request(t.app)
      .post(`/${site.slug}/pages/${home.body.id}/elements`)
      .set(auth)
      .send({ element_id: german.id })
      .expect(201);
    const patch = (id: string, body: object) =>
      request(t.app).patch(`/${site.slug}/elements/${id}`).set(auth).send(body).expect(200);
    const onPage = async () => {
      const res = await request(t.app).get(`/public/${site.slug}/pages/${home.body.id}?locale=de`).expect(200);
      return res.body.elements.map((slot: { element: Served }) => slot.element) as Served[];
    };
    const alone = async () =>
      (await request(t.app).get(`/public/${site.slug}/elements/${tile.id}?locale=de`).expect(200)).body as Served;

    expect(await onPage()).toEqual([await alone()]);
    expect((await onPage())[0]).toMatchObject({ id: tile.id, served_locale: 'en', data: { title: 'Tile' } });
    await patch(german.id, { status: 'published' });
    expect((await onPage())[0]).toMatchObject({ served_locale: 'de', data: { title: 'Kachel' } });
    // A name that JSON has to escape, written by the database, reads back as it was written.
    const name = 'Say "hi" \\ \u00fc \u2028 \t end';
    await patch(tile.id, { name, status: 'published' });
    expect((await onPage())[0]).toEqual({ ...(await alone()), name });
    await patch(tile.id, { status: 'draft' });
    expect(await onPage()).toEqual([]);
    await patch(tile.id, { status: 'published' });
    expect(await onPage()).toEqual([await alone()]);
    // A type that gains a reference field: the page resolves it, as the element alone does.
    await request(t.app)
      .patch(`/${site.slug}/contenttypes/${type.id}`)
      .set(auth)
      .send({
        fields: [
          { id: 'title', label: 'Title', type: 'text', localized: true },
          { id: 'next', label: 'Next', type: 'reference' },
        ],
      })
      .expect(200);
    await patch(tile.id, { data: { next: target.id }, status: 'published' });
    const [shown] = await onPage();
    expect(shown).toEqual(await alone());
    expect(shown!.data).toMatchObject({ title: 'Kachel', next: { id: target.id, data: { title: 'Target' } } });
  });

  it('keeps the master of each placement, and leaves an element that is gone to the foreign key', async () => {
    const home = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(editor())
      .send({ title: 'Masters', slug: 'masters', status: 'published' })
      .expect(201);
    const max = await createElement(t, editor(), site, { type: 'person', data: { full_name: 'Max' } });
    const german = await createElement(t, editor(), site, { master_id: max.id, locale: 'de', data: {} });
    const place = (elementId: string, position: number) =>
      t.services.db.oneFirst(sql.type(z.object({ master_id: z.uuid() }))`
        insert into page_elements (page_id, element_id, site_id, position)
        values (${home.body.id}, ${elementId}, ${site.id}, ${position}) returning master_id`);
    expect(await place(german.id, 0)).toBe(max.id);
    expect(await place(max.id, 1)).toBe(max.id);
    await expect(place('00000000-0000-4000-8000-000000000000', 2)).rejects.toBeInstanceOf(
      ForeignKeyIntegrityConstraintViolationError,
    );
  });

  it('serves pages, their translations, their elements and the navigation in the locale asked', async () => {
    await createType(t, c.a.admin.auth, pageSite, {
      api_id: 'block',
      fields: [{ id: 'text', label: 'Text', type: 'text', localized: true }],
    });
    const block = await createElement(t, c.a.admin.auth, pageSite, {
      type: 'block',
      data: { text: 'Welcome' },
      status: 'published',
    });
    await createElement(t, c.a.admin.auth, pageSite, {
      master_id: block.id,
      locale: 'de',
      data: { text: 'Willkommen' },
      status: 'published',
    });
    const hidden = await createElement(t, c.a.admin.auth, pageSite, { type: 'block', data: { text: 'Draft' } });
    const about = await page({ slug: 'about', title: 'About' });
    const ueber = await page({ slug: 'ueber', title: 'Über uns', locale: 'de', master_id: about.id });
    const team = await page({ slug: 'team', title: 'Team', parent_id: about.id });
    await page({ slug: 'secret', title: 'Secret', parent_id: team.id, status: 'draft' });
    const draftParent = await page({ slug: 'wip', title: 'WIP', status: 'draft' });
    await page({ slug: 'orphan', title: 'Orphan', parent_id: draftParent.id });
    for (const elementId of [block.id, hidden.id])
      await request(t.app)
        .post(`/${pageSite.slug}/pages/${about.id}/elements`)
        .set(c.a.admin.auth)
        .send({ element_id: elementId })
        .expect(201);

    const inGerman = await pubPage(`/pages/${about.id}?locale=de`).expect(200);
    expect(inGerman.body).toMatchObject({ id: ueber.id, title: 'Über uns', path: '/ueber', served_locale: 'de' });
    // The translation has no layout of its own: the master's, its elements in German; the draft element is not shown.
    expect(inGerman.body.elements).toEqual([
      {
        area: 'main',
        position: 0,
        settings: {},
        element: expect.objectContaining({ id: block.id, served_locale: 'de', data: { text: 'Willkommen' } }),
      },
    ]);
    const inEnglish = await pubPage(`/pages/${ueber.id}`).expect(200);
    expect(inEnglish.body).toMatchObject({ id: about.id, served_locale: 'en' });

    const byPath = await pubPage('/pages?locale=de&path=/ueber').expect(200);
    expect(byPath.body.items.map((item: { id: string }) => item.id)).toEqual([ueber.id]);
    expect((await pubPage('/pages?path=/ueber').expect(200)).body.items).toEqual([]);
    const children = await pubPage(`/pages?parent_id=${about.id}`).expect(200);
    expect(children.body.items.map((item: { id: string }) => item.id)).toEqual([team.id]);

    const nav = await pubPage('/navigation?locale=de').expect(200);
    expect(nav.body.items).toEqual([
      {
        id: ueber.id,
        title: 'Über uns',
        path: '/ueber',
        slug: 'ueber',
        served_locale: 'de',
        children: [
          { id: team.id, title: 'Team', path: '/about/team', slug: 'team', served_locale: 'en', children: [] },
        ],
      },
    ]);
    await pubPage(`/pages/${draftParent.id}`).expect(404);
  });
});

describe('who sees public content', () => {
  it('is the same 404 for a private site, an unknown one and a suspended tenant', async () => {
    const hidden = await newSite(t, c.a.tenant);
    await request(t.app).get(`/public/${hidden.slug}/elements`).expect(404);
    await request(t.app).get('/public/no-such-site/locales').expect(404);
    const other = await newSite(t, c.b.tenant);
    await makePublic(other);
    await request(t.app).get(`/public/${other.slug}/locales`).expect(200);
    await t.services.db.query(
      sql.typeAlias('void')`update tenants set status = 'suspended' where id = ${c.b.tenant.id}`,
    );
    // Written behind the API's back: wait, as a write through it would, until the app has heard of it.
    await accessChangeHeard(t);
    try {
      await request(t.app).get(`/public/${other.slug}/locales`).expect(404);
    } finally {
      await t.services.db.query(
        sql.typeAlias('void')`update tenants set status = 'active' where id = ${c.b.tenant.id}`,
      );
    }
  });
});

describe('HTTP caching', () => {
  it('answers with an ETag, 304 for it, Cache-Control and the Surrogate-Key of what it shows', async () => {
    const res = await pub(`/elements/${story.id}`).expect(200);
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(res.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=300');
    const keys = res.headers['surrogate-key']!.split(' ');
    expect(keys).toEqual(
      expect.arrayContaining([`site:${site.id}`, `element:${story.id}`, `element:${ada.id}`, `media:${image}`]),
    );
    const again = await pub(`/elements/${story.id}`).set('If-None-Match', res.headers.etag!).expect(304);
    expect(again.headers.etag).toBe(res.headers.etag);
    expect(again.text).toBe('');
    await pub(`/elements/${story.id}`).set('If-None-Match', '"other"').expect(200);
  });
});

describe('the cache', () => {
  let counted: CountedApp;
  let counter: RoundTripCounter;
  let app: CountedApp['app'];
  beforeAll(async () => {
    counted = await startCountedApp(t);
    ({ counter, app } = counted);
  });
  afterAll(() => counted.close());

  const read = (path: string) => request(app).get(`/public/${site.slug}${path}`).expect(200);

  it('answers a repeated read without the database', async () => {
    await read(`/elements/${story.id}?locale=de`);
    counter.reset();
    const hit = await read(`/elements/${story.id}?locale=de`);
    expect(counter.count()).toBe(0);
    expect(hit.body.data.title).toBe('Hallo');
  });

  it('gives a kept answer all a request gets: its id, security and rate-limit headers, its view and request counted', async () => {
    const page = (
      await request(t.app)
        .post(`/${site.slug}/pages/`)
        .set(editor())
        .send({ slug: 'kept', title: 'Kept', status: 'published' })
        .expect(201)
    ).body as { id: string };
    const path = `/public/${site.slug}/pages/${page.id}?locale=de`;
    // The page's announcement reaches this app in its own time: heard after the first read, it would drop what
    // that read kept. Once sync() answers, every change committed before has been heard.
    await counted.services.notifications.sync();
    const first = await request(app).get(path).expect(200);
    await counted.services.statistics.flush(t.services.db);
    counter.reset();
    const kept = await request(app).get(path).set('X-Request-Id', 'kept-1').expect(200);
    expect(counter.count()).toBe(0);
    expect(kept.body).toEqual(first.body);
    expect(kept.headers).toMatchObject({
      'x-request-id': 'kept-1',
      'x-content-type-options': 'nosniff',
      'ratelimit-policy': expect.stringContaining('"per-ip"'),
      etag: first.headers.etag,
      'surrogate-key': first.headers['surrogate-key'],
      'content-type': 'application/json; charset=utf-8',
    });
    await request(app).get(path).set('If-None-Match', first.headers.etag!).expect(304);
    await request(app)
      .head(path)
      .expect(200)
      .expect('Content-Length', String(Buffer.byteLength(first.text)));
    expect(await counted.services.statistics.flush(t.services.db)).toEqual({ requests: 3, views: 3 });
    const views = await t.services.db.oneFirst(sql.type(z.object({ views: z.number() }))`
      select sum(views)::int as views from view_stats where item_id = ${page.id}`);
    expect(views).toBe(4);
    const requests = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select sum(count)::int as count from request_stats
      where site_id = ${site.id} and route = 'GET /public/{site_identifier}/pages/{page_id}'`);
    expect(requests).toBeGreaterThanOrEqual(4);
  });

  it('drops what a write changed, in time for the next read, and keeps the rest', async () => {
    const other = await createElement(t, editor(), site, {
      type: 'person',
      data: { full_name: 'Cy' },
      status: 'published',
    });
    // Heard before the reads, the new element's announcement cannot drop what they keep.
    await counted.services.notifications.sync();
    await read(`/elements/${story.id}?locale=de`);
    await read(`/elements/${other.id}`);
    const translation = await request(t.app)
      .get(`/${site.slug}/elements/?locale=de&type=article`)
      .set(editor())
      .expect(200);
    const de = (translation.body.items as ElementRow[]).find((item) => item.data.title === 'Hallo')!;
    await request(t.app)
      .patch(`/${site.slug}/elements/${de.id}`)
      .set(editor())
      .send({ data: { title: 'Hallo Welt' }, status: 'published' })
      .expect(200);
    // The other process hears of it by notification; give it a moment on a loaded machine.
    const deadline = Date.now() + 5000;
    let title = (await read(`/elements/${story.id}?locale=de`)).body.data.title;
    while (title !== 'Hallo Welt' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      title = (await read(`/elements/${story.id}?locale=de`)).body.data.title;
    }
    expect(title).toBe('Hallo Welt');
    counter.reset();
    await read(`/elements/${other.id}`);
    expect(counter.count()).toBe(0);
  });

  it('is cleared by global admins for an element, a site, or all', async () => {
    await read(`/elements/${ada.id}`);
    const bySite = await request(t.app).delete(`/admin/cache/site/${site.id}`).set(c.admin.auth).expect(200);
    expect(bySite.body).toEqual({ tags: [`site:${site.id}`] });
    const byElement = await request(t.app)
      .delete(`/admin/cache/element/${ada.id}/site/${site.id}`)
      .set(c.admin.auth)
      .expect(200);
    expect(byElement.body).toEqual({ tags: [`element:${ada.id}`] });
    await request(t.app).delete('/admin/cache/all').set(c.admin.auth).expect(200);
    await request(t.app).delete('/admin/cache/all').set(c.a.admin.auth).expect(403);
    await request(t.app).delete(`/admin/cache/site/${c.b.site.id}`).set(c.admin.auth).expect(200);
    await request(t.app).delete(`/admin/cache/element/${ada.id}/site/${c.b.site.id}`).set(c.admin.auth).expect(404);
    await request(t.app).delete('/admin/cache/site/00000000-0000-4000-8000-000000000000').set(c.admin.auth).expect(404);
    const deadline = Date.now() + 5000;
    counter.reset();
    await read(`/elements/${ada.id}`);
    while (counter.count() === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await read(`/elements/${ada.id}`);
    }
    expect(counter.count()).toBeGreaterThan(0);
  });
});

describe('the cache in Redis (REDIS_URL)', () => {
  let redis: FakeRedis;
  let first: CountedApp;
  let second: CountedApp;
  beforeAll(async () => {
    redis = await startFakeRedis();
    first = await startCountedApp(t, { REDIS_URL: redis.url });
    second = await startCountedApp(t, { REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await redis?.close();
  });

  const read = (app: CountedApp, path: string) => request(app.app).get(`/public/${site.slug}${path}`).expect(200);

  it('is shared: what one process computed, another answers without the database, bytes intact', async () => {
    const computed = await read(first, `/elements/${story.id}?locale=de&depth=0`);
    expect(redis.commands).toEqual(expect.arrayContaining(['SET', 'SADD']));
    await read(second, '/locales'); // the site itself, known to the second process
    second.counter.reset();
    const shared = await read(second, `/elements/${story.id}?locale=de&depth=0`);
    expect(second.counter.count()).toBe(0);
    expect(shared.body).toEqual(computed.body);
    expect(shared.headers.etag).toBe(computed.headers.etag);
    expect(shared.headers['surrogate-key']).toBe(computed.headers['surrogate-key']);
  });

  it('drops by tag when content changes', async () => {
    const person = await createElement(t, editor(), site, {
      type: 'person',
      data: { full_name: 'Dee' },
      status: 'published',
    });
    expect((await read(first, `/elements/${person.id}`)).body.data.full_name).toBe('Dee');
    await request(t.app)
      .patch(`/${site.slug}/elements/${person.id}`)
      .set(editor())
      .send({ data: { full_name: 'Dee Dee' }, status: 'published' })
      .expect(200);
    const deadline = Date.now() + 5000;
    let name = (await read(second, `/elements/${person.id}`)).body.data.full_name;
    while (name !== 'Dee Dee' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      name = (await read(second, `/elements/${person.id}`)).body.data.full_name;
    }
    expect(name).toBe('Dee Dee');
    expect(redis.commands).toEqual(expect.arrayContaining(['SMEMBERS', 'DEL']));
  });

  it('answers from the database when Redis is gone', async () => {
    await redis.close();
    first.counter.reset();
    const res = await read(first, `/elements/${ada.id}?depth=0`);
    expect(res.body.data.full_name).toBe('Ada');
    expect(first.counter.count()).toBeGreaterThan(0);
  });
});

describe('two API processes', () => {
  let first: Started;
  let second: Started;
  beforeAll(async () => {
    [first, second] = await twoApiProcesses(t);
  });
  afterAll(async () => {
    await Promise.all([first, second].filter(Boolean).map((started) => stopProcess(started)));
  });

  const title = async (base: string, id: string) =>
    ((await (await fetch(`${base}/public/${site.slug}/elements/${id}?depth=0`)).json()) as Served).data.title;

  it('a publish through one drops the other’s cached answer', async () => {
    const element = await createElement(t, editor(), site, {
      type: 'article',
      data: { title: 'Before' },
      status: 'published',
    });
    expect(await title(second.url, element.id)).toBe('Before');
    // Changed behind the service's back, with triggers off: nothing is announced, so the second keeps its answer.
    await t.services.db.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`set local session_replication_role = replica`);
      await tx.query(sql.typeAlias('void')`
        update content_elements set data = data || '{"title": "Unannounced"}' where id = ${element.id}`);
    });
    expect(await title(second.url, element.id)).toBe('Before');
    const res = await fetch(`${first.url}/${site.slug}/elements/${element.id}`, {
      method: 'PATCH',
      headers: { ...editor(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ data: { title: 'After' }, status: 'published' }),
    });
    expect(res.status).toBe(200);
    const answered = Date.now();
    let seen = await title(second.url, element.id);
    while (seen !== 'After' && Date.now() - answered < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      seen = await title(second.url, element.id);
    }
    expect(seen).toBe('After');
  });
});
