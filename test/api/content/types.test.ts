// Content Types through HTTP: who reads and who shapes them, the schema
// checks (every problem at once, with paths), validate without saving,
// changes that existing elements must survive (409 naming them) and If-Match,
// deletion refused while in use, dependencies, copies (same site, another
// site with the types it refers to) and distribution by global admins (a copy
// where a site lacks the type, its new fields where it has it, refused per site
// when its elements would fail them).
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  pathsOf,
  type ContentCast,
  type ContentTypeRow,
} from '../../helpers/content.ts';
import { newSite } from '../../helpers/factories.ts';
import { expectPaginates, unique } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
});
afterAll(() => stopTestApp(t));

const base = (slug: string) => `/${slug}/contenttypes/`;

const articleFields = [
  { id: 'title', label: 'Title', type: 'text', required: true, validations: { max_length: 120 } },
  { id: 'views', label: 'Views', type: 'integer', validations: { min: 0 } },
  { id: 'kind', label: 'Kind', type: 'enum', values: ['news', 'story'] },
];

describe('creating', () => {
  it('creates a type with its fields, defaults filled in, and answers where it is with its version', async () => {
    const res = await request(t.app)
      .post(base(c.a.site.slug))
      .set(c.a.editor.auth)
      .send({ name: 'Article', api_id: `article_${unique()}`, fields: articleFields })
      .expect(201);
    expect(res.headers.location).toBe(`/${c.a.site.slug}/contenttypes/${res.body.id}`);
    expect(res.headers.etag).toBe('"1"');
    expect(res.body).toMatchObject({ site_id: c.a.site.id, name: 'Article', version: 1, description: '' });
    expect(res.body.fields[0]).toEqual({
      id: 'title',
      label: 'Title',
      type: 'text',
      required: true,
      localized: false,
      unique: false,
      validations: { max_length: 120 },
    });
  });

  it('lets editors, admins and content:write service accounts shape types, not authors or readers', async () => {
    await createType(t, c.a.admin.auth, c.a.site);
    await createType(t, c.writer, c.a.site);
    for (const auth of [c.author.auth, c.reader]) {
      await request(t.app)
        .post(base(c.a.site.slug))
        .set(auth)
        .send({ name: 'No', api_id: `no_${unique()}` })
        .expect(403);
    }
    await request(t.app).post(base(c.a.site.slug)).send({ name: 'No', api_id: 'no' }).expect(401);
    await request(t.app).post(base(c.a.site.slug)).set(c.b.admin.auth).send({ name: 'No', api_id: 'no' }).expect(404);
  });

  it('refuses a taken api_id with 409 and a malformed one with 422', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site);
    await request(t.app)
      .post(base(c.a.site.slug))
      .set(c.a.editor.auth)
      .send({ name: 'Again', api_id: type.api_id })
      .expect(409);
    const bad = await request(t.app)
      .post(base(c.a.site.slug))
      .set(c.a.editor.auth)
      .send({ name: 'Bad', api_id: 'Not-Snake' })
      .expect(422);
    expect(pathsOf(bad.body)).toEqual(['body.api_id']);
  });

  it('reports every problem of a schema at once, each with its path', async () => {
    const res = await request(t.app)
      .post(base(c.a.site.slug))
      .set(c.a.editor.auth)
      .send({
        name: 'Broken',
        api_id: `broken_${unique()}`,
        fields: [
          { id: 'title', label: 'Title', type: 'text', validations: { max_length: 300 } },
          { id: 'title', label: 'Again', type: 'text' },
          { id: 'count', label: 'Count', type: 'integer', validations: { pattern: 'a+', min: 5, max: 1 } },
          { id: 'code', label: 'Code', type: 'text', validations: { pattern: '(a+)+$' } },
          { id: 'broken', label: 'Broken', type: 'text', validations: { pattern: '([' } },
          { id: 'choice', label: 'Choice', type: 'enum' },
          { id: 'flag', label: 'Flag', type: 'boolean', default: 'yes' },
          { id: 'link', label: 'Link', type: 'reference', validations: { reference_types: ['nowhere'] } },
          { id: 'blob', label: 'Blob', type: 'json', unique: true },
          {
            id: 'deep',
            label: 'Deep',
            type: 'list',
            of: {
              type: 'object',
              fields: [
                {
                  id: 'inner',
                  label: 'Inner',
                  type: 'list',
                  of: { type: 'list', of: { type: 'list', of: { type: 'text' } } },
                },
              ],
            },
          },
        ],
      })
      .expect(422);
    expect(pathsOf(res.body)).toEqual(
      [
        'body.fields.0.validations.max_length',
        'body.fields.1.id',
        'body.fields.2.validations.pattern',
        'body.fields.2.validations.min',
        'body.fields.3.validations.pattern',
        'body.fields.4.validations.pattern',
        'body.fields.5.values',
        'body.fields.6.default',
        'body.fields.7.validations.reference_types',
        'body.fields.8.unique',
        'body.fields.9.of.fields.0.of.of',
      ].sort(),
    );
    const messages = Object.fromEntries(
      (res.body.errors as { path: string; message: string }[]).map((error) => [error.path, error.message]),
    );
    expect(messages['body.fields.3.validations.pattern']).toMatch(/exponential/);
    expect(messages['body.fields.4.validations.pattern']).toMatch(/not a valid regular expression/);
    expect(messages['body.fields.7.validations.reference_types']).toMatch(/no content type nowhere/);
  });

  it('accepts every field type, nested lists and objects, and a type that refers to itself', async () => {
    const apiId = `everything_${unique()}`;
    const type = await createType(t, c.a.editor.auth, c.a.site, {
      api_id: apiId,
      fields: [
        { id: 'a', label: 'A', type: 'text', unique: true },
        { id: 'b', label: 'B', type: 'long_text' },
        { id: 'c', label: 'C', type: 'rich_text' },
        { id: 'd', label: 'D', type: 'integer', default: 3 },
        { id: 'e', label: 'E', type: 'number' },
        { id: 'f', label: 'F', type: 'boolean', default: false },
        { id: 'g', label: 'G', type: 'date', validations: { min: '2020-01-01' } },
        { id: 'h', label: 'H', type: 'datetime' },
        { id: 'i', label: 'I', type: 'enum', values: ['x', 'y'], default: 'x' },
        { id: 'j', label: 'J', type: 'slug' },
        { id: 'k', label: 'K', type: 'email' },
        { id: 'l', label: 'L', type: 'url' },
        { id: 'm', label: 'M', type: 'color' },
        { id: 'n', label: 'N', type: 'json' },
        { id: 'o', label: 'O', type: 'media', validations: { media_kinds: ['image'] } },
        { id: 'p', label: 'P', type: 'reference', validations: { reference_types: [apiId] } },
        { id: 'q', label: 'Q', type: 'list', of: { type: 'text' }, validations: { max_items: 3 } },
        { id: 'r', label: 'R', type: 'object', fields: [{ id: 's', label: 'S', type: 'integer', required: true }] },
      ],
    });
    expect(type.fields).toHaveLength(18);
  });
});

