// A tenant's clone carries its content (issue 41 item 5): the tenant and its
// sites are made at once, the content follows as a tenant_clone job, and the
// copy's public pages read as the original's, every reference pointing
// inside the copy; files are shared, and outlive the deletion of either side.
import { existsSync } from 'node:fs';
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { copyContent } from '../../../core/cloning/content-copy.ts';
import { accessChangeHeard } from '../../helpers/app.ts';
import { createElement, createType, withLocales } from '../../helpers/content.ts';
import { unique } from '../../helpers/identity.ts';
import { jobsSuite, localFile, startTestWorker, waitForJob } from '../../helpers/jobs.ts';

const suite = jobsSuite();
let site: Site;
const media: { id: string; key: string }[] = [];
const pageIds: string[] = [];
let drafted: { article: string; author: string };
let second: Site;

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await request(suite.t.app).post(`/${site.slug}${path}`).set(suite.a.admin.auth).send(body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
};

/** A ready media item whose file is stored (the bytes say which). */
async function storedMedia(folderId: string | null) {
  const { t } = suite;
  const key = `${site.tenant_id}/${site.id}/${unique()}.png`;
  await t.services.storage.put(key, Buffer.from(`file ${key}`), 'image/png');
  const variantKey = `${key}.w320.webp`;
  await t.services.storage.put(variantKey, Buffer.from(`variant ${key}`), 'image/webp');
  const id = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, folder_id, kind, mime_type, storage_key, status, title, size_bytes, variants)
    values (${site.tenant_id}, ${site.id}, ${folderId}, 'image', 'image/png', ${key}, 'ready', ${`Picture ${unique()}`}, 10,
            ${sql.jsonb([{ name: 'w320', key: variantKey, mime_type: 'image/webp', width: 320, height: 240, size_bytes: 12 }])})
    returning id`);
  media.push({ id, key });
  return id;
}

beforeAll(async () => {
  const { t, a } = suite;
  site = await withLocales(t, a.site, ['en', 'fr']);
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await accessChangeHeard(t);

  const top = await post('/media/folders/', { name: 'Pictures' });
  const folder = (await post('/media/folders/', { name: 'Nested', parent_id: top.id })).id;
  const [m1, m2, m3] = [await storedMedia(folder), await storedMedia(null), await storedMedia(folder)];
  // Used by nothing: it can be deleted (an item content uses cannot).
  await storedMedia(top.id);

  await createType(t, a.admin.auth, site, {
    api_id: 'person',
    fields: [
      { id: 'name', label: 'Name', type: 'text', localized: true },
      { id: 'photo', label: 'Photo', type: 'media' },
    ],
  });
  await createType(t, a.admin.auth, site, {
    api_id: 'article',
    fields: [
      { id: 'title', label: 'Title', type: 'text', localized: true },
      { id: 'author', label: 'Author', type: 'reference', validations: { reference_types: ['person'] } },
      { id: 'gallery', label: 'Gallery', type: 'list', of: { type: 'media' } },
      { id: 'related', label: 'Related', type: 'list', of: { type: 'reference' } },
      {
        id: 'meta',
        label: 'Meta',
        type: 'object',
        fields: [
          { id: 'cover', label: 'Cover', type: 'media' },
          { id: 'see_also', label: 'See also', type: 'reference' },
        ],
      },
    ],
  });
  const p1 = await createElement(t, a.admin.auth, site, {
    type: 'person',
    status: 'published',
    data: { name: 'Ada', photo: m1 },
  });
  const p2 = await createElement(t, a.admin.auth, site, {
    type: 'person',
    status: 'published',
    data: { name: 'Grace' },
  });
  const a1 = await createElement(t, a.admin.auth, site, {
    type: 'article',
    status: 'published',
    data: {
      title: 'Engines',
      author: p1.id,
      gallery: [m2, m3],
      related: [p2.id],
      meta: { cover: m1, see_also: p2.id },
    },
  });
  await createElement(t, a.admin.auth, site, {
    master_id: a1.id,
    locale: 'fr',
    status: 'published',
    data: { title: 'Moteurs' },
  });
  await createElement(t, a.admin.auth, site, {
    master_id: p1.id,
    locale: 'fr',
    status: 'published',
    data: { name: 'Adé' },
  });
  // A draft beside the live article, naming another author: copied, its reference remapped too.
  await request(t.app)
    .patch(`/${site.slug}/elements/${a1.id}`)
    .set(a.admin.auth)
    .send({ data: { author: p2.id } })
    .expect(200);
  drafted = { article: a1.id, author: p2.id };

  const home = await post('/pages/', { slug: 'home', title: 'Home', status: 'published' });
  const about = await post('/pages/', { slug: 'about', title: 'About', parent_id: home.id, status: 'published' });
  const team = await post('/pages/', { slug: 'team', title: 'Team', parent_id: about.id, status: 'published' });
  const accueil = await post('/pages/', {
    slug: 'accueil',
    title: 'Accueil',
    locale: 'fr',
    master_id: home.id,
    status: 'published',
  });
  pageIds.push(home.id, about.id, team.id, accueil.id);
  await post(`/pages/${home.id}/elements`, { element_id: a1.id });
  await post(`/pages/${home.id}/elements`, { element_id: p2.id, area: 'sidebar', settings: { width: 'wide' } });
  await post(`/pages/${about.id}/elements`, { element_id: p1.id });
  await post(`/pages/${team.id}/elements`, { element_id: p1.id });
  await post(`/pages/${team.id}/elements`, { element_id: p2.id });

  const story = await post('/posts/', { title: 'A story', status: 'published', featured_media_id: m2 });
  await post('/posts/', {
    title: 'Une histoire',
    slug: 'une-histoire',
    locale: 'fr',
    master_id: story.id,
    status: 'published',
  });

  // A second site of the tenant: its copy's element names its copy's media item, not the first site's.
  const res = await request(t.app)
    .post('/sites/')
    .set(suite.admin.auth)
    .send({ tenant_id: a.tenant.id, name: 'Second', slug: `second-${unique()}` });
  expect(res.status).toBe(201);
  second = res.body as Site;
  const picture = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
    values (${a.tenant.id}, ${second.id}, 'image', 'image/png', ${`${a.tenant.id}/${second.id}/${unique()}.png`}, 'ready')
    returning id`);
  await createType(t, suite.admin.auth, second, {
    api_id: 'banner',
    fields: [{ id: 'picture', label: 'Picture', type: 'media' }],
  });
  await createElement(t, suite.admin.auth, second, { type: 'banner', data: { picture } });
});

