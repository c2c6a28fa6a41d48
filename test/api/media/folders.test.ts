// Media Folders through HTTP: who reads and who changes folders (authors only
// their own), creating (nesting, trimmed names, sibling-unique names,
// validation), listing (parent filter, pagination), one folder, renaming and
// moving (PATCH and POST move, never into itself or below itself, crossing
// moves at once), deleting (empty only, or recursive with items and files) and
// the whole tree with item counts.
import { existsSync } from 'node:fs';
import request from 'supertest';
import { z } from 'zod';
import { createStorage } from '../../../core/storage/index.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { mediaCast } from '../../helpers/media.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { assignToSite, newSite, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, idsOf, unique, type Auth, type Staffed } from '../../helpers/identity.ts';
import { localFile } from '../../helpers/jobs.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let author: Caller;
let otherAuthor: Caller;
let admin: Caller;
let reader: Auth;
let writer: Auth;
let noScope: Auth;

const missing = '00000000-0000-4000-8000-000000000000';

type Folder = {
  id: string;
  site_id: string;
  parent_id: string | null;
  name: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
};
type Node = Folder & { item_count: number; total_item_count: number; children: Node[] };

beforeAll(async () => {
  t = await startTestApp();
  ({ a, b, admin, author, otherAuthor, reader, writer, noScope } = await mediaCast(t));
});
afterAll(() => stopTestApp(t));

/** A fresh site of tenant A reached by its editor and both authors, so lists and trees hold only this test's folders. */
async function freshSite(): Promise<Site> {
  const site = await newSite(t, a.tenant);
  for (const caller of [a.editor, author, otherAuthor]) await assignToSite(t, site, caller.user.id);
  return site;
}

const base = (site: Site) => `/${site.slug}/media/folders/`;
const at = (site: Site, id: string) => `/${site.slug}/media/folders/${id}`;

async function create(auth: Auth, site: Site, name: string, parentId?: string | null): Promise<Folder> {
  const res = await request(t.app)
    .post(base(site))
    .set(auth)
    .send(parentId === undefined ? { name } : { name, parent_id: parentId });
  if (res.status !== 201) throw new Error(`create folder: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Folder;
}

const getFolder = async (site: Site, id: string, auth: Auth = a.editor.auth) =>
  (await request(t.app).get(at(site, id)).set(auth).expect(200)).body as Folder;

const tree = async (site: Site, auth: Auth = a.editor.auth) =>
  (
    await request(t.app)
      .get(`${base(site)}tree`)
      .set(auth)
      .expect(200)
  ).body as { items: Node[]; unfiled_item_count: number };

/** A media item row of the site, optionally in a folder, optionally with a real file in local storage. */
async function addItem(site: Site, folderId: string | null, withFile = false): Promise<{ id: string; key: string }> {
  const key = `${site.tenant_id}/${site.id}/${unique()}.png`;
  if (withFile) await createStorage(t.config).put(key, Buffer.from('abc'), 'image/png');
  const id = await t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into media_items (tenant_id, site_id, folder_id, kind, mime_type, size_bytes, status, storage_key, file_name)
    values (${site.tenant_id}, ${site.id}, ${folderId}, 'image', 'image/png', 3, 'ready', ${key}, 'a.png')
    returning id`);
  return { id, key };
}

const itemExists = (id: string) =>
  t.services.db.exists(sql.type(z.object({}))`select 1 from media_items where id = ${id}`);

/** Every folder of the site is reachable from a top-level folder (no cycle, nothing orphaned). */
async function expectAcyclic(site: Site): Promise<void> {
  const rows = await t.services.db.any(sql.type(z.object({ id: z.string(), parent_id: z.string().nullable() }))`
    select id, parent_id from media_folders where site_id = ${site.id}`);
  const reached = new Set<string>();
  let frontier = rows.filter((row) => row.parent_id === null).map((row) => row.id);
  while (frontier.length > 0) {
    for (const id of frontier) reached.add(id);
    frontier = rows
      .filter((row) => row.parent_id !== null && frontier.includes(row.parent_id) && !reached.has(row.id))
      .map((row) => row.id);
  }
  expect(reached.size).toBe(rows.length);
}

/** Polls until another session waits for a lock in a statement containing `text` (for races made deterministic); false after 15 s. */
async function waitForLockWait(text: string): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const waiting = await t.services.db.exists(sql.type(z.object({}))`
      select 1 from pg_stat_activity
      where pid <> pg_backend_pid() and wait_event_type = 'Lock' and position(${text} in query) > 0`);
    if (waiting) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** The names in a tree, nested, for compact assertions. */
type Shape = { name: string; children: Shape[] };
const shapeOf = (nodes: Node[]): Shape[] =>
  nodes.map((node) => ({ name: node.name, children: shapeOf(node.children) }));