describe('validate', () => {
  const validate = (body: object) =>
    request(t.app)
      .post(`${base(c.a.site.slug)}validate`)
      .set(c.a.editor.auth)
      .send(body)
      .expect(200);

  it('checks a schema without saving it', async () => {
    const before = await request(t.app)
      .get(`${base(c.a.site.slug)}?include_total=true`)
      .set(c.a.editor.auth);
    const ok = await validate({ fields: articleFields });
    expect(ok.body).toMatchObject({ valid: true, errors: [] });
    expect(ok.body.fields[1]).toMatchObject({ id: 'views', required: false });
    const bad = await validate({
      fields: [
        { id: 'x', type: 'nope' },
        { id: 'Y', label: 'Y', type: 'text' },
      ],
    });
    expect(bad.body.valid).toBe(false);
    expect(pathsOf(bad.body)).toEqual(['fields.0.label', 'fields.0.type', 'fields.1.id']);
    const after = await request(t.app)
      .get(`${base(c.a.site.slug)}?include_total=true`)
      .set(c.a.editor.auth);
    expect(after.body.total).toBe(before.body.total);
  });

  it('checks sample data against the fields, by the draft or the publish rules', async () => {
    const fields = [
      ...articleFields,
      { id: 'when', label: 'When', type: 'date' },
      { id: 'site', label: 'Site', type: 'url' },
      { id: 'mail', label: 'Mail', type: 'email' },
      { id: 'colour', label: 'Colour', type: 'color' },
      { id: 'tags', label: 'Tags', type: 'list', of: { type: 'slug' }, validations: { min_items: 1 } },
      {
        id: 'code',
        label: 'Code',
        type: 'text',
        validations: { pattern: '[A-Z]{3}', message: 'three capitals, like ABC' },
      },
    ];
    const sample = {
      views: -1,
      kind: 'poem',
      when: '2023-02-30',
      site: 'ftp://example.com',
      mail: 'not-an-address',
      colour: 'red',
      tags: ['fine', 'Not A Slug'],
      code: 'abc',
      extra: 1,
    };
    const draft = await validate({ fields, sample, mode: 'draft' });
    expect(pathsOf(draft.body)).toEqual(
      [
        'sample.views',
        'sample.kind',
        'sample.when',
        'sample.site',
        'sample.mail',
        'sample.colour',
        'sample.tags.1',
        'sample.code',
        'sample.extra',
      ].sort(),
    );
    const byPath = Object.fromEntries(
      (draft.body.errors as { path: string; message: string }[]).map((error) => [error.path, error.message]),
    );
    expect(byPath['sample.code']).toBe('three capitals, like ABC');
    const publish = await validate({ fields, sample: { tags: [] }, mode: 'publish' });
    expect(pathsOf(publish.body)).toEqual(['sample.tags', 'sample.title']);
    const fine = await validate({
      fields,
      sample: { title: 'Hello', tags: ['a'], when: '2024-02-29', code: 'ABC', colour: '#ABCDEF' },
    });
    expect(fine.body).toMatchObject({ valid: true, errors: [] });
  });

  it('takes the body create takes, and reports every problem at once, the api_id’s among them', async () => {
    const body = { name: 'Article', api_id: `article_${unique()}`, description: 'Stories', fields: articleFields };
    expect((await validate(body)).body).toMatchObject({ valid: true, errors: [] });
    const bad = await validate({
      name: ' ',
      api_id: 'Not-Snake',
      description: 'x'.repeat(2001),
      fields: [{ id: 'Y', label: 'Y', type: 'text' }],
    });
    expect(bad.body.valid).toBe(false);
    expect(pathsOf(bad.body)).toEqual(['api_id', 'description', 'fields.0.id', 'name']);
    const taken = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const again = await validate({ ...body, api_id: taken.api_id });
    expect(pathsOf(again.body)).toEqual(['api_id']);
    expect(again.body.errors[0].message).toMatch(/already has a content type/);
    // What validate calls valid, create makes.
    await request(t.app).post(base(c.a.site.slug)).set(c.a.editor.auth).send(body).expect(201);
  });

  it('is for those who shape types', async () => {
    await request(t.app)
      .post(`${base(c.a.site.slug)}validate`)
      .set(c.author.auth)
      .send({ fields: [] })
      .expect(403);
    await request(t.app)
      .post(`${base(c.a.site.slug)}validate`)
      .set(c.a.editor.auth)
      .send({ fields: 'no' })
      .expect(422);
  });
});

