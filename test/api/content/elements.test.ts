// Content Elements through HTTP: who reads and writes them (authors only
// their own), data checked against the type (draft and publish rules, media
// and reference targets, unique values, sanitised rich text), translations,
// If-Match, listing with field filters and sorts, and deletion refused while
// used or forced with every use removed.
import request from 'supertest';
import type { Site } from '../../../core/tenancy/sites.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  mediaRow,
  pathsOf,
  withLocales,
  type ContentCast,
  type ContentTypeRow,
  type ElementRow,
} from '../../helpers/content.ts';
import { newSite } from '../../helpers/factories.ts';
import { expectPaginates, idsOf, unique } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;
let article: ContentTypeRow;
let person: ContentTypeRow;

const at = (id: string) => `/${site.slug}/elements/${id}`;
const base = () => `/${site.slug}/elements/`;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de', 'de-CH']);
  person = await createType(t, c.a.editor.auth, site, {
    api_id: 'person',
    fields: [{ id: 'full_name', label: 'Name', type: 'text', required: true }],
  });
  article = await createType(t, c.a.editor.auth, site, {
    api_id: 'article',
    fields: [
      { id: 'title', label: 'Title', type: 'text', required: true, localized: true },
      { id: 'slug', label: 'Slug', type: 'slug', unique: true },
      { id: 'body', label: 'Body', type: 'rich_text', localized: true },
      { id: 'rating', label: 'Rating', type: 'number', default: 3 },
      { id: 'when', label: 'When', type: 'datetime' },
      { id: 'cover', label: 'Cover', type: 'media', validations: { media_kinds: ['image'] } },
      { id: 'author', label: 'Author', type: 'reference', validations: { reference_types: ['person'] } },
      { id: 'related', label: 'Related', type: 'list', of: { type: 'reference' } },
    ],
  });
});
afterAll(() => stopTestApp(t));