type Clone = { id: string; slug: string; copy_job_id: string | null; copy_job_url: string | null };

async function cloneAndWait(): Promise<{ copy: Clone; copySite: Site }> {
  const { t, a, admin } = suite;
  suite.worker ??= await startTestWorker(t);
  const res = await request(t.app)
    .post(`/admin/tenants/${a.tenant.id}/clone`)
    .set(admin.auth)
    .send({ name: `Copy ${unique()}` })
    .expect(201);
  const copy = res.body as Clone;
  expect(copy.copy_job_id).toEqual(expect.any(String));
  const job = await waitForJob(t, copy.copy_job_id!, ['succeeded', 'failed', 'canceled'], 60_000);
  expect(job.error).toBeNull();
  expect(job.status).toBe('succeeded');
  const copySite = await t.services.db.one(sql.type(z.object({ id: z.uuid(), slug: z.string(), tenant_id: z.uuid() }))`
    select id, slug, tenant_id from sites where tenant_id = ${copy.id} and slug = ${`${copy.slug}-${site.slug}`}`);
  await accessChangeHeard(t);
  return { copy, copySite: { ...site, ...copySite } };
}

/** The copy's ids of the source site's rows, from clone_id: to read a copy's answer as the original's. */
async function idMap(copyTenant: string, copySite: Site): Promise<Map<string, string>> {
  const rows = await suite.t.services.db.any(sql.type(z.object({ old: z.string(), new: z.string() }))`
    select id::text as old, clone_id(${copyTenant}, id)::text as new from (
      select id from content_elements where site_id = ${site.id} union all select id from content_types where site_id = ${site.id}
      union all select id from pages where site_id = ${site.id} union all select id from posts where site_id = ${site.id}
      union all select id from media_items where site_id = ${site.id}) ids`);
  const map = new Map(rows.map((row) => [row.new, row.old]));
  map.set(copySite.id, site.id);
  map.set(copySite.slug, site.slug);
  map.set(copySite.tenant_id, site.tenant_id);
  return map;
}

const cloneId = (copyTenant: string, id: string) =>
  suite.t.services.db.oneFirst(
    sql.type(z.object({ id: z.string() }))`select clone_id(${copyTenant}, ${id})::text as id`,
  );