describe('reading', () => {
  it('lists the site’s types in pages, finds them by name, and hides other tenants’', async () => {
    const site = await newSite(t, c.a.tenant);
    const made = [];
    for (const name of ['Alpha', 'Beta', 'Gamma']) made.push(await createType(t, c.a.admin.auth, site, { name }));
    const ids = await expectPaginates(t, c.a.admin.auth, base(site.slug));
    expect(ids).toEqual(made.map((type) => type.id));
    const found = await request(t.app)
      .get(`${base(site.slug)}?q=bet`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(found.body.items.map((type: ContentTypeRow) => type.id)).toEqual([made[1]!.id]);
    await request(t.app).get(base(site.slug)).set(c.b.admin.auth).expect(404);
    await request(t.app).get(base(site.slug)).expect(401);
    await request(t.app).get(base(c.a.site.slug)).set(c.noScope).expect(403);
  });

  it('reads one type with its ETag; another tenant’s id is a 404 in any site', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site);
    const res = await request(t.app)
      .get(`${base(c.a.site.slug)}${type.id}`)
      .set(c.author.auth)
      .expect(200);
    expect(res.headers.etag).toBe('"1"');
    expect(res.body.id).toBe(type.id);
    await request(t.app)
      .get(`${base(c.a.site.slug)}${type.id}`)
      .set(c.reader)
      .expect(200);
    const theirs = await createType(t, c.b.admin.auth, c.b.site);
    await request(t.app)
      .get(`${base(c.a.site.slug)}${theirs.id}`)
      .set(c.a.admin.auth)
      .expect(404);
    await request(t.app)
      .get(`${base(c.a.site.slug)}not-a-uuid`)
      .set(c.a.admin.auth)
      .expect(422);
  });
});