const newArticle = (data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  createElement(t, c.a.editor.auth, site, { type: 'article', data: { title: `T ${unique()}`, ...data }, ...extra });

describe('creating', () => {
  it('creates a draft with defaults filled in, in the site’s default locale, and says where it is', async () => {
    const res = await request(t.app)
      .post(base())
      .set(c.author.auth)
      .send({ type: article.id, name: 'First', data: { title: 'Hello' } })
      .expect(201);
    expect(res.headers.location).toBe(`/${site.slug}/elements/${res.body.id}`);
    expect(res.headers.etag).toBe('"1"');
    expect(res.body).toMatchObject({
      type_id: article.id,
      schema_version: 1,
      name: 'First',
      locale: 'en',
      master_id: null,
      status: 'draft',
      published_at: null,
      version: 1,
      created_by: c.author.user.id,
      data: { title: 'Hello', rating: 3 },
    });
  });

  it('is for those who write content; readers, strangers and the anonymous are refused', async () => {
    const body = { type: 'article', name: 'x', data: {} };
    await request(t.app).post(base()).set(c.reader).send(body).expect(403);
    await request(t.app).post(base()).set(c.writer).send(body).expect(201);
    await request(t.app).post(base()).send(body).expect(401);
    await request(t.app).post(base()).set(c.b.admin.auth).send(body).expect(404);
  });

  it('lets a draft be incomplete and asks everything of a published element', async () => {
    const draft = await createElement(t, c.a.editor.auth, site, { type: 'article', data: {} });
    expect(draft.status).toBe('draft');
    const refused = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type: 'article', name: 'x', data: {}, status: 'published' })
      .expect(422);
    expect(pathsOf(refused.body)).toEqual(['body.data.title']);
    const published = await newArticle({}, { status: 'published' });
    expect(published.status).toBe('published');
    expect((published as unknown as { published_at: string }).published_at).toEqual(expect.any(String));
  });

  it('reports every problem of the data at once', async () => {
    const video = await mediaRow(t, site, 'video');
    const theirs = await mediaRow(t, c.b.site);
    const notAPerson = await newArticle();
    const res = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({
        type: 'article',
        name: 'x',
        data: {
          title: 'x'.repeat(256),
          slug: 'Not A Slug',
          rating: 'high',
          when: 'yesterday',
          cover: video,
          author: notAPerson.id,
          related: [theirs, 'nope'],
          unknown: 1,
        },
      })
      .expect(422);
    expect(pathsOf(res.body)).toEqual(
      [
        'body.data.title',
        'body.data.slug',
        'body.data.rating',
        'body.data.when',
        'body.data.related.1',
        'body.data.unknown',
        'body.data.cover',
        'body.data.author',
        'body.data.related.0',
      ].sort(),
    );
    const messages = Object.fromEntries(
      (res.body.errors as { path: string; message: string }[]).map((error) => [error.path, error.message]),
    );
    expect(messages['body.data.cover']).toMatch(/kind image/);
    expect(messages['body.data.author']).toMatch(/type person/);
    expect(messages['body.data.related.0']).toMatch(/not an element of the site/);
  });

  it('takes ids of the site’s media and elements of the allowed types', async () => {
    const image = await mediaRow(t, site, 'image');
    const someone = await createElement(t, c.a.editor.auth, site, { type: 'person', data: { full_name: 'Ada' } });
    expect(someone.type_id).toBe(person.id);
    const element = await newArticle({ cover: image, author: someone.id.toUpperCase(), related: [someone.id] });
    expect(element.data).toMatchObject({ cover: image, author: someone.id, related: [someone.id] });
  });

  it('names the type and the locale properly', async () => {
    const noType = await request(t.app).post(base()).set(c.a.editor.auth).send({ name: 'x' }).expect(422);
    expect(pathsOf(noType.body)).toEqual(['body.type']);
    const badType = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type: 'nothing', name: 'x' })
      .expect(422);
    expect(pathsOf(badType.body)).toEqual(['body.type']);
    const badLocale = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type: 'article', name: 'x', locale: 'fr' })
      .expect(422);
    expect(pathsOf(badLocale.body)).toEqual(['body.locale']);
    await request(t.app).post(base()).set(c.a.editor.auth).send({ type: 'article' }).expect(422);
  });

  it('takes the type as type_id, as reads name it, or both fields naming the same type; differing, a 422', async () => {
    const byId = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type_id: person.id, name: 'By id', data: { full_name: 'Ada' } })
      .expect(201);
    expect(byId.body.type_id).toBe(person.id);
    const read = await request(t.app).get(at(byId.body.id)).set(c.a.editor.auth).expect(200);
    // What a read gives can be sent back as it is.
    const { type_id, name, data } = read.body;
    await request(t.app).post(base()).set(c.a.editor.auth).send({ type_id, name, data }).expect(201);
    for (const type of ['person', person.id])
      await request(t.app)
        .post(base())
        .set(c.a.editor.auth)
        .send({ type, type_id: person.id, name: 'Both', data: { full_name: 'Ada' } })
        .expect(201);
    for (const type of ['article', article.id]) {
      const differing = await request(t.app)
        .post(base())
        .set(c.a.editor.auth)
        .send({ type, type_id: person.id, name: 'x', data: { full_name: 'Ada' } })
        .expect(422);
      expect(pathsOf(differing.body)).toEqual(['body.type_id']);
    }
    const unknown = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type_id: '00000000-0000-4000-8000-000000000000', name: 'x' })
      .expect(422);
    expect(pathsOf(unknown.body)).toEqual(['body.type_id']);
    const notAnId = await request(t.app).post(base()).set(c.a.editor.auth).send({ type_id: 'person', name: 'x' });
    expect(notAnId.status).toBe(422);
    expect(pathsOf(notAnId.body)).toEqual(['body.type_id']);
  });

  it('keeps unique values unique among the type’s elements of one locale', async () => {
    const slug = `s-${unique()}`;
    await newArticle({ slug });
    const again = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ type: 'article', name: 'x', data: { slug } })
      .expect(422);
    expect(pathsOf(again.body)).toEqual(['body.data.slug']);
    await createElement(t, c.a.editor.auth, site, { type: 'article', locale: 'de', data: { slug } });
  });

  it('stores rich text sanitised', async () => {
    const element = await newArticle({
      body: '<p onclick="x()">Hi <script>alert(1)</script><a href="javascript:alert(1)">link</a><strong>!</strong></p>',
    });
    expect(element.data.body).toBe('<p>Hi <a>link</a><strong>!</strong></p>');
  });
});