describe('access', () => {
  it('answers 401 without a token on every endpoint', async () => {
    const site = await freshSite();
    const folder = await create(a.editor.auth, site, 'Photos');
    await request(t.app).get(base(site)).expect(401);
    await request(t.app).post(base(site)).send({ name: 'X' }).expect(401);
    await request(t.app)
      .get(`${base(site)}tree`)
      .expect(401);
    await request(t.app).get(at(site, folder.id)).expect(401);
    await request(t.app).patch(at(site, folder.id)).send({ name: 'Y' }).expect(401);
    await request(t.app)
      .post(`${at(site, folder.id)}/move`)
      .send({ parent_id: null })
      .expect(401);
    await request(t.app).delete(at(site, folder.id)).expect(401);
    await request(t.app).get(base(site)).set({ Authorization: 'Bearer nonsense' }).expect(401);
    expect((await getFolder(site, folder.id)).name).toBe('Photos');
  });

  it('lets everyone who reaches the site read folders: editors, assigned authors, tenant and global admins, media:read service accounts', async () => {
    const site = await freshSite();
    const folder = await create(a.editor.auth, site, 'Shared');
    for (const auth of [a.editor.auth, author.auth, otherAuthor.auth, a.admin.auth, admin.auth, reader, writer]) {
      expect(idsOf((await request(t.app).get(base(site)).set(auth).expect(200)).body)).toEqual([folder.id]);
      expect((await request(t.app).get(at(site, folder.id)).set(auth).expect(200)).body.id).toBe(folder.id);
      expect((await tree(site, auth)).items.map((node) => node.id)).toEqual([folder.id]);
    }
  });

  it('answers 404 to whoever does not reach the site: an unassigned author, another tenant’s staff and service accounts', async () => {
    const site = await freshSite();
    const folder = await create(a.editor.auth, site, 'Hidden');
    const outsider = (await serviceAccount(t, b.tenant, ['sites:read', 'media:read', 'media:write'], b.admin)).auth;
    for (const auth of [a.author.auth, b.admin.auth, b.editor.auth, outsider]) {
      await request(t.app).get(base(site)).set(auth).expect(404);
      await request(t.app)
        .get(`${base(site)}tree`)
        .set(auth)
        .expect(404);
      await request(t.app).get(at(site, folder.id)).set(auth).expect(404);
      await request(t.app).post(base(site)).set(auth).send({ name: 'Intruder' }).expect(404);
      await request(t.app).patch(at(site, folder.id)).set(auth).send({ name: 'Taken' }).expect(404);
      await request(t.app)
        .post(`${at(site, folder.id)}/move`)
        .set(auth)
        .send({ parent_id: null })
        .expect(404);
      await request(t.app).delete(at(site, folder.id)).set(auth).expect(404);
    }
    // Another tenant's folder through its own site is not found either (its site is not theirs).
    const theirs = await create(b.editor.auth, b.site, `Theirs ${unique()}`);
    await request(t.app).get(at(b.site, theirs.id)).set(a.admin.auth).expect(404);
    expect((await getFolder(site, folder.id)).name).toBe('Hidden');
    expect((await tree(site)).items).toHaveLength(1);
  });

  it('answers 404 for a folder of another site, through a site the caller reaches', async () => {
    const site = await freshSite();
    const other = await freshSite();
    const elsewhere = await create(a.editor.auth, other, 'Elsewhere');
    await request(t.app).get(at(site, elsewhere.id)).set(a.editor.auth).expect(404);
    await request(t.app).patch(at(site, elsewhere.id)).set(a.editor.auth).send({ name: 'Moved' }).expect(404);
    await request(t.app)
      .post(`${at(site, elsewhere.id)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: null })
      .expect(404);
    await request(t.app).delete(at(site, elsewhere.id)).set(a.editor.auth).expect(404);
    // b's folder through a's site: 404 too.
    const theirs = await create(b.editor.auth, b.site, `Theirs ${unique()}`);
    await request(t.app).get(at(site, theirs.id)).set(a.admin.auth).expect(404);
    await request(t.app).delete(at(site, theirs.id)).set(admin.auth).expect(404);
    expect((await getFolder(other, elsewhere.id)).name).toBe('Elsewhere');
    expect((await getFolder(b.site, theirs.id, b.editor.auth)).name).toBe(theirs.name);
  });

  it('requires media:read of service accounts to read and media:write to change', async () => {
    const site = await freshSite();
    const folder = await create(a.editor.auth, site, 'Scoped');
    await request(t.app).get(base(site)).set(noScope).expect(403);
    await request(t.app)
      .get(`${base(site)}tree`)
      .set(noScope)
      .expect(403);
    await request(t.app).get(at(site, folder.id)).set(noScope).expect(403);
    for (const auth of [noScope, reader]) {
      await request(t.app).post(base(site)).set(auth).send({ name: 'Nope' }).expect(403);
      await request(t.app).patch(at(site, folder.id)).set(auth).send({ name: 'Nope' }).expect(403);
      await request(t.app)
        .post(`${at(site, folder.id)}/move`)
        .set(auth)
        .send({ parent_id: null })
        .expect(403);
      await request(t.app).delete(at(site, folder.id)).set(auth).expect(403);
    }
    const onlyMedia = (await serviceAccount(t, a.tenant, ['media:read', 'media:write'], a.admin)).auth; // no sites:read
    await request(t.app).get(base(site)).set(onlyMedia).expect(403);
    expect(idsOf((await request(t.app).get(base(site)).set(reader).expect(200)).body)).toEqual([folder.id]);
    expect((await getFolder(site, folder.id)).name).toBe('Scoped');
  });

  it('lets a media:write service account create (created_by null), rename, move and delete any folder', async () => {
    const site = await freshSite();
    const mine = await create(writer, site, 'Bot folder');
    expect(mine.created_by).toBeNull();
    const authors = await create(author.auth, site, 'Author folder');
    expect(
      (await request(t.app).patch(at(site, authors.id)).set(writer).send({ name: 'Renamed by bot' }).expect(200)).body
        .name,
    ).toBe('Renamed by bot');
    expect(
      (
        await request(t.app)
          .post(`${at(site, authors.id)}/move`)
          .set(writer)
          .send({ parent_id: mine.id })
          .expect(200)
      ).body.parent_id,
    ).toBe(mine.id);
    await request(t.app)
      .delete(`${at(site, mine.id)}?recursive=true`)
      .set(writer)
      .expect(204);
    await request(t.app).get(at(site, authors.id)).set(writer).expect(404);
  });

  it('lets authors create folders and change only the ones they made (403 on the others)', async () => {
    const site = await freshSite();
    const own = await create(author.auth, site, 'Mine');
    expect(own.created_by).toBe(author.user.id);
    const editors = await create(a.editor.auth, site, 'Editor’s');
    const others = await create(otherAuthor.auth, site, 'Other author’s');
    const bots = await create(writer, site, 'Bot’s');

    for (const target of [editors, others, bots]) {
      const patched = await request(t.app)
        .patch(at(site, target.id))
        .set(author.auth)
        .send({ name: 'Hijacked' })
        .expect(403);
      expect(patched.headers['content-type']).toMatch(/problem\+json/);
      await request(t.app).patch(at(site, target.id)).set(author.auth).send({ parent_id: own.id }).expect(403);
      await request(t.app)
        .post(`${at(site, target.id)}/move`)
        .set(author.auth)
        .send({ parent_id: own.id })
        .expect(403);
      await request(t.app).delete(at(site, target.id)).set(author.auth).expect(403);
      await request(t.app)
        .delete(`${at(site, target.id)}?recursive=true`)
        .set(author.auth)
        .expect(403);
      const after = await getFolder(site, target.id);
      expect(after).toEqual(target);
    }

    // Their own: rename, move (even into someone else's folder), back to the top, delete.
    expect(
      (await request(t.app).patch(at(site, own.id)).set(author.auth).send({ name: 'Mine, renamed' }).expect(200)).body
        .name,
    ).toBe('Mine, renamed');
    expect(
      (await request(t.app).patch(at(site, own.id)).set(author.auth).send({ parent_id: editors.id }).expect(200)).body
        .parent_id,
    ).toBe(editors.id);
    expect(
      (
        await request(t.app)
          .post(`${at(site, own.id)}/move`)
          .set(author.auth)
          .send({ parent_id: null })
          .expect(200)
      ).body.parent_id,
    ).toBeNull();
    // Creating inside someone else's folder is fine.
    const nested = await create(author.auth, site, 'Inside editor’s', editors.id);
    expect(nested.parent_id).toBe(editors.id);
    await request(t.app).delete(at(site, own.id)).set(author.auth).expect(204);
    await request(t.app).get(at(site, own.id)).set(author.auth).expect(404);
  });

  it('lets editors, tenant admins and global admins change anyone’s folders', async () => {
    const site = await freshSite();
    for (const [index, changer] of [a.editor, a.admin, admin].entries()) {
      const folder = await create(author.auth, site, `By author ${index}`);
      const target = await create(otherAuthor.auth, site, `Target ${index}`);
      expect(
        (
          await request(t.app)
            .patch(at(site, folder.id))
            .set(changer.auth)
            .send({ name: `Renamed ${index}` })
            .expect(200)
        ).body,
      ).toMatchObject({
        id: folder.id,
        name: `Renamed ${index}`,
        created_by: author.user.id,
      });
      expect(
        (
          await request(t.app)
            .post(`${at(site, folder.id)}/move`)
            .set(changer.auth)
            .send({ parent_id: target.id })
            .expect(200)
        ).body.parent_id,
      ).toBe(target.id);
      await request(t.app).delete(at(site, target.id)).set(changer.auth).expect(409);
      await request(t.app)
        .delete(`${at(site, target.id)}?recursive=true`)
        .set(changer.auth)
        .expect(204);
      await request(t.app).get(at(site, folder.id)).set(changer.auth).expect(404);
    }
    // Tenant and global admins create too, as themselves.
    expect((await create(a.admin.auth, site, 'Admin’s')).created_by).toBe(a.admin.user.id);
    expect((await create(admin.auth, site, 'Global admin’s')).created_by).toBe(admin.user.id);
  });
});

describe('POST /{site}/media/folders/', () => {
  it('creates a top-level folder (201, trimmed name, all fields), by slug or by site id', async () => {
    const site = await freshSite();
    const res = await request(t.app).post(base(site)).set(a.editor.auth).send({ name: '  Photos  ' }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'created_at',
      'created_by',
      'id',
      'name',
      'parent_id',
      'site_id',
      'updated_at',
    ]);
    expect(res.body).toMatchObject({ site_id: site.id, parent_id: null, name: 'Photos', created_by: a.editor.user.id });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(res.body.created_at))).toBe(false);
    expect(Number.isNaN(Date.parse(res.body.updated_at))).toBe(false);
    expect(await getFolder(site, res.body.id)).toEqual(res.body);

    const byId = await request(t.app)
      .post(`/${site.id}/media/folders/`)
      .set(a.editor.auth)
      .send({ name: 'Videos', parent_id: null })
      .expect(201);
    expect(byId.body).toMatchObject({ site_id: site.id, parent_id: null, name: 'Videos' });
  });

  it('nests a folder under parent_id, several levels deep', async () => {
    const site = await freshSite();
    const top = await create(a.editor.auth, site, 'Top');
    const middle = await create(a.editor.auth, site, 'Middle', top.id);
    const bottom = await create(author.auth, site, 'Bottom', middle.id);
    expect(middle.parent_id).toBe(top.id);
    expect(bottom.parent_id).toBe(middle.id);
    expect(shapeOf((await tree(site)).items)).toEqual([
      { name: 'Top', children: [{ name: 'Middle', children: [{ name: 'Bottom', children: [] }] }] },
    ]);
  });

  it('answers 409 for a sibling with the same name, at the top level and inside a folder; the same name elsewhere is fine', async () => {
    const site = await freshSite();
    const photos = await create(a.editor.auth, site, 'Photos');
    const conflict = await request(t.app).post(base(site)).set(a.editor.auth).send({ name: 'Photos' }).expect(409);
    expect(conflict.headers['content-type']).toMatch(/problem\+json/);
    // Trimming happens before the check.
    await request(t.app).post(base(site)).set(author.auth).send({ name: ' Photos ', parent_id: null }).expect(409);

    const inside = await create(a.editor.auth, site, 'Photos', photos.id);
    expect(inside.parent_id).toBe(photos.id);
    await request(t.app).post(base(site)).set(a.editor.auth).send({ name: 'Photos', parent_id: photos.id }).expect(409);

    const other = await create(a.editor.auth, site, 'Other');
    expect((await create(a.editor.auth, site, 'Photos', other.id)).parent_id).toBe(other.id);
    // Another site of the tenant has its own names.
    const second = await freshSite();
    expect((await create(a.editor.auth, second, 'Photos')).site_id).toBe(second.id);

    const names = (
      await request(t.app)
        .get(`${base(site)}?parent_id=root`)
        .set(a.editor.auth)
        .expect(200)
    ).body.items.map((folder: Folder) => folder.name);
    expect(names).toEqual(['Photos', 'Other']);
  });

  it('answers 422 for an empty or blank name, a slash or backslash, over 200 characters, unknown fields, a bad parent_id', async () => {
    const site = await freshSite();
    const invalid: [unknown, string][] = [
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'a/b' }, 'body.name'],
      [{ name: 'a\\b' }, 'body.name'],
      [{ name: 'x'.repeat(201) }, 'body.name'],
      [{}, 'body.name'],
      [{ name: 42 }, 'body.name'],
      [{ name: 'Fine', colour: 'red' }, 'body'],
      [{ name: 'Fine', parent_id: 'not-a-uuid' }, 'body.parent_id'],
      [{ name: 'Fine', parent_id: 7 }, 'body.parent_id'],
    ];
    for (const [body, path] of invalid) {
      const res = await request(t.app)
        .post(base(site))
        .set(a.editor.auth)
        .send(body as object);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^${path.replace('.', '\\.')}`))]),
      );
    }
    // 200 characters (after trimming) is the limit.
    expect((await create(a.editor.auth, site, ` ${'y'.repeat(200)} `)).name).toBe('y'.repeat(200));
    expect((await request(t.app).get(base(site)).set(a.editor.auth).expect(200)).body.items).toHaveLength(1);
  });

  it('answers 422 (errors at body.parent_id) for a parent that is not a folder of this site', async () => {
    const site = await freshSite();
    const other = await freshSite();
    const elsewhere = await create(a.editor.auth, other, 'Elsewhere');
    const theirs = await create(b.editor.auth, b.site, `Theirs ${unique()}`);
    for (const parentId of [elsewhere.id, theirs.id, missing]) {
      const res = await request(t.app)
        .post(base(site))
        .set(a.editor.auth)
        .send({ name: 'Child', parent_id: parentId })
        .expect(422);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toContain('body.parent_id');
    }
    expect((await request(t.app).get(base(site)).set(a.editor.auth).expect(200)).body.items).toEqual([]);
  });
});

