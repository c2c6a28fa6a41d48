// Pages Admin through HTTP: creating in the tree (paths, positions, slugs
// unique per siblings and locale, translations), the tree in one answer,
// renames and moves that rewrite the paths of a whole subtree, moves under
// itself refused, racing moves that cannot make a cycle, reorders, batch
// moves all or nothing, deletes (children need recursive), and the elements
// placed on a page: add, move between areas, remove, replace the layout.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  pathsOf,
  withLocales,
  type ContentCast,
} from '../../helpers/content.ts';
import { assignToSite, newSite } from '../../helpers/factories.ts';
import { expectPaginates, unique, type Auth } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;

type Page = { id: string; parent_id: string | null; position: number; slug: string; path: string; version: number };
type Node = Page & { element_count: number; children: Node[] };

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
});
afterAll(() => stopTestApp(t));

/** A new site of tenant A, reached by its editor and the author. */
async function freshSite(): Promise<Site> {
  const site = await withLocales(t, await newSite(t, c.a.tenant), ['en', 'de']);
  for (const caller of [c.a.editor, c.author]) await assignToSite(t, site, caller.user.id);
  return site;
}

async function create(site: Site, body: Record<string, unknown>, auth: Auth = c.a.admin.auth): Promise<Page> {
  const res = await request(t.app)
    .post(`/${site.slug}/pages/`)
    .set(auth)
    .send({ title: 'A page', ...body });
  if (res.status !== 201) throw new Error(`create page: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Page;
}

const tree = async (site: Site) =>
  (await request(t.app).get(`/${site.slug}/pages/tree`).set(c.a.admin.auth).expect(200)).body.items as Node[];

/** Each page of the tree as "path@position", depth first. */
const outline = (nodes: Node[]): string[] =>
  nodes.flatMap((node) => [`${node.path}@${node.position}`, ...outline(node.children)]);

const move = (site: Site, id: string, body: object, auth: Auth = c.a.admin.auth) =>
  request(t.app).put(`/${site.slug}/pages/${id}/move`).set(auth).send(body);

describe('creating', () => {
  it('builds paths from the slugs and places pages at the end or at a position', async () => {
    const site = await freshSite();
    const about = await create(site, { slug: 'about' });
    // Authors add pages anywhere; they change only their own.
    const people = await create(site, { slug: 'people', parent_id: about.id }, c.author.auth);
    expect(people.path).toBe('/about/people');
    const team = await create(site, { slug: 'team', parent_id: about.id });
    const contact = await create(site, { slug: 'contact' });
    const home = await create(site, { slug: 'home', position: 0 });
    expect(team).toMatchObject({ path: '/about/team', position: 1, parent_id: about.id });
    expect(home.position).toBe(0);
    expect(outline(await tree(site))).toEqual([
      '/home@0',
      '/about@1',
      '/about/people@0',
      '/about/team@1',
      '/contact@2',
    ]);
    expect(contact.path).toBe('/contact');
  });

  it('keeps slugs unique among siblings per locale, and checks what the body names', async () => {
    const site = await freshSite();
    const first = await create(site, { slug: 'same' });
    await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'same', title: 'x' })
      .expect(409);
    await create(site, { slug: 'same', locale: 'de' });
    await create(site, { slug: 'same', parent_id: first.id });
    const bad = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'Bad Slug', title: '', parent_id: '00000000-0000-4000-8000-000000000000' })
      .expect(422);
    expect(pathsOf(bad.body)).toEqual(['body.slug', 'body.title']);
    const noParent = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'x', title: 'x', parent_id: '00000000-0000-4000-8000-000000000000' })
      .expect(422);
    expect(pathsOf(noParent.body)).toEqual(['body.parent_id']);
    const badLocale = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'x', title: 'x', locale: 'fr' })
      .expect(422);
    expect(pathsOf(badLocale.body)).toEqual(['body.locale']);
  });

  it('makes translations of a master in other locales, once per locale', async () => {
    const site = await freshSite();
    const master = await create(site, { slug: 'about' });
    const de = await create(site, { slug: 'ueber', locale: 'de', master_id: master.id });
    expect(de).toMatchObject({ master_id: master.id, path: '/ueber' });
    await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'ueber-2', title: 'x', locale: 'de', master_id: master.id })
      .expect(409);
    const ofTranslation = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({ slug: 'x', title: 'x', locale: 'en', master_id: de.id })
      .expect(422);
    expect(pathsOf(ofTranslation.body)).toEqual(['body.master_id']);
  });
});

describe('reading', () => {
  it('lists pages in cursor pages with filters, and hides other tenants’', async () => {
    const site = await freshSite();
    const root = await create(site, { slug: 'root' });
    await create(site, { slug: 'child', parent_id: root.id, status: 'published' });
    await create(site, { slug: 'other', locale: 'de' });
    await expectPaginates(t, c.a.admin.auth, `/${site.slug}/pages/`);
    const list = (query: string) => request(t.app).get(`/${site.slug}/pages/?${query}`).set(c.reader).expect(200);
    const paths = (res: request.Response) => (res.body.items as Page[]).map((page) => page.path);
    expect(paths(await list('parent_id=root'))).toEqual(['/root', '/other']);
    expect(paths(await list(`parent_id=${root.id}`))).toEqual(['/root/child']);
    expect(paths(await list('status=published'))).toEqual(['/root/child']);
    expect(paths(await list('locale=de'))).toEqual(['/other']);
    expect(paths(await list('path=/root/child'))).toEqual(['/root/child']);
    expect(paths(await list('q=page'))).toHaveLength(3);
    await request(t.app).get(`/${site.slug}/pages/`).set(c.b.admin.auth).expect(404);
    await request(t.app).get(`/${site.slug}/pages/`).set(c.noScope).expect(403);
    await request(t.app).get(`/${site.slug}/pages/`).expect(401);
  });

  it('reads a page with its elements; another tenant’s is a 404', async () => {
    const site = await freshSite();
    const page = await create(site, { slug: 'p' });
    const res = await request(t.app).get(`/${site.slug}/pages/${page.id}`).set(c.a.editor.auth).expect(200);
    expect(res.body).toMatchObject({ id: page.id, elements: [] });
    expect(res.headers.etag).toBe('"1"');
    const theirs = await create(c.b.site, { slug: `b-${unique()}` }, c.b.admin.auth);
    await request(t.app).get(`/${site.slug}/pages/${theirs.id}`).set(c.a.admin.auth).expect(404);
  });
});

describe('renaming and moving', () => {
  it('rewrites the paths of the whole subtree when a slug changes, published pages included', async () => {
    const site = await freshSite();
    const docs = await create(site, { slug: 'docs' });
    const guide = await create(site, { slug: 'guide', parent_id: docs.id, status: 'published' });
    await create(site, { slug: 'start', parent_id: guide.id, status: 'published' });
    const renamed = await request(t.app)
      .patch(`/${site.slug}/pages/${docs.id}`)
      .set(c.a.admin.auth)
      .send({ slug: 'manual', title: 'Manual' })
      .expect(200);
    expect(renamed.body).toMatchObject({ slug: 'manual', path: '/manual', title: 'Manual', version: 2 });
    expect(outline(await tree(site))).toEqual(['/manual@0', '/manual/guide@0', '/manual/guide/start@0']);
  });

  it('moves a subtree under another page, closing the gap it leaves and rewriting its paths', async () => {
    const site = await freshSite();
    const a = await create(site, { slug: 'a' });
    const b = await create(site, { slug: 'b' });
    await create(site, { slug: 'c' });
    await create(site, { slug: 'x', parent_id: b.id });
    await create(site, { slug: 'y', parent_id: a.id });
    const moved = await move(site, b.id, { parent_id: a.id, position: 0 }).expect(200);
    expect(moved.body).toMatchObject({ parent_id: a.id, position: 0, path: '/a/b' });
    expect(outline(await tree(site))).toEqual(['/a@0', '/a/b@0', '/a/b/x@0', '/a/y@1', '/c@1']);
    // Back to the top, at the end; and within the same parent.
    await move(site, b.id, { parent_id: null }).expect(200);
    expect(outline(await tree(site))).toEqual(['/a@0', '/a/y@0', '/c@1', '/b@2', '/b/x@0']);
    await move(site, b.id, { parent_id: null, position: 0 }).expect(200);
    expect(outline(await tree(site))).toEqual(['/b@0', '/b/x@0', '/a@1', '/a/y@0', '/c@2']);
  });

  it('refuses a move under itself or below itself, and a move onto a taken path', async () => {
    const site = await freshSite();
    const a = await create(site, { slug: 'a' });
    const b = await create(site, { slug: 'b', parent_id: a.id });
    await move(site, a.id, { parent_id: a.id }).expect(409);
    const below = await move(site, a.id, { parent_id: b.id }).expect(409);
    expect(below.body.type).toBe('/problems/page-cycle');
    await create(site, { slug: 'b' });
    await move(site, b.id, { parent_id: null }).expect(409);
    expect(outline(await tree(site))).toEqual(['/a@0', '/a/b@0', '/b@1']);
  });

  it('never lets two racing moves make a cycle', async () => {
    for (let round = 0; round < 5; round++) {
      const site = await freshSite();
      const a = await create(site, { slug: 'a' });
      const b = await create(site, { slug: 'b' });
      const [ab, ba] = await Promise.all([
        move(site, a.id, { parent_id: b.id }),
        move(site, b.id, { parent_id: a.id }),
      ]);
      expect([ab.status, ba.status].sort()).toEqual([200, 409]);
      const rows = await t.services.db.any(sql.type(z.object({ id: z.string(), parent_id: z.string().nullable() }))`
        select id, parent_id from pages where site_id = ${site.id}`);
      expect(rows.filter((row) => row.parent_id === null)).toHaveLength(1);
    }
  });

  it('keeps positions whole when moves and creates race in one parent', async () => {
    const site = await freshSite();
    const pages = [];
    for (const slug of ['p0', 'p1', 'p2', 'p3']) pages.push(await create(site, { slug }));
    await Promise.all([
      move(site, pages[0]!.id, { parent_id: null, position: 3 }),
      move(site, pages[3]!.id, { parent_id: null, position: 0 }),
      create(site, { slug: 'p4', position: 1 }),
    ]);
    const positions = (await tree(site)).map((node) => node.position);
    expect(positions).toEqual([0, 1, 2, 3, 4]);
  });

  it('moves many pages at once, all or nothing', async () => {
    const site = await freshSite();
    const a = await create(site, { slug: 'a' });
    const b = await create(site, { slug: 'b' });
    const c2 = await create(site, { slug: 'c' });
    const res = await request(t.app)
      .post(`/${site.slug}/pages/batch-move`)
      .set(c.a.editor.auth)
      .send({
        moves: [
          { page_id: b.id, parent_id: a.id },
          { page_id: c2.id, parent_id: b.id },
        ],
      })
      .expect(200);
    expect((res.body.items as Page[]).map((page) => page.path)).toEqual(['/a/b', '/a/b/c']);
    const before = outline(await tree(site));
    await request(t.app)
      .post(`/${site.slug}/pages/batch-move`)
      .set(c.a.editor.auth)
      .send({
        moves: [
          { page_id: c2.id, parent_id: null },
          { page_id: a.id, parent_id: b.id },
        ],
      })
      .expect(409);
    expect(outline(await tree(site))).toEqual(before);
    await request(t.app)
      .post(`/${site.slug}/pages/batch-move`)
      .set(c.author.auth)
      .send({ moves: [{ page_id: c2.id, parent_id: null }] })
      .expect(403);
  });

  it('reorders one parent’s children when given all of them once', async () => {
    const site = await freshSite();
    const parent = await create(site, { slug: 'parent' });
    const kids = [];
    for (const slug of ['one', 'two', 'three']) kids.push(await create(site, { slug, parent_id: parent.id }));
    const order = [kids[2]!.id, kids[0]!.id, kids[1]!.id];
    const res = await request(t.app)
      .post(`/${site.slug}/pages/reorder`)
      .set(c.a.editor.auth)
      .send({ parent_id: parent.id, page_ids: order })
      .expect(200);
    expect((res.body.items as Page[]).map((page) => page.id)).toEqual(order);
    const missing = await request(t.app)
      .post(`/${site.slug}/pages/reorder`)
      .set(c.a.editor.auth)
      .send({ parent_id: parent.id, page_ids: order.slice(1) })
      .expect(422);
    expect(pathsOf(missing.body)).toEqual(['body.page_ids']);
    await request(t.app)
      .post(`/${site.slug}/pages/reorder`)
      .set(c.a.editor.auth)
      .send({ parent_id: null, page_ids: [parent.id] })
      .expect(200);
  });

  it('answers 412 to a change based on an older version, and lets authors change only their pages', async () => {
    const site = await freshSite();
    const author = c.author;
    const mine = await create(site, { slug: 'mine' }, author.auth);
    const theirs = await create(site, { slug: 'theirs' });
    await request(t.app).patch(`/${site.slug}/pages/${mine.id}`).set(author.auth).send({ title: 'Mine' }).expect(200);
    await request(t.app).patch(`/${site.slug}/pages/${theirs.id}`).set(author.auth).send({ title: 'No' }).expect(403);
    await move(site, theirs.id, { parent_id: mine.id }, author.auth).expect(403);
    await request(t.app)
      .patch(`/${site.slug}/pages/${mine.id}`)
      .set(c.a.admin.auth)
      .set('If-Match', '"1"')
      .send({ title: 'Late' })
      .expect(412);
    await move(site, mine.id, { parent_id: null }, c.a.admin.auth).set('If-Match', '"1"').expect(412);
  });
});

describe('deleting', () => {
  it('refuses a page with children unless recursive, then deletes the subtree and closes the gap', async () => {
    const site = await freshSite();
    const a = await create(site, { slug: 'a' });
    await create(site, { slug: 'b' });
    await create(site, { slug: 'child', parent_id: a.id });
    const refused = await request(t.app).delete(`/${site.slug}/pages/${a.id}`).set(c.a.admin.auth).expect(409);
    expect(refused.body.child_count).toBe(1);
    await request(t.app).delete(`/${site.slug}/pages/${a.id}?recursive=true`).set(c.a.admin.auth).expect(204);
    expect(outline(await tree(site))).toEqual(['/b@0']);
    await request(t.app).get(`/${site.slug}/pages/${a.id}`).set(c.a.admin.auth).expect(404);
  });
});

describe('elements on a page', () => {
  it('places elements in areas, moves them, changes settings and removes them, raising the page’s version', async () => {
    const site = await freshSite();
    const type = await createType(t, c.a.admin.auth, site);
    const [e1, e2, e3] = [
      await createElement(t, c.a.admin.auth, site, { type: type.id }),
      await createElement(t, c.a.admin.auth, site, { type: type.id }),
      await createElement(t, c.a.admin.auth, site, { type: type.id }),
    ];
    const page = await create(site, { slug: 'layout' });
    const at = `/${site.slug}/pages/${page.id}/elements`;
    const added = await request(t.app).post(at).set(c.a.admin.auth).send({ element_id: e1.id }).expect(201);
    expect(added.body).toMatchObject({ element_id: e1.id, area: 'main', position: 0, settings: {} });
    await request(t.app).post(at).set(c.a.admin.auth).send({ element_id: e2.id, position: 0 }).expect(201);
    await request(t.app)
      .post(at)
      .set(c.a.admin.auth)
      .send({ element_id: e3.id, area: 'sidebar', settings: { width: 'half' } })
      .expect(201);
    await request(t.app).post(at).set(c.a.admin.auth).send({ element_id: e1.id }).expect(409);
    const layout = async () =>
      (await request(t.app).get(`/${site.slug}/pages/${page.id}`).set(c.a.admin.auth).expect(200)).body as {
        version: number;
        elements: { element_id: string; area: string; position: number; element: { id: string } }[];
      };
    const slots = (body: Awaited<ReturnType<typeof layout>>) =>
      body.elements.map(
        (slot) => `${slot.area}:${slot.position}:${slot.element_id === slot.element.id ? slot.element_id : '?'}`,
      );
    let body = await layout();
    expect(slots(body)).toEqual([`main:0:${e2.id}`, `main:1:${e1.id}`, `sidebar:0:${e3.id}`]);
    expect(body.version).toBe(4);
    await request(t.app).patch(`${at}/${e2.id}`).set(c.a.admin.auth).send({ area: 'sidebar', position: 0 }).expect(200);
    body = await layout();
    expect(slots(body)).toEqual([`main:0:${e1.id}`, `sidebar:0:${e2.id}`, `sidebar:1:${e3.id}`]);
    await request(t.app).delete(`${at}/${e2.id}`).set(c.a.admin.auth).expect(204);
    body = await layout();
    expect(slots(body)).toEqual([`main:0:${e1.id}`, `sidebar:0:${e3.id}`]);
    await request(t.app).delete(`${at}/${e2.id}`).set(c.a.admin.auth).expect(404);
    const tree1 = await tree(site);
    expect(tree1[0]!.element_count).toBe(2);
    // The tree is kept between reads; a change of the layout drops it.
    await request(t.app).post(at).set(c.a.admin.auth).send({ element_id: e2.id }).expect(201);
    expect((await tree(site))[0]!.element_count).toBe(3);
    await request(t.app).delete(`${at}/${e2.id}`).set(c.a.admin.auth).expect(204);
    expect((await tree(site))[0]!.element_count).toBe(2);
    const theirType = await createType(t, c.b.admin.auth, c.b.site);
    const theirs = await createElement(t, c.b.admin.auth, c.b.site, { type: theirType.id });
    const foreign = await request(t.app).post(at).set(c.a.admin.auth).send({ element_id: theirs.id }).expect(422);
    expect(pathsOf(foreign.body)).toEqual(['body.element_id']);
  });

  it('replaces the whole layout at once, or nothing at all', async () => {
    const site = await freshSite();
    const type = await createType(t, c.a.admin.auth, site);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createElement(t, c.a.admin.auth, site, { type: type.id })).id);
    const page = await create(site, { slug: 'batch' });
    const at = `/${site.slug}/pages/${page.id}/elements/batch-update`;
    const res = await request(t.app)
      .post(at)
      .set(c.a.admin.auth)
      .send({
        elements: [
          { element_id: ids[0], area: 'main', position: 1 },
          { element_id: ids[1], area: 'main', position: 0 },
          { element_id: ids[2], area: 'footer', settings: { dark: true } },
        ],
      })
      .expect(200);
    expect(
      res.body.elements.map((slot: { area: string; element_id: string }) => `${slot.area}:${slot.element_id}`),
    ).toEqual([`footer:${ids[2]}`, `main:${ids[1]}`, `main:${ids[0]}`]);
    const twice = await request(t.app)
      .post(at)
      .set(c.a.admin.auth)
      .send({ elements: [{ element_id: ids[0] }, { element_id: ids[0] }] })
      .expect(422);
    expect(pathsOf(twice.body)).toEqual(['body.elements.1.element_id']);
    await request(t.app).post(at).set(c.a.admin.auth).set('If-Match', '"1"').send({ elements: [] }).expect(412);
    const after = await request(t.app).get(`/${site.slug}/pages/${page.id}`).set(c.a.admin.auth).expect(200);
    expect(after.body.elements).toHaveLength(3);
  });

  it('leaves no slot behind when an element on a page is deleted with force', async () => {
    const site = await freshSite();
    const type = await createType(t, c.a.admin.auth, site);
    const element = await createElement(t, c.a.admin.auth, site, { type: type.id });
    const page = await create(site, { slug: 'forced' });
    await request(t.app)
      .post(`/${site.slug}/pages/${page.id}/elements`)
      .set(c.a.admin.auth)
      .send({ element_id: element.id })
      .expect(201);
    const refused = await request(t.app).delete(`/${site.slug}/elements/${element.id}`).set(c.a.admin.auth).expect(409);
    expect(refused.body.references).toEqual([
      { kind: 'page', id: page.id, title: 'A page', path: 'main', target_id: element.id },
    ]);
    const deps = await request(t.app)
      .get(`/${site.slug}/contenttypes/${type.id}/dependencies`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(deps.body.referred_by.page_count).toBe(1);
    await request(t.app).delete(`/${site.slug}/elements/${element.id}/force`).set(c.a.admin.auth).expect(204);
    const after = await request(t.app).get(`/${site.slug}/pages/${page.id}`).set(c.a.admin.auth).expect(200);
    expect(after.body.elements).toEqual([]);
  });
});