describe('translations', () => {
  it('makes a translation of a master, of its type, in another locale, holding localized fields only', async () => {
    const master = await newArticle({ slug: `m-${unique()}` });
    const de = await createElement(t, c.a.editor.auth, site, {
      master_id: master.id,
      locale: 'de',
      data: { title: 'Hallo' },
    });
    expect(de).toMatchObject({ master_id: master.id, type_id: article.id, locale: 'de', data: { title: 'Hallo' } });
    const taken = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ master_id: master.id, locale: 'de', name: 'x' })
      .expect(409);
    expect(taken.body.detail).toMatch(/translation/);
    const notLocalized = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ master_id: master.id, locale: 'de-CH', name: 'x', data: { rating: 1 } })
      .expect(422);
    expect(pathsOf(notLocalized.body)).toEqual(['body.data.rating']);
    const sameLocale = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ master_id: master.id, locale: 'en', name: 'x' })
      .expect(422);
    expect(pathsOf(sameLocale.body)).toEqual(['body.locale']);
    const ofATranslation = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ master_id: de.id, locale: 'de-CH', name: 'x' })
      .expect(422);
    expect(pathsOf(ofATranslation.body)).toEqual(['body.master_id']);
    const otherTypeId = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ master_id: master.id, type_id: person.id, locale: 'de-CH', name: 'x' })
      .expect(422);
    expect(pathsOf(otherTypeId.body)).toEqual(['body.type_id']);
  });
});

describe('changing', () => {
  it('replaces the fields given, keeps the others, and raises the version', async () => {
    const element = await newArticle({ rating: 4, slug: `c-${unique()}` });
    const res = await request(t.app)
      .patch(at(element.id))
      .set(c.a.editor.auth)
      .send({ name: 'Renamed', data: { rating: 5, when: '2024-05-01T10:00:00+02:00' } })
      .expect(200);
    expect(res.body).toMatchObject({ name: 'Renamed', version: 2, updated_by: c.a.editor.user.id });
    expect(res.body.data).toEqual({ ...element.data, rating: 5, when: '2024-05-01T10:00:00+02:00' });
    expect(res.headers.etag).toBe('"2"');
    const invalid = await request(t.app)
      .patch(at(element.id))
      .set(c.a.editor.auth)
      .send({ data: { rating: 'x' } })
      .expect(422);
    expect(pathsOf(invalid.body)).toEqual(['body.data.rating']);
  });

  it('publishes, unpublishes and archives', async () => {
    const element = await createElement(t, c.a.editor.auth, site, { type: 'article', data: {} });
    await request(t.app).patch(at(element.id)).set(c.a.editor.auth).send({ status: 'published' }).expect(422);
    const published = await request(t.app)
      .patch(at(element.id))
      .set(c.a.editor.auth)
      .send({ status: 'published', data: { title: 'Now' } })
      .expect(200);
    expect(published.body.published_at).toEqual(expect.any(String));
    const again = await request(t.app).patch(at(element.id)).set(c.a.editor.auth).send({ name: 'y' }).expect(200);
    expect(again.body.published_at).toBe(published.body.published_at);
    const draft = await request(t.app).patch(at(element.id)).set(c.a.editor.auth).send({ status: 'draft' }).expect(200);
    expect(draft.body.published_at).toBeNull();
    const archived = await request(t.app)
      .patch(at(element.id))
      .set(c.a.editor.auth)
      .send({ status: 'archived' })
      .expect(200);
    expect(archived.body.status).toBe('archived');
  });

  it('answers 412 when someone saved since the version the change is based on', async () => {
    const element = await newArticle();
    await request(t.app)
      .patch(at(element.id))
      .set(c.a.editor.auth)
      .set('If-Match', '"1"')
      .send({ name: 'a' })
      .expect(200);
    const lost = await request(t.app)
      .patch(at(element.id))
      .set(c.a.admin.auth)
      .set('If-Match', '"1"')
      .send({ name: 'b' })
      .expect(412);
    expect(lost.body.type).toBe('/problems/precondition-failed');
    const current = await request(t.app).get(at(element.id)).set(c.a.admin.auth).expect(200);
    expect(current.body.name).toBe('a');
    await request(t.app)
      .patch(at(element.id))
      .set(c.a.admin.auth)
      .set('If-Match', current.headers.etag!)
      .send({ name: 'b' })
      .expect(200);
  });

  it('lets authors change only the elements they made', async () => {
    const theirs = await createElement(t, c.author.auth, site, { type: 'article', data: {} });
    await request(t.app).patch(at(theirs.id)).set(c.author.auth).send({ name: 'mine' }).expect(200);
    await request(t.app).patch(at(theirs.id)).set(c.otherAuthor.auth).send({ name: 'not mine' }).expect(403);
    await request(t.app).patch(at(theirs.id)).set(c.a.editor.auth).send({ name: 'editor' }).expect(200);
    await request(t.app).patch(at(theirs.id)).set(c.b.admin.auth).send({ name: 'stranger' }).expect(404);
    await request(t.app).patch(at(theirs.id)).set(c.reader).send({ name: 'reader' }).expect(403);
    await request(t.app).delete(at(theirs.id)).set(c.otherAuthor.auth).expect(403);
  });
});