describe('GET /{site}/media/folders/', () => {
  it('lists the site’s folders oldest first, or one folder’s children, or the top level with parent_id=root', async () => {
    const site = await freshSite();
    const zeta = await create(a.editor.auth, site, 'Zeta');
    const alpha = await create(a.editor.auth, site, 'Alpha');
    const child1 = await create(a.editor.auth, site, 'Z child', zeta.id);
    const child2 = await create(author.auth, site, 'A child', zeta.id);
    const grandchild = await create(a.editor.auth, site, 'Grandchild', child1.id);
    await create(a.editor.auth, await freshSite(), 'Another site'); // never listed here

    const list = async (query = '') =>
      (
        await request(t.app)
          .get(`${base(site)}${query}`)
          .set(a.editor.auth)
          .expect(200)
      ).body;
    const all = await list();
    expect(idsOf(all)).toEqual([zeta.id, alpha.id, child1.id, child2.id, grandchild.id]);
    expect(all.next_cursor).toBeNull();
    expect(all).not.toHaveProperty('total');
    expect(all.items[2]).toEqual(child1);
    expect(idsOf(await list(`?parent_id=${zeta.id}`))).toEqual([child1.id, child2.id]);
    expect(idsOf(await list(`?parent_id=${child1.id}`))).toEqual([grandchild.id]);
    expect(idsOf(await list(`?parent_id=${alpha.id}`))).toEqual([]);
    expect(idsOf(await list('?parent_id=root'))).toEqual([zeta.id, alpha.id]);
    expect(idsOf(await list(`?parent_id=${missing}`))).toEqual([]);
    await request(t.app)
      .get(`${base(site)}?parent_id=nope`)
      .set(a.editor.auth)
      .expect(422);
  });

  it('pages through five folders two at a time without repeats, and counts them with include_total', async () => {
    const site = await freshSite();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(a.editor.auth, site, `Folder ${i}`)).id);
    // One at a time with next_cursor: the whole list, in order, each once (and a bad cursor is a 400).
    expect(await expectPaginates(t, a.editor.auth, base(site))).toEqual(ids);

    const counted = await request(t.app)
      .get(`${base(site)}?limit=2&include_total=true`)
      .set(a.editor.auth)
      .expect(200);
    expect(counted.body.total).toBe(5);
    expect(counted.body.items).toHaveLength(2);
    const children = await create(a.editor.auth, site, 'Child', ids[0]);
    const filtered = await request(t.app)
      .get(`${base(site)}?parent_id=root&limit=1&include_total=true`)
      .set(a.editor.auth)
      .expect(200);
    expect(filtered.body.total).toBe(5);
    expect(idsOf(filtered.body)).toEqual([ids[0]]);
    const inside = await request(t.app)
      .get(`${base(site)}?parent_id=${ids[0]}&include_total=true`)
      .set(a.editor.auth)
      .expect(200);
    expect(inside.body).toMatchObject({ total: 1, next_cursor: null });
    expect(idsOf(inside.body)).toEqual([children.id]);

    await request(t.app)
      .get(`${base(site)}?cursor=not-a-cursor`)
      .set(a.editor.auth)
      .expect(400);
    await request(t.app)
      .get(`${base(site)}?limit=0`)
      .set(a.editor.auth)
      .expect(422);
    await request(t.app)
      .get(`${base(site)}?limit=201`)
      .set(a.editor.auth)
      .expect(422);
  });
});