const asOriginal = (body: unknown, map: Map<string, string>) =>
  JSON.parse(
    JSON.stringify(body).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z0-9-]+/g, (found) =>
      map.has(found) ? map.get(found)! : found,
    ),
  ) as unknown;

async function publicRead(slug: string, path: string) {
  const res = await request(suite.t.app).get(`/public/${slug}${path}`);
  expect(res.status).toBe(200);
  return res.body as unknown;
}

describe('POST /admin/tenants/{tenant_id}/clone with content', () => {
  it('copies the content as a job: the copy’s public pages, navigation, elements and posts equal the original’s', async () => {
    const { t, admin } = suite;
    const { copy, copySite } = await cloneAndWait();
    const job = await request(t.app).get(copy.copy_job_url!).set(admin.auth).expect(200);
    expect(job.body).toMatchObject({ kind: 'tenant_clone', status: 'succeeded', progress: 1, credits_charged: 0 });
    expect(job.body.output).toMatchObject({
      sites: 2,
      content_types: 3,
      elements: 6,
      pages: 4,
      page_elements: 5,
      posts: 2,
    });
    expect(job.body.output).toMatchObject({ media_items: 5, media_folders: 2 });
    expect(Object.keys(job.body.output.stage_ms)).toEqual(expect.arrayContaining(['elements', 'pages', 'page slots']));
    await request(t.app).get(`/admin/jobs/${copy.copy_job_id}`).set(admin.auth).expect(200);

    const map = await idMap(copy.id, copySite);
    const toCopy = new Map([...map].map(([copied, original]) => [original, copied]));
    const reads = [
      '/navigation',
      '/navigation?locale=fr',
      '/pages',
      '/pages?locale=fr',
      '/elements',
      '/posts',
      '/posts?locale=fr',
    ];
    for (const id of pageIds) reads.push(`/pages/${id}?depth=2`, `/pages/${id}?depth=2&locale=fr`);
    for (const path of reads) {
      const original = await publicRead(site.slug, path);
      const copied = await publicRead(copySite.slug, asOriginal(path, toCopy) as string);
      expect({ path, body: asOriginal(copied, map) }).toEqual({ path, body: original });
    }
    // Not vacuous: the home page shows its two elements, the article's author resolved with the author's photo.
    const home0 = (await publicRead(site.slug, `/pages/${pageIds[0]}?depth=2`)) as { elements: unknown[] };
    expect(home0.elements).toHaveLength(2);
    expect(JSON.stringify(home0)).toContain('"Ada"');
    expect(JSON.stringify(home0)).toContain(media[0]!.id);
    // The copy's pages are its own rows, not the original's under another site.
    const home = (await publicRead(copySite.slug, `/pages/${toCopy.get(pageIds[0]!)}`)) as { id: string };
    expect(home.id).toBe(toCopy.get(pageIds[0]!));
    expect(home.id).not.toBe(pageIds[0]);
  });

  it('points every reference of the copy inside the copy: element data, links, translations, slots, tree, posts, folders', async () => {
    const { t } = suite;
    const { copySite } = await cloneAndWait();
    const db = t.services.db;
    const count = (query: ReturnType<typeof sql.fragment>) =>
      db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from (${query}) q`);
    const uuid = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
    const idsInData = sql.fragment`
      select s #>> '{}' as id from content_elements e, jsonb_path_query(e.data, 'strict $.** ? (@.type() == "string")') s
      where e.site_id = ${copySite.id} and s #>> '{}' ~ ${uuid}`;
    // Ids of elements or media anywhere in the copy's data: there are some, and all are the copy's.
    expect(await count(idsInData)).toBe(7);
    expect(
      await count(sql.fragment`
        select 1 from (${idsInData}) d where not exists (select 1 from content_elements x where x.id = d.id::uuid and x.site_id = ${copySite.id})
          and not exists (select 1 from media_items x where x.id = d.id::uuid and x.site_id = ${copySite.id})`),
    ).toBe(0);
    const outside = [
      sql.fragment`select 1 from content_element_links l join content_elements e on e.id = l.target_id
                   where l.site_id = ${copySite.id} and e.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from content_element_media l join media_items m on m.id = l.media_id
                   where l.site_id = ${copySite.id} and m.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from content_elements e join content_elements m on m.id = e.master_id
                   where e.site_id = ${copySite.id} and m.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from content_elements e join content_types ty on ty.id = e.type_id
                   where e.site_id = ${copySite.id} and ty.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from page_elements s join content_elements e on e.id = s.element_id
                   where s.site_id = ${copySite.id} and e.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from page_elements s join pages p on p.id = s.page_id
                   where s.site_id = ${copySite.id} and p.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from pages p join pages o on o.id = p.parent_id or o.id = p.master_id
                   where p.site_id = ${copySite.id} and o.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from posts p left join posts o on o.id = p.master_id left join media_items m on m.id = p.featured_media_id
                   where p.site_id = ${copySite.id} and (o.site_id <> ${copySite.id} or m.site_id <> ${copySite.id})`,
      sql.fragment`select 1 from media_items m join media_folders f on f.id = m.folder_id
                   where m.site_id = ${copySite.id} and f.site_id <> ${copySite.id}`,
      sql.fragment`select 1 from media_folders f join media_folders p on p.id = f.parent_id
                   where f.site_id = ${copySite.id} and p.site_id <> ${copySite.id}`,
    ];
    for (const query of outside) expect(await count(query)).toBe(0);
    // The second site's copy holds its element, naming the media item of that copy.
    const banner = await db.one(sql.type(z.object({ site: z.string(), picture_site: z.string() }))`
      select s.slug as site, m.site_id::text as picture_site
      from content_elements e join sites s on s.id = e.site_id
      join media_items m on m.id = (e.data ->> 'picture')::uuid
      where e.tenant_id = ${copySite.tenant_id} and e.site_id <> ${copySite.id}`);
    const secondCopy = await db.oneFirst(sql.type(z.object({ id: z.string() }))`
      select id::text from sites where tenant_id = ${copySite.tenant_id} and id <> ${copySite.id}`);
    expect(banner).toEqual({ site: expect.stringContaining(second.slug), picture_site: secondCopy });
    // The draft beside the live article names the copy's author.
    const mapped = (id: string) =>
      db.oneFirst(sql.type(z.object({ id: z.string() }))`select clone_id(${copySite.tenant_id}, ${id})::text as id`);
    const draftAuthor = await db.oneFirst(sql.type(z.object({ author: z.string().nullable() }))`
      select draft -> 'data' ->> 'author' as author from content_elements where id = ${await mapped(drafted.article)}`);
    expect(draftAuthor).toBe(await mapped(drafted.author));
    // The copy is searchable as the original is: its rows' triggers indexed them.
    const documents = (id: string) =>
      db.anyFirst(sql.type(z.object({ kind: z.string() }))`
        select kind || ':' || locale || ':' || title as kind from search_documents where site_id = ${id} order by 1`);
    expect(await documents(copySite.id)).toEqual(await documents(site.id));
    expect((await documents(site.id)).length).toBeGreaterThan(5);
    // Run again (a retried job), the copy inserts nothing twice.
    const again = await copyContent(
      db,
      copySite.tenant_id,
      [{ from: site.id, to: copySite.id }],
      new AbortController().signal,
      async () => {},
    );
    expect(Object.values(again.counts).every((n) => n === 0)).toBe(true);
    // As many links, slots, translations and tree edges as the original has.
    const same = (table: string, where = sql.fragment`true`) =>
      Promise.all(
        [site.id, copySite.id].map((id) =>
          count(sql.fragment`select 1 from ${sql.identifier([table])} where site_id = ${id} and ${where}`),
        ),
      );
    for (const [table, where] of [
      ['content_element_links', sql.fragment`true`],
      ['content_element_media', sql.fragment`true`],
      ['content_elements', sql.fragment`master_id is not null`],
      ['page_elements', sql.fragment`true`],
      ['pages', sql.fragment`parent_id is not null`],
      ['pages', sql.fragment`master_id is not null`],
      ['posts', sql.fragment`featured_media_id is not null`],
      ['posts', sql.fragment`master_id is not null`],
      ['media_items', sql.fragment`folder_id is not null`],
    ] as const) {
      const [original, copied] = await same(table, where);
      expect(original).toBeGreaterThan(0);
      expect({ table, copied }).toEqual({ table, copied: original });
    }
    // Every copied master has its public row (maintained by the elements' trigger, as for any write).
    expect(
      await count(sql.fragment`
        select 1 from content_elements e where e.site_id = ${copySite.id} and e.master_id is null
          and not exists (select 1 from public_elements p where p.master_id = e.id)`),
    ).toBe(0);
  });

  it('shares the files: deleting the original’s item leaves the copy’s file, deleting both removes it', async () => {
    const { t, a } = suite;
    const { copy, copySite } = await cloneAndWait();
    const item = media[3]!;
    const copyId = await t.services.db.oneFirst(
      sql.type(z.object({ id: z.string() }))`select clone_id(${copy.id}, ${item.id})::text as id`,
    );
    const stored = await t.services.db.one(sql.type(z.object({ storage_key: z.string(), site_id: z.string() }))`
      select storage_key, site_id from media_items where id = ${copyId}`);
    expect(stored).toEqual({ storage_key: item.key, site_id: copySite.id });

    await request(t.app).delete(`/${site.slug}/media/${item.id}`).set(a.admin.auth).expect(204);
    expect(existsSync(localFile(t, item.key))).toBe(true);
    expect(existsSync(localFile(t, `${item.key}.w320.webp`))).toBe(true);
    const view = await request(t.app)
      .get(`/${copySite.slug}/media/${copyId}/view`)
      .set(suite.admin.auth)
      .buffer(true)
      .expect(200);
    expect(Buffer.from(view.body as Buffer).toString()).toBe(`file ${item.key}`);

    // The last holders (this copy, and the earlier tests' copies) gone: the file goes with them.
    const holders = await t.services.db.any(sql.type(z.object({ id: z.string(), slug: z.string() }))`
      select m.id, s.slug from media_items m join sites s on s.id = m.site_id where m.storage_key = ${item.key}`);
    expect(holders.length).toBeGreaterThanOrEqual(1);
    for (const holder of holders)
      await request(t.app).delete(`/${holder.slug}/media/${holder.id}`).set(suite.admin.auth).expect(204);
    expect(existsSync(localFile(t, item.key))).toBe(false);
    expect(existsSync(localFile(t, `${item.key}.w320.webp`))).toBe(false);
  });

  it('answers 401 without a token, 403 for a tenant’s own admin, 404 for an unknown tenant, 422 without a name', async () => {
    const { t, a, admin } = suite;
    const path = `/admin/tenants/${a.tenant.id}/clone`;
    await request(t.app).post(path).send({ name: 'X' }).expect(401);
    await request(t.app).post(path).set(a.admin.auth).send({ name: 'X' }).expect(403);
    await request(t.app)
      .post('/admin/tenants/00000000-0000-4000-8000-000000000000/clone')
      .set(admin.auth)
      .send({ name: 'X' })
      .expect(404);
    await request(t.app).post(path).set(admin.auth).send({}).expect(422);
  });

  it('plans the copy’s scheduled publishes again: each copy has its own queue job, at the original’s time', async () => {
    const { t, a } = suite;
    const at = new Date(Date.now() + 86_400_000).toISOString();
    await t.services.db.query(sql.typeAlias('void')`update pages set publish_at = ${at} where id = ${pageIds[2]!}`);
    const post = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into posts (tenant_id, site_id, title, slug, locale, status, scheduled_for)
      values (${a.tenant.id}, ${site.id}, 'Later', ${`later-${unique()}`}, 'en', 'scheduled', ${at}) returning id`);
    try {
      const { copy } = await cloneAndWait();
      const queued = await t.services.db.any(sql.type(z.object({ key: z.string(), run_at: z.string() }))`
        select key, run_at::text from graphile_worker.jobs
        where key in (${`content-publish:page:${await cloneId(copy.id, pageIds[2]!)}`},
                      ${`post-publish:${await cloneId(copy.id, post)}`})`);
      expect(queued).toHaveLength(2);
      for (const row of queued) expect(Date.parse(row.run_at)).toBe(Date.parse(at));
    } finally {
      await t.services.db.query(sql.typeAlias('void')`update pages set publish_at = null where id = ${pageIds[2]!}`);
      await t.services.db.query(sql.typeAlias('void')`delete from posts where id = ${post}`);
    }
  });

  it('makes no job for a tenant without sites', async () => {
    const { t, admin } = suite;
    const empty = await request(t.app)
      .post('/admin/tenants/')
      .set(admin.auth)
      .send({ name: `Empty ${unique()}` });
    const res = await request(t.app)
      .post(`/admin/tenants/${empty.body.id}/clone`)
      .set(admin.auth)
      .send({ name: `Copy ${unique()}` })
      .expect(201);
    expect(res.body).toMatchObject({ copy_job_id: null, copy_job_url: null });
  });
});