describe('listing', () => {
  let listSite: Site;
  let items: ElementRow[];
  const list = (query: string, auth = c.a.admin.auth) =>
    request(t.app).get(`/${listSite.slug}/elements/?${query}`).set(auth);

  beforeAll(async () => {
    listSite = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de']);
    await createType(t, c.a.admin.auth, listSite, {
      api_id: 'product',
      fields: [
        { id: 'price', label: 'Price', type: 'number' },
        { id: 'color', label: 'Color', type: 'text' },
        { id: 'sold', label: 'Sold', type: 'boolean' },
        { id: 'from', label: 'From', type: 'datetime' },
      ],
    });
    await createType(t, c.a.admin.auth, listSite, { api_id: 'other' });
    items = [];
    const rows = [
      { name: 'Banana', data: { price: 9, color: 'yellow', sold: true, from: '2024-01-01T00:00:00Z' } },
      { name: 'apple', data: { price: 10, color: 'red', from: '2024-01-01T01:00:00+02:00' } },
      { name: 'Cherry', data: { price: 100, color: 'dark red', sold: false } },
      { name: 'Date', data: { color: 'brown' }, status: 'published' },
    ];
    for (const row of rows) items.push(await createElement(t, c.a.admin.auth, listSite, { type: 'product', ...row }));
    await createElement(t, c.a.admin.auth, listSite, { type: 'other', name: 'Other', locale: 'de' });
  });

  const names = (res: request.Response) => (res.body.items as ElementRow[]).map((item) => item.name);

  it('pages through everything, oldest first', async () => {
    const ids = await expectPaginates(t, c.a.admin.auth, `/${listSite.slug}/elements/`);
    expect(ids.slice(0, 4)).toEqual(items.map((item) => item.id));
  });

  it('filters by type, status, locale and name', async () => {
    expect(names(await list('type=other'))).toEqual(['Other']);
    expect(names(await list('status=published'))).toEqual(['Date']);
    expect(names(await list('locale=de'))).toEqual(['Other']);
    expect(names(await list('q=ERR'))).toEqual(['Cherry']);
    const byId = await list(`type=${items[0]!.type_id}&q=an`);
    expect(names(byId)).toEqual(['Banana']);
  });

  it('filters by field values, numbers as numbers and date-times in time order', async () => {
    expect(names(await list('type=product&filter[price][gt]=9.5'))).toEqual(['apple', 'Cherry']);
    expect(names(await list('type=product&filter[price][lte]=10'))).toEqual(['Banana', 'apple']);
    expect(names(await list('type=product&filter[price]=100'))).toEqual(['Cherry']);
    expect(names(await list('type=product&filter[color][in]=red,brown'))).toEqual(['apple', 'Date']);
    expect(names(await list('type=product&filter[color][contains]=RED'))).toEqual(['apple', 'Cherry']);
    expect(names(await list('type=product&filter[sold]=false'))).toEqual(['Cherry']);
    expect(names(await list('type=product&filter[price][exists]=false'))).toEqual(['Date']);
    expect(names(await list('type=product&filter[color][ne]=red'))).toEqual(['Banana', 'Cherry', 'Date']);
    // 01:00+02:00 is 23:00 the day before, so it comes before Banana's midnight.
    expect(names(await list('type=product&filter[from][lt]=2024-01-01T00:00:00Z'))).toEqual(['apple']);
  });

  it('explains filters it cannot apply', async () => {
    const withoutType = await list('filter[price]=1').expect(422);
    expect(pathsOf(withoutType.body)).toEqual(['query.filter[price]']);
    const bad = await list(
      'type=product&filter[nope]=1&filter[price][gt]=cheap&filter[price][near]=1&filterx=1',
    ).expect(422);
    expect(pathsOf(bad.body)).toEqual(
      ['query.filter[nope]', 'query.filter[price][gt]', 'query.filter[price][near]', 'query.filterx'].sort(),
    );
    await list('type=nothing').expect(422);
  });

  it('sorts by name or date either way, in pages', async () => {
    expect(names(await list('type=product&sort=name'))).toEqual(['Banana', 'Cherry', 'Date', 'apple']);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await list(
        `type=product&sort=-name&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      walked.push(...names(page));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(['apple', 'Date', 'Cherry', 'Banana']);
    const published: string[] = [];
    cursor = null;
    do {
      const page: request.Response = await list(
        `type=product&sort=-published_at&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      published.push(...names(page));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(published[0]).toBe('Date');
    expect(published.sort()).toEqual(['Banana', 'Cherry', 'Date', 'apple']);
    await list('sort=color').expect(422);
  });

  it('is readable with content:read, not without, nor by other tenants', async () => {
    await list('', c.reader).expect(200);
    await list('', c.noScope).expect(403);
    await list('', c.b.admin.auth).expect(404);
    await request(t.app).get(`/${listSite.slug}/elements/`).expect(401);
    expect(idsOf((await list('type=product')).body)).toHaveLength(4);
  });
});

describe('reading one', () => {
  it('reads an element with its ETag; another tenant’s is a 404', async () => {
    const element = await newArticle();
    const res = await request(t.app).get(at(element.id)).set(c.reader).expect(200);
    expect(res.body.id).toBe(element.id);
    expect(res.headers.etag).toBe('"1"');
    const theirType = await createType(t, c.b.admin.auth, c.b.site);
    const theirs = await createElement(t, c.b.admin.auth, c.b.site, { type: theirType.id });
    await request(t.app).get(at(theirs.id)).set(c.a.admin.auth).expect(404);
    await request(t.app).get(`/${c.b.site.slug}/elements/${theirs.id}`).set(c.a.admin.auth).expect(404);
  });
});

describe('deleting', () => {
  it('refuses to delete an element others refer to, naming them; force removes every use', async () => {
    const ada = await createElement(t, c.a.editor.auth, site, { type: 'person', data: { full_name: 'Ada' } });
    const bob = await createElement(t, c.a.editor.auth, site, { type: 'person', data: { full_name: 'Bob' } });
    const one = await newArticle({ author: ada.id, related: [bob.id, ada.id, bob.id] });
    const two = await newArticle({ related: [ada.id] });
    const refused = await request(t.app).delete(at(ada.id)).set(c.a.editor.auth).expect(409);
    expect(refused.body.type).toBe('/problems/element-in-use');
    expect(
      (refused.body.references as { id: string; path: string }[]).map((ref) => `${ref.id} ${ref.path}`).sort(),
    ).toEqual([`${one.id} data.author`, `${one.id} data.related.1`, `${two.id} data.related.0`].sort());
    await request(t.app)
      .delete(`${at(ada.id)}/force`)
      .set(c.a.editor.auth)
      .expect(204);
    await request(t.app).get(at(ada.id)).set(c.a.editor.auth).expect(404);
    const after = await request(t.app).get(at(one.id)).set(c.a.editor.auth).expect(200);
    expect(after.body.data).toMatchObject({ author: null, related: [bob.id, bob.id] });
    expect(after.body.version).toBe(2);
    const afterTwo = await request(t.app).get(at(two.id)).set(c.a.editor.auth).expect(200);
    expect(afterTwo.body.data.related).toEqual([]);
    // Bob is still referred to at his new places, and so still protected.
    const bobRefs = await request(t.app).delete(at(bob.id)).set(c.a.editor.auth).expect(409);
    expect((bobRefs.body.references as { path: string }[]).map((ref) => ref.path).sort()).toEqual([
      'data.related.0',
      'data.related.1',
    ]);
  });

  it('deletes an unused element with its translations', async () => {
    const master = await newArticle();
    const de = await createElement(t, c.a.editor.auth, site, { master_id: master.id, locale: 'de', data: {} });
    await request(t.app).delete(at(master.id)).set(c.a.editor.auth).expect(204);
    await request(t.app).get(at(de.id)).set(c.a.editor.auth).expect(404);
    await request(t.app).delete(at(master.id)).set(c.a.editor.auth).expect(404);
  });

  it('keeps a media item an element uses from being deleted without force', async () => {
    const image = await mediaRow(t, site, 'image');
    const element = await newArticle({ cover: image });
    const refused = await request(t.app).delete(`/${site.slug}/media/${image}`).set(c.a.editor.auth).expect(409);
    expect(refused.body.references).toEqual([
      { media_id: image, type: 'element', id: element.id, detail: expect.stringContaining('data.cover') },
    ]);
    await request(t.app).delete(`/${site.slug}/media/${image}?force=true`).set(c.a.editor.auth).expect(204);
    const after = await request(t.app).get(at(element.id)).set(c.a.editor.auth).expect(200);
    expect(after.body.data.cover).toBe(image);
  });
});