describe('GET /{site}/media/folders/{folder_id}', () => {
  it('answers the folder; 404 for an unknown id, 422 for an id that is not a uuid', async () => {
    const site = await freshSite();
    const parent = await create(a.editor.auth, site, 'Parent');
    const child = await create(author.auth, site, 'Child', parent.id);
    expect(await getFolder(site, child.id)).toEqual(child);
    expect(await getFolder(site, child.id, reader)).toEqual(child);
    const unknown = await request(t.app).get(at(site, missing)).set(a.editor.auth).expect(404);
    expect(unknown.headers['content-type']).toMatch(/problem\+json/);
    const bad = await request(t.app).get(at(site, 'not-a-uuid')).set(a.editor.auth).expect(422);
    expect(bad.body.errors.map((error: { path: string }) => error.path)).toContain('params.folder_id');
    await request(t.app).get(`/no-such-site-${unique()}/media/folders/${child.id}`).set(admin.auth).expect(404);
  });
});

describe('PATCH /{site}/media/folders/{folder_id}', () => {
  it('renames (trimmed), moves with parent_id (null: the top level), or both at once', async () => {
    const site = await freshSite();
    const docs = await create(a.editor.auth, site, 'Docs');
    const archive = await create(a.editor.auth, site, 'Archive');
    const folder = await create(a.editor.auth, site, 'Draft');

    const renamed = await request(t.app)
      .patch(at(site, folder.id))
      .set(a.editor.auth)
      .send({ name: '  Final  ' })
      .expect(200);
    expect(renamed.body).toMatchObject({
      id: folder.id,
      name: 'Final',
      parent_id: null,
      site_id: site.id,
      created_by: a.editor.user.id,
      created_at: folder.created_at,
    });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(folder.updated_at));

    const moved = await request(t.app)
      .patch(at(site, folder.id))
      .set(a.editor.auth)
      .send({ parent_id: docs.id })
      .expect(200);
    expect(moved.body).toMatchObject({ name: 'Final', parent_id: docs.id });

    const both = await request(t.app)
      .patch(at(site, folder.id))
      .set(a.editor.auth)
      .send({ name: 'Old', parent_id: archive.id })
      .expect(200);
    expect(both.body).toMatchObject({ name: 'Old', parent_id: archive.id });

    // Renaming alone leaves it where it is.
    expect(
      (await request(t.app).patch(at(site, folder.id)).set(a.editor.auth).send({ name: 'Older' }).expect(200)).body
        .parent_id,
    ).toBe(archive.id);
    // Keeping its own name is not a conflict.
    expect(
      (await request(t.app).patch(at(site, folder.id)).set(a.editor.auth).send({ name: 'Older' }).expect(200)).body
        .name,
    ).toBe('Older');

    const top = await request(t.app)
      .patch(at(site, folder.id))
      .set(a.editor.auth)
      .send({ parent_id: null })
      .expect(200);
    expect(top.body).toMatchObject({ name: 'Older', parent_id: null });
    expect(await getFolder(site, folder.id)).toEqual(top.body);
    expect(shapeOf((await tree(site)).items).map((node) => node.name)).toEqual(['Archive', 'Docs', 'Older']);
  });

  it('answers 422 for an empty body, unknown fields, a bad name or parent_id, a parent outside the site', async () => {
    const site = await freshSite();
    const folder = await create(a.editor.auth, site, 'Folder');
    const elsewhere = await create(a.editor.auth, await freshSite(), 'Elsewhere');
    const invalid: unknown[] = [
      {},
      { colour: 'red' },
      { name: 'Ok', colour: 'red' },
      { name: '' },
      { name: ' ' },
      { name: 'a/b' },
      { name: 'a\\b' },
      { name: 'z'.repeat(201) },
      { parent_id: 'nope' },
    ];
    for (const body of invalid) {
      const res = await request(t.app)
        .patch(at(site, folder.id))
        .set(a.editor.auth)
        .send(body as object);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    for (const parentId of [elsewhere.id, missing]) {
      const res = await request(t.app)
        .patch(at(site, folder.id))
        .set(a.editor.auth)
        .send({ parent_id: parentId })
        .expect(422);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toContain('body.parent_id');
    }
    await request(t.app).patch(at(site, 'nope')).set(a.editor.auth).send({ name: 'X' }).expect(422);
    await request(t.app).patch(at(site, missing)).set(a.editor.auth).send({ name: 'X' }).expect(404);
    expect(await getFolder(site, folder.id)).toEqual(folder);
  });

  it('answers 409 for a sibling’s name, by renaming or by moving next to it', async () => {
    const site = await freshSite();
    const photos = await create(a.editor.auth, site, 'Photos');
    const videos = await create(a.editor.auth, site, 'Videos');
    const inner = await create(a.editor.auth, site, 'Videos', photos.id);
    const conflict = await request(t.app)
      .patch(at(site, photos.id))
      .set(a.editor.auth)
      .send({ name: 'Videos' })
      .expect(409);
    expect(conflict.headers['content-type']).toMatch(/problem\+json/);
    // Moving inner Videos to the top where Videos exists.
    await request(t.app).patch(at(site, inner.id)).set(a.editor.auth).send({ parent_id: null }).expect(409);
    await request(t.app)
      .post(`${at(site, inner.id)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: null })
      .expect(409);
    // Moving and renaming at once avoids it.
    expect(
      (
        await request(t.app)
          .patch(at(site, inner.id))
          .set(a.editor.auth)
          .send({ name: 'Clips', parent_id: null })
          .expect(200)
      ).body,
    ).toMatchObject({ name: 'Clips', parent_id: null });
    expect(await getFolder(site, photos.id)).toEqual(photos);
    expect(await getFolder(site, videos.id)).toEqual(videos);
  });

  it('answers 409 for a move into itself or anything below it (A > B > C), and moves into a sibling subtree', async () => {
    const site = await freshSite();
    const folderA = await create(a.editor.auth, site, 'A');
    const folderB = await create(a.editor.auth, site, 'B', folderA.id);
    const folderC = await create(a.editor.auth, site, 'C', folderB.id);
    const folderD = await create(a.editor.auth, site, 'D');
    const folderE = await create(a.editor.auth, site, 'E', folderD.id);

    for (const target of [folderA, folderB, folderC]) {
      const res = await request(t.app)
        .patch(at(site, folderA.id))
        .set(a.editor.auth)
        .send({ parent_id: target.id })
        .expect(409);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
    }
    await request(t.app).patch(at(site, folderB.id)).set(a.editor.auth).send({ parent_id: folderC.id }).expect(409);
    await request(t.app).patch(at(site, folderB.id)).set(a.editor.auth).send({ parent_id: folderB.id }).expect(409);
    await request(t.app)
      .patch(at(site, folderA.id))
      .set(a.editor.auth)
      .send({ name: 'A2', parent_id: folderC.id })
      .expect(409);
    expect(await getFolder(site, folderA.id)).toEqual(folderA);
    await expectAcyclic(site);

    // Moving B (with C) under E, in the sibling subtree, is fine; then A may go under C.
    expect(
      (await request(t.app).patch(at(site, folderB.id)).set(a.editor.auth).send({ parent_id: folderE.id }).expect(200))
        .body.parent_id,
    ).toBe(folderE.id);
    expect(
      (await request(t.app).patch(at(site, folderA.id)).set(a.editor.auth).send({ parent_id: folderC.id }).expect(200))
        .body.parent_id,
    ).toBe(folderC.id);
    // Now D > E > B > C > A: D under A would be a cycle.
    await request(t.app).patch(at(site, folderD.id)).set(a.editor.auth).send({ parent_id: folderA.id }).expect(409);
    expect(shapeOf((await tree(site)).items)).toEqual([
      {
        name: 'D',
        children: [
          { name: 'E', children: [{ name: 'B', children: [{ name: 'C', children: [{ name: 'A', children: [] }] }] }] },
        ],
      },
    ]);
    await expectAcyclic(site);
  });
});

describe('POST /{site}/media/folders/{folder_id}/move', () => {
  it('moves under parent_id and back to the top with null, keeping the name; parent_id is required', async () => {
    const site = await freshSite();
    const target = await create(a.editor.auth, site, 'Target');
    const folder = await create(a.editor.auth, site, 'Folder');
    const moved = await request(t.app)
      .post(`${at(site, folder.id)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: target.id })
      .expect(200);
    expect(moved.body).toMatchObject({
      id: folder.id,
      name: 'Folder',
      parent_id: target.id,
      site_id: site.id,
      created_by: a.editor.user.id,
    });
    expect(await getFolder(site, folder.id)).toEqual(moved.body);
    const back = await request(t.app)
      .post(`${at(site, folder.id)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: null })
      .expect(200);
    expect(back.body).toMatchObject({ name: 'Folder', parent_id: null });

    for (const body of [{}, { name: 'Renamed' }, { parent_id: target.id, name: 'Renamed' }, { parent_id: 'nope' }]) {
      const res = await request(t.app)
        .post(`${at(site, folder.id)}/move`)
        .set(a.editor.auth)
        .send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    const noParent = await request(t.app)
      .post(`${at(site, folder.id)}/move`)
      .set(a.editor.auth)
      .send({})
      .expect(422);
    expect(noParent.body.errors.map((error: { path: string }) => error.path)).toContain('body.parent_id');
    const outside = await request(t.app)
      .post(`${at(site, folder.id)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: missing })
      .expect(422);
    expect(outside.body.errors.map((error: { path: string }) => error.path)).toContain('body.parent_id');
    await request(t.app)
      .post(`${at(site, missing)}/move`)
      .set(a.editor.auth)
      .send({ parent_id: null })
      .expect(404);
    expect((await getFolder(site, folder.id)).parent_id).toBeNull();
  });

  it('answers 409 for a move into itself or below itself, and moves into a sibling subtree', async () => {
    const site = await freshSite();
    const folderA = await create(a.editor.auth, site, 'A');
    const folderB = await create(a.editor.auth, site, 'B', folderA.id);
    const folderC = await create(a.editor.auth, site, 'C', folderB.id);
    const folderD = await create(a.editor.auth, site, 'D');
    const move = (id: string, parentId: string | null) =>
      request(t.app)
        .post(`${at(site, id)}/move`)
        .set(a.editor.auth)
        .send({ parent_id: parentId });
    await move(folderA.id, folderC.id).expect(409);
    await move(folderA.id, folderB.id).expect(409);
    await move(folderA.id, folderA.id).expect(409);
    await move(folderB.id, folderC.id).expect(409);
    await move(folderC.id, folderC.id).expect(409);
    await expectAcyclic(site);
    expect((await move(folderB.id, folderD.id).expect(200)).body.parent_id).toBe(folderD.id);
    expect((await move(folderA.id, folderC.id).expect(200)).body.parent_id).toBe(folderC.id);
    expect((await move(folderC.id, null).expect(200)).body.parent_id).toBeNull();
    expect(shapeOf((await tree(site)).items)).toEqual([
      { name: 'C', children: [{ name: 'A', children: [] }] },
      { name: 'D', children: [{ name: 'B', children: [] }] },
    ]);
    await expectAcyclic(site);
  });
});