describe('changing', () => {
  it('renames without a new version, and raises the version when the fields change', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const at = `${base(c.a.site.slug)}${type.id}`;
    const renamed = await request(t.app).patch(at).set(c.a.editor.auth).send({ name: 'Renamed' }).expect(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', version: 1 });
    const grown = await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .send({ fields: [...articleFields, { id: 'summary', label: 'Summary', type: 'long_text' }] })
      .expect(200);
    expect(grown.body.version).toBe(2);
    expect(grown.headers.etag).toBe('"2"');
    await request(t.app).patch(at).set(c.author.auth).send({ name: 'Mine' }).expect(403);
    await request(t.app).patch(at).set(c.a.editor.auth).send({}).expect(422);
    await request(t.app).patch(at).set(c.a.editor.auth).send({ api_id: 'other' }).expect(422);
  });

  it('answers 412 to a change based on an older version', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const at = `${base(c.a.site.slug)}${type.id}`;
    await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .set('If-Match', '"1"')
      .send({ fields: articleFields.slice(0, 2) })
      .expect(200);
    const stale = await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .set('If-Match', '"1"')
      .send({ name: 'Late' })
      .expect(412);
    expect(stale.body.detail).toMatch(/version 2/);
    await request(t.app).patch(at).set(c.a.editor.auth).set('If-Match', 'garbage').send({ name: 'x' }).expect(400);
  });

  it('never matches a weak ETag in If-Match (strong comparison), but takes a list naming the current one', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const at = `${base(c.a.site.slug)}${type.id}`;
    const weak = await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .set('If-Match', 'W/"1"')
      .send({ name: 'Weak' })
      .expect(412);
    expect(weak.body.detail).toMatch(/weak/);
    expect((await request(t.app).get(at).set(c.a.editor.auth).expect(200)).body.name).not.toBe('Weak');
    const listed = await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .set('If-Match', 'W/"1", "7", "1"')
      .send({ name: 'Listed' })
      .expect(200);
    expect(listed.body.name).toBe('Listed');
    await request(t.app).patch(at).set(c.a.editor.auth).set('If-Match', '"7", "8"').send({ name: 'x' }).expect(412);
  });

  it('refuses a change existing elements would not survive, naming them; records the version elements satisfy', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const at = `${base(c.a.site.slug)}${type.id}`;
    const story = await createElement(t, c.a.editor.auth, c.a.site, {
      type: type.api_id,
      data: { title: 'A story', kind: 'story', views: 10 },
      status: 'published',
    });
    const draft = await createElement(t, c.a.editor.auth, c.a.site, { type: type.id, data: { views: 5 } });
    // The enum loses 'story', and views becomes text: both elements fail.
    const changed = articleFields.map((field) =>
      field.id === 'kind'
        ? { ...field, values: ['news'] }
        : field.id === 'views'
          ? { id: 'views', label: 'Views', type: 'text' }
          : field,
    );
    const refused = await request(t.app).patch(at).set(c.a.editor.auth).send({ fields: changed }).expect(409);
    expect(refused.body).toMatchObject({ element_count: 2, type: '/problems/schema-change-conflict' });
    expect(refused.body.element_ids.sort()).toEqual([story.id, draft.id].sort());
    // A field made required: drafts may stay incomplete, a published element without it may not.
    const bare = await createElement(t, c.a.editor.auth, c.a.site, {
      type: type.id,
      data: { title: 'Bare' },
      status: 'published',
    });
    const required = articleFields.map((field) => (field.id === 'views' ? { ...field, required: true } : field));
    const missing = await request(t.app).patch(at).set(c.a.editor.auth).send({ fields: required }).expect(409);
    expect(missing.body).toMatchObject({ element_count: 1, element_ids: [bare.id] });
    expect(missing.body.problems).toEqual([
      { element_id: bare.id, path: 'data.views', message: 'is required to publish' },
    ]);
    const additive = await request(t.app)
      .patch(at)
      .set(c.a.editor.auth)
      .send({ fields: [...articleFields, { id: 'extra', label: 'Extra', type: 'boolean' }] })
      .expect(200);
    const element = await request(t.app).get(`/${c.a.site.slug}/elements/${story.id}`).set(c.a.editor.auth);
    expect(element.body.schema_version).toBe(additive.body.version);
    // A field made unique while two elements share its value.
    await createElement(t, c.a.editor.auth, c.a.site, { type: type.id, data: { title: 'A story' } });
    const unique = articleFields.map((field) => (field.id === 'title' ? { ...field, unique: true } : field));
    const repeated = await request(t.app).patch(at).set(c.a.editor.auth).send({ fields: unique }).expect(409);
    expect(repeated.body.element_count).toBe(1);
  });
});