describe('DELETE /{site}/media/folders/{folder_id}', () => {
  it('deletes an empty folder (204), which is then not found', async () => {
    const site = await freshSite();
    const keep = await create(a.editor.auth, site, 'Keep');
    const folder = await create(a.editor.auth, site, 'Empty', keep.id);
    const res = await request(t.app).delete(at(site, folder.id)).set(a.editor.auth).expect(204);
    expect(res.text).toBe('');
    await request(t.app).get(at(site, folder.id)).set(a.editor.auth).expect(404);
    await request(t.app).delete(at(site, folder.id)).set(a.editor.auth).expect(404);
    expect(idsOf((await request(t.app).get(base(site)).set(a.editor.auth).expect(200)).body)).toEqual([keep.id]);
    // recursive=false is the default, and an empty folder needs nothing more.
    await request(t.app)
      .delete(`${at(site, keep.id)}?recursive=false`)
      .set(a.editor.auth)
      .expect(204);
    const alone = await create(a.editor.auth, site, 'Alone');
    await request(t.app)
      .delete(`${at(site, alone.id)}?recursive=true`)
      .set(a.editor.auth)
      .expect(204);
    expect((await tree(site)).items).toEqual([]);
  });

  it('answers 409 for a folder holding a subfolder or an item, with the counts in the detail; 422 for recursive=maybe', async () => {
    const site = await freshSite();
    const parent = await create(a.editor.auth, site, 'Parent');
    const child = await create(a.editor.auth, site, 'Child', parent.id);
    const withItem = await create(a.editor.auth, site, 'With item');
    const item = await addItem(site, withItem.id);

    const holdsFolder = await request(t.app).delete(at(site, parent.id)).set(a.editor.auth).expect(409);
    expect(holdsFolder.headers['content-type']).toMatch(/problem\+json/);
    expect(holdsFolder.body.detail).toMatch(/1 folder\(s\) and 0 item\(s\)/);
    const holdsItem = await request(t.app)
      .delete(`${at(site, withItem.id)}?recursive=false`)
      .set(a.editor.auth)
      .expect(409);
    expect(holdsItem.body.detail).toMatch(/0 folder\(s\) and 1 item\(s\)/);
    // Items deeper down count too.
    await addItem(site, child.id);
    await addItem(site, child.id);
    expect((await request(t.app).delete(at(site, parent.id)).set(a.editor.auth).expect(409)).body.detail).toMatch(
      /1 folder\(s\) and 2 item\(s\)/,
    );

    const maybe = await request(t.app)
      .delete(`${at(site, withItem.id)}?recursive=maybe`)
      .set(a.editor.auth)
      .expect(422);
    expect(maybe.body.errors.map((error: { path: string }) => error.path)).toContain('query.recursive');
    await request(t.app).delete(at(site, 'nope')).set(a.editor.auth).expect(422);

    for (const folder of [parent, child, withItem]) expect(await getFolder(site, folder.id)).toEqual(folder);
    expect(await itemExists(item.id)).toBe(true);
  });

  it('with recursive=true deletes the whole subtree, its media items and their files, and nothing else', async () => {
    const site = await freshSite();
    const top = await create(a.editor.auth, site, 'Top');
    const middle = await create(a.editor.auth, site, 'Middle', top.id);
    const bottom = await create(a.editor.auth, site, 'Bottom', middle.id);
    const sibling = await create(a.editor.auth, site, 'Sibling', top.id);
    const other = await create(a.editor.auth, site, 'Other');
    const otherChild = await create(a.editor.auth, site, 'Other child', other.id);

    const doomed = [
      await addItem(site, top.id, true),
      await addItem(site, bottom.id, true),
      await addItem(site, bottom.id, true),
      await addItem(site, sibling.id, true),
    ];
    const kept = [
      await addItem(site, other.id, true),
      await addItem(site, otherChild.id, true),
      await addItem(site, null, true),
    ];
    for (const item of [...doomed, ...kept]) expect(existsSync(localFile(t, item.key))).toBe(true);

    await request(t.app)
      .delete(`${at(site, top.id)}?recursive=true`)
      .set(a.editor.auth)
      .expect(204);

    for (const folder of [top, middle, bottom, sibling])
      await request(t.app).get(at(site, folder.id)).set(a.editor.auth).expect(404);
    for (const item of doomed) {
      expect(await itemExists(item.id)).toBe(false);
      expect(existsSync(localFile(t, item.key))).toBe(false);
    }
    for (const item of kept) {
      expect(await itemExists(item.id)).toBe(true);
      expect(existsSync(localFile(t, item.key))).toBe(true);
    }
    const after = await tree(site);
    expect(after.unfiled_item_count).toBe(1);
    expect(
      after.items.map((node) => ({
        name: node.name,
        item_count: node.item_count,
        total_item_count: node.total_item_count,
      })),
    ).toEqual([{ name: 'Other', item_count: 1, total_item_count: 2 }]);
    expect(idsOf((await request(t.app).get(base(site)).set(a.editor.auth).expect(200)).body)).toEqual([
      other.id,
      otherChild.id,
    ]);

    // A leaf with items, recursively: only its own items go.
    await request(t.app)
      .delete(`${at(site, otherChild.id)}?recursive=true`)
      .set(a.editor.auth)
      .expect(204);
    expect(await itemExists(kept[0]!.id)).toBe(true);
    expect(await itemExists(kept[1]!.id)).toBe(false);
    expect(existsSync(localFile(t, kept[1]!.key))).toBe(false);
  });
});

describe('GET /{site}/media/folders/tree', () => {
  it('answers nested children, siblings by name, item counts with and without descendants, and the unfiled count', async () => {
    const site = await freshSite();
    expect(await tree(site)).toEqual({ items: [], unfiled_item_count: 0 });

    const photos = await create(a.editor.auth, site, 'photos');
    const archive = await create(a.editor.auth, site, 'archive');
    const trips = await create(a.editor.auth, site, 'trips', photos.id);
    const events = await create(author.auth, site, 'events', photos.id);
    const paris = await create(a.editor.auth, site, 'paris', trips.id);
    const berlin = await create(a.editor.auth, site, 'berlin', trips.id);
    const empty = await create(a.editor.auth, site, 'music');

    const counts: [string, number][] = [
      [photos.id, 1],
      [trips.id, 2],
      [paris.id, 3],
      [berlin.id, 1],
      [events.id, 1],
      [archive.id, 4],
    ];
    for (const [folderId, count] of counts) for (let i = 0; i < count; i++) await addItem(site, folderId);
    for (let i = 0; i < 2; i++) await addItem(site, null);

    // Another site's folders and items never appear, nor count.
    const other = await freshSite();
    const foreign = await create(a.editor.auth, other, 'aaa foreign');
    await addItem(other, foreign.id);
    await addItem(other, null);
    await addItem(other, null);
    await addItem(other, null);

    const answer = await tree(site);
    expect(Object.keys(answer).sort()).toEqual(['items', 'unfiled_item_count']);
    expect(answer.unfiled_item_count).toBe(2);
    type Summary = { name: string; item_count: number; total_item_count: number; children: Summary[] };
    const summary = (nodes: Node[]): Summary[] =>
      nodes.map((node) => ({
        name: node.name,
        item_count: node.item_count,
        total_item_count: node.total_item_count,
        children: summary(node.children),
      }));
    expect(summary(answer.items)).toEqual([
      { name: 'archive', item_count: 4, total_item_count: 4, children: [] },
      { name: 'music', item_count: 0, total_item_count: 0, children: [] },
      {
        name: 'photos',
        item_count: 1,
        total_item_count: 8,
        children: [
          { name: 'events', item_count: 1, total_item_count: 1, children: [] },
          {
            name: 'trips',
            item_count: 2,
            total_item_count: 6,
            children: [
              { name: 'berlin', item_count: 1, total_item_count: 1, children: [] },
              { name: 'paris', item_count: 3, total_item_count: 3, children: [] },
            ],
          },
        ],
      },
    ]);
    // Each node carries the folder's fields too.
    const photosNode = answer.items[2]!;
    expect(photosNode).toMatchObject(photos);
    expect(photosNode.children[1]).toMatchObject({ ...trips, children: expect.any(Array) });
    expect(answer.items[1]).toEqual({ ...empty, item_count: 0, total_item_count: 0, children: [] });

    const otherTree = await tree(other);
    expect(otherTree.unfiled_item_count).toBe(3);
    expect(otherTree.items.map((node) => [node.name, node.item_count])).toEqual([['aaa foreign', 1]]);
    // A service account with media:read sees the same tree.
    expect(await tree(site, reader)).toEqual(answer);
  });
});