describe('deleting', () => {
  it('refuses while elements exist or other types refer to it, then deletes', async () => {
    const target = await createType(t, c.a.editor.auth, c.a.site);
    const referring = await createType(t, c.a.editor.auth, c.a.site, {
      fields: [{ id: 'link', label: 'Link', type: 'reference', validations: { reference_types: [target.api_id] } }],
    });
    const element = await createElement(t, c.a.editor.auth, c.a.site, { type: target.id });
    const inUse = await request(t.app)
      .delete(`${base(c.a.site.slug)}${target.id}`)
      .set(c.a.editor.auth)
      .expect(409);
    expect(inUse.body.in_use).toEqual({ elements: 1, referring_types: [referring.api_id] });
    await request(t.app).delete(`/${c.a.site.slug}/elements/${element.id}`).set(c.a.editor.auth).expect(204);
    await request(t.app)
      .delete(`${base(c.a.site.slug)}${referring.id}`)
      .set(c.a.editor.auth)
      .expect(204);
    await request(t.app)
      .delete(`${base(c.a.site.slug)}${target.id}`)
      .set(c.author.auth)
      .expect(403);
    await request(t.app)
      .delete(`${base(c.a.site.slug)}${target.id}`)
      .set(c.b.admin.auth)
      .expect(404);
    await request(t.app)
      .delete(`${base(c.a.site.slug)}${target.id}`)
      .set(c.a.editor.auth)
      .expect(204);
    await request(t.app)
      .get(`${base(c.a.site.slug)}${target.id}`)
      .set(c.a.editor.auth)
      .expect(404);
  });
});

describe('dependencies', () => {
  it('tells what the type refers to and what refers to it, with counts', async () => {
    const author = await createType(t, c.a.editor.auth, c.a.site);
    const post = await createType(t, c.a.editor.auth, c.a.site, {
      fields: [
        { id: 'by', label: 'By', type: 'reference', validations: { reference_types: [author.api_id] } },
        {
          id: 'more',
          label: 'More',
          type: 'list',
          of: { type: 'reference', validations: { reference_types: [author.api_id] } },
        },
      ],
    });
    const someone = await createElement(t, c.a.editor.auth, c.a.site, { type: author.id });
    await createElement(t, c.a.editor.auth, c.a.site, { type: post.id, data: { by: someone.id } });
    const ofPost = await request(t.app)
      .get(`${base(c.a.site.slug)}${post.id}/dependencies`)
      .set(c.reader)
      .expect(200);
    expect(ofPost.body.refers_to).toEqual([{ id: author.id, api_id: author.api_id, name: expect.any(String) }]);
    const ofAuthor = await request(t.app)
      .get(`${base(c.a.site.slug)}${author.id}/dependencies`)
      .set(c.author.auth)
      .expect(200);
    expect(ofAuthor.body).toEqual({
      refers_to: [],
      referred_by: {
        types: [{ id: post.id, api_id: post.api_id, name: expect.any(String) }],
        element_count: 1,
        referring_element_count: 1,
        page_count: 0,
      },
    });
    await request(t.app)
      .get(`${base(c.a.site.slug)}${author.id}/dependencies`)
      .set(c.b.admin.auth)
      .expect(404);
  });
});