describe('concurrency', () => {
  it('lets exactly one of two crossing moves (A under B, B under A) succeed; the other is a 409 and the tree stays acyclic', async () => {
    for (let round = 0; round < 4; round++) {
      const site = await freshSite();
      const folderA = await create(a.editor.auth, site, 'A');
      const folderB = await create(a.editor.auth, site, 'B');
      // Alternate PATCH and POST move, and which request goes first.
      const first =
        round % 2 === 0
          ? request(t.app).patch(at(site, folderA.id)).set(a.editor.auth).send({ parent_id: folderB.id })
          : request(t.app)
              .post(`${at(site, folderA.id)}/move`)
              .set(a.editor.auth)
              .send({ parent_id: folderB.id });
      const second = request(t.app)
        .post(`${at(site, folderB.id)}/move`)
        .set(a.admin.auth)
        .send({ parent_id: folderA.id });
      const [one, two] =
        round < 2
          ? await Promise.all([first, second])
          : await Promise.all([second, first]).then(([x, y]) => [y, x] as const);
      expect([one.status, two.status].sort()).toEqual([200, 409]);
      const winner = one.status === 200 ? { moved: folderA, under: folderB } : { moved: folderB, under: folderA };
      expect(await getFolder(site, winner.moved.id)).toMatchObject({ parent_id: winner.under.id });
      expect(await getFolder(site, winner.under.id)).toMatchObject({ parent_id: null });
      await expectAcyclic(site);
      const answer = await tree(site);
      expect(shapeOf(answer.items)).toEqual([
        { name: winner.under.name, children: [{ name: winner.moved.name, children: [] }] },
      ]);
    }
  });

  // A create takes the per-site tree lock that the recursive delete holds, so it finds the parent gone (422), not a
  // foreign-key violation (500).
  it('answers 422 to a folder created inside a folder that a recursive delete removes at the same time, never a 500', async () => {
    const site = await freshSite();
    const doomed = await create(a.editor.auth, site, 'Doomed');
    const item = await addItem(site, doomed.id);
    // Holding the item's row keeps the recursive delete inside its transaction, after it has locked the folder.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = t.services.db.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`select from media_items where id = ${item.id} for update`);
      holding();
      await released;
    });
    try {
      await held;
      const deleting = request(t.app)
        .delete(`${at(site, doomed.id)}?recursive=true`)
        .set(a.editor.auth)
        .then((res) => res);
      expect(await waitForLockWait('delete from media_items')).toBe(true);
      const creating = request(t.app)
        .post(base(site))
        .set(a.editor.auth)
        .send({ name: 'Late', parent_id: doomed.id })
        .then((res) => res);
      expect(await waitForLockWait('pg_advisory_xact_lock')).toBe(true);
      release();
      await holder;
      const [deleted, created] = await Promise.all([deleting, creating]);
      expect(deleted.status).toBe(204);
      expect({ status: created.status, body: created.body }).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'body.parent_id' }] },
      });
    } finally {
      release();
      await holder.catch(() => undefined);
    }
    await request(t.app).get(at(site, doomed.id)).set(a.editor.auth).expect(404);
    await expectAcyclic(site);
  });
});

it('lets an author delete their own folder recursively only when everything below it is theirs', async () => {
  const site = await freshSite();
  const author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [site] });
  const own = await create(author.auth, site, 'Mine');
  const theirs = await create(a.editor.auth, site, 'Editor inside', own.id);
  const denied = await request(t.app)
    .delete(`${at(site, own.id)}?recursive=true`)
    .set(author.auth)
    .expect(403);
  expect(denied.body.detail).toMatch(/only what they made/);
  await request(t.app).get(at(site, theirs.id)).set(a.editor.auth).expect(200);
  await request(t.app).delete(at(site, theirs.id)).set(a.editor.auth).expect(204);
  await create(author.auth, site, 'Also mine', own.id);
  await request(t.app)
    .delete(`${at(site, own.id)}?recursive=true`)
    .set(author.auth)
    .expect(204);
});