describe('copying', () => {
  it('copies within the site under a new api_id only', async () => {
    const type = await createType(t, c.a.editor.auth, c.a.site, { fields: articleFields });
    const at = `${base(c.a.site.slug)}${type.id}/copy`;
    const same = await request(t.app).post(at).set(c.a.editor.auth).send({}).expect(422);
    expect(pathsOf(same.body)).toEqual(['body.api_id']);
    const copy = await request(t.app)
      .post(at)
      .set(c.a.editor.auth)
      .send({ api_id: `${type.api_id}_copy`, name: 'Copy' })
      .expect(201);
    expect(copy.body.type).toMatchObject({ api_id: `${type.api_id}_copy`, name: 'Copy', fields: type.fields });
    expect(copy.headers.location).toBe(`/${c.a.site.id}/contenttypes/${copy.body.type.id}`);
    await request(t.app)
      .post(at)
      .set(c.a.editor.auth)
      .send({ api_id: `${type.api_id}_copy` })
      .expect(409);
  });

  it('copies to another site of the tenant with the types it refers to, mapping those the target has', async () => {
    const target = await newSite(t, c.a.tenant);
    const person = await createType(t, c.a.admin.auth, c.a.site);
    const tag = await createType(t, c.a.admin.auth, c.a.site);
    const ref = (apiId: string) => ({ reference_types: [apiId] });
    const post = await createType(t, c.a.admin.auth, c.a.site, {
      fields: [
        { id: 'by', label: 'By', type: 'reference', validations: ref(person.api_id) },
        { id: 'tags', label: 'Tags', type: 'list', of: { type: 'reference', validations: ref(tag.api_id) } },
      ],
    });
    await createType(t, c.a.admin.auth, target, { api_id: tag.api_id });
    const res = await request(t.app)
      .post(`${base(c.a.site.slug)}${post.id}/copy`)
      .set(c.a.admin.auth)
      .send({ target_site: target.slug })
      .expect(201);
    expect(res.body.result).toMatchObject({
      site_id: target.id,
      status: 'created',
      copied_along: [{ api_id: person.api_id, id: expect.any(String) }],
      mapped: [tag.api_id],
    });
    const there = await request(t.app)
      .get(`${base(target.slug)}?limit=200`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(there.body.items.map((type: ContentTypeRow) => type.api_id).sort()).toEqual(
      [post.api_id, person.api_id, tag.api_id].sort(),
    );
    // Another tenant's site, or one the editor does not reach, is not a target.
    const refused = await request(t.app)
      .post(`${base(c.a.site.slug)}${post.id}/copy`)
      .set(c.a.admin.auth)
      .send({ target_site: c.b.site.slug })
      .expect(422);
    expect(pathsOf(refused.body)).toEqual(['body.target_site']);
  });
});

describe('distribute', () => {
  it('copies a type to sites that lack it, brings it up to date where it is, reports sites that do not exist', async () => {
    const source = await createType(t, c.a.admin.auth, c.a.site, { fields: articleFields });
    const other = await newSite(t, c.a.tenant);
    await createType(t, c.a.admin.auth, other, { api_id: source.api_id });
    const missing = '00000000-0000-4000-8000-000000000000';
    const res = await request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.admin.auth)
      .send({ type_id: source.id, tenant_ids: [c.b.tenant.id], site_ids: [other.id, missing] })
      .expect(200);
    expect(res.body.created).toBe(1);
    const bySite = Object.fromEntries(
      (res.body.results as { site_id: string; status: string }[]).map((result) => [result.site_id, result.status]),
    );
    // The other site's type had no fields: it gets them all (it has no elements to fail them).
    expect(bySite).toEqual({ [c.b.site.id]: 'created', [other.id]: 'updated', [missing]: 'failed' });
    const again = await request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.admin.auth)
      .send({ type_id: source.id, tenant_ids: [c.b.tenant.id] })
      .expect(200);
    expect(again.body.created).toBe(0);
    await request(t.app)
      .post('/admin/content-types/distribute')
      .send({ type_id: source.id, tenant_ids: [c.b.tenant.id] })
      .expect(401);
    await request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.a.admin.auth)
      .send({ type_id: source.id, tenant_ids: [c.b.tenant.id] })
      .expect(403);
    await request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.admin.auth)
      .send({ type_id: source.id })
      .expect(422);
    await request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.admin.auth)
      .send({ type_id: missing, site_ids: [other.id] })
      .expect(404);
  });

  const distribute = (typeId: string, siteIds: string[]) =>
    request(t.app)
      .post('/admin/content-types/distribute')
      .set(c.admin.auth)
      .send({ type_id: typeId, site_ids: siteIds });
  const resultOf = (body: { results: { site_id: string }[] }, siteId: string) =>
    body.results.find((result) => result.site_id === siteId);

  it('brings a site with an older version the new optional fields as an edit would, its elements still read', async () => {
    const [title] = articleFields;
    const source = await createType(t, c.a.admin.auth, c.a.site, { fields: articleFields });
    const older = await newSite(t, c.a.tenant);
    const theirs = await createType(t, c.a.admin.auth, older, {
      api_id: source.api_id,
      fields: [
        { ...title, validations: { max_length: 80 } },
        { id: 'own', label: 'Own', type: 'text' },
      ],
    });
    const element = await createElement(t, c.a.admin.auth, older, {
      type: theirs.id,
      data: { title: 'Kept', own: 'mine' },
      status: 'published',
    });
    const res = await distribute(source.id, [older.id]).expect(200);
    expect(res.body).toMatchObject({ created: 0, updated: 1, unchanged: 0, refused: 0 });
    expect(resultOf(res.body, older.id)).toMatchObject({
      status: 'updated',
      type_id: theirs.id,
      version: 2,
      fields_added: ['views', 'kind'],
      fields_changed: ['title'],
      reasons: [],
    });
    const type = await request(t.app)
      .get(`${base(older.slug)}${theirs.id}`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(type.headers.etag).toBe('"2"');
    // The site's own field stays; the source's come after it, title as the source has it.
    expect(type.body.fields.map((field: { id: string }) => field.id)).toEqual(['title', 'own', 'views', 'kind']);
    expect(type.body.fields[0].validations).toEqual({ max_length: 120 });
    const read = await request(t.app).get(`/${older.slug}/elements/${element.id}`).set(c.a.admin.auth).expect(200);
    expect(read.body).toMatchObject({ data: { title: 'Kept', own: 'mine' }, schema_version: 2 });
    // A second distribution finds nothing to bring.
    const again = await distribute(source.id, [older.id]).expect(200);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 1, refused: 0 });
    expect(resultOf(again.body, older.id)).toMatchObject({ status: 'unchanged', version: 2, fields_added: [] });
  });

  it('refuses, for that site alone, a new required field its elements lack, leaving its type as it was', async () => {
    const [title] = articleFields;
    const summary = { id: 'summary', label: 'Summary', type: 'text', required: true };
    const source = await createType(t, c.a.admin.auth, c.a.site, { fields: [title, summary] });
    const used = await newSite(t, c.a.tenant);
    const empty = await newSite(t, c.a.tenant);
    const theirs = await createType(t, c.a.admin.auth, used, { api_id: source.api_id, fields: [title] });
    await createType(t, c.a.admin.auth, empty, { api_id: source.api_id, fields: [title] });
    const element = await createElement(t, c.a.admin.auth, used, {
      type: theirs.id,
      data: { title: 'Has no summary' },
      status: 'published',
    });
    const res = await distribute(source.id, [used.id, empty.id]).expect(200);
    expect(res.body).toMatchObject({ updated: 1, refused: 1 });
    expect(resultOf(res.body, empty.id)).toMatchObject({ status: 'updated', fields_added: ['summary'] });
    expect(resultOf(res.body, used.id)).toMatchObject({
      status: 'refused',
      type_id: theirs.id,
      version: 1,
      fields_added: [],
      element_count: 1,
      reasons: [{ element_id: element.id, path: 'data.summary', message: expect.any(String) }],
    });
    const type = await request(t.app)
      .get(`${base(used.slug)}${theirs.id}`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(type.body).toMatchObject({ version: 1, fields: [expect.objectContaining({ id: 'title' })] });
    expect(type.body.fields).toHaveLength(1);
    // Still refused next time, and still nothing applied.
    const again = await distribute(source.id, [used.id, empty.id]).expect(200);
    expect(again.body).toMatchObject({ unchanged: 1, refused: 1 });
  });

  it('copies along the types a new reference field names, where the site lacks them', async () => {
    const person = await createType(t, c.a.admin.auth, c.a.site);
    const byline = { id: 'by', label: 'By', type: 'reference', validations: { reference_types: [person.api_id] } };
    const source = await createType(t, c.a.admin.auth, c.a.site, { fields: [byline] });
    const site = await newSite(t, c.a.tenant);
    await createType(t, c.a.admin.auth, site, { api_id: source.api_id });
    const res = await distribute(source.id, [site.id]).expect(200);
    expect(resultOf(res.body, site.id)).toMatchObject({
      status: 'updated',
      fields_added: ['by'],
      copied_along: [{ api_id: person.api_id, id: expect.any(String) }],
      mapped: [],
    });
  });
});
