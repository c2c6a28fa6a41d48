// Job lists people can use: both orders (oldest first, the default, and
// newest first) page to the end with no job missing or repeated and a
// total; the admin list's filters (kind, state, tenant by id, name or slug,
// site, user, age, error code) and their 422s; progress rounded to two
// decimals wherever a job is answered.
import request from 'supertest';
import { z } from 'zod';
import type { JobRow } from '../../../core/jobs/model.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { newSite, type Caller } from '../../helpers/factories.ts';
import { staffedTenant, unique, type Auth, type Staffed } from '../../helpers/identity.ts';
import { jobsSuite, newJob } from '../../helpers/jobs.ts';

let t: TestApp;
let admin: Caller;
const suite = jobsSuite();

/** A tenant of its own with 61 jobs on its site: three pages of 25, the last one short. */
let busy: Staffed;
let jobs: JobRow[];

beforeAll(async () => {
  ({ t, admin } = suite);
  busy = await staffedTenant(t, `Busy Bakery ${unique()}`);
  jobs = [];
  for (let i = 0; i < 61; i++) jobs.push(await newJob(t, busy.site, { kind: 'speech' }));
  // Ten jobs made in the same instant: the id breaks the tie, in both orders.
  await t.services.db.query(sql.typeAlias('void')`
    update jobs set created_at = (select created_at from jobs where id = ${jobs[30]!.id})
    where id = any(${sql.array(
      jobs.slice(25, 35).map((job) => job.id),
      'uuid',
    )})`);
});

/** Every job in creation order, as the database sees it (ties broken by id). */
const inCreationOrder = async (siteId: string) =>
  t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select id from jobs where site_id = ${siteId} order by created_at, id`);

type Walk = { ids: string[]; totals: number[]; pages: number };

/** Follows next_cursor from the first page to the last, counting on each page. */
async function walk(path: string, auth: Auth, limit = 25): Promise<Walk> {
  const walked: Walk = { ids: [], totals: [], pages: 0 };
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: request.Response = await request(t.app)
      .get(
        `${path}${separator}limit=${limit}&include_total=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      .set(auth)
      .expect(200);
    walked.ids.push(...page.body.items.map((item: { id: string }) => item.id));
    walked.totals.push(page.body.total);
    walked.pages += 1;
    cursor = page.body.next_cursor;
    if (walked.pages > 10) throw new Error('the cursor does not end');
  } while (cursor);
  return walked;
}

describe('sort on GET /{site_identifier}/jobs/', () => {
  it('pages oldest first (the default) and newest first to the end, none missing or repeated, with a total', async () => {
    const expected = [...(await inCreationOrder(busy.site.id))];
    expect(expected).toHaveLength(61);
    const path = `/${busy.site.slug}/jobs/`;

    const oldest = await walk(path, busy.editor.auth);
    expect(oldest.ids).toEqual(expected);
    expect(oldest.pages).toBe(3);
    expect(oldest.totals).toEqual([61, 61, 61]);
    expect((await walk(`${path}?sort=created_at`, busy.editor.auth)).ids).toEqual(expected);

    const newest = await walk(`${path}?sort=-created_at`, busy.editor.auth);
    expect(newest.ids).toEqual([...expected].reverse());
    expect(new Set(newest.ids).size).toBe(61);
    expect(newest.pages).toBe(3);
    expect(newest.totals).toEqual([61, 61, 61]);
    // The newest job is the first row of the first page.
    expect(newest.ids[0]).toBe(jobs.at(-1)!.id);

    // Filters and sort together.
    const running = jobs.slice(50, 53).map((job) => job.id);
    await t.services.db.query(
      sql.typeAlias('void')`update jobs set status = 'running' where id = any(${sql.array(running, 'uuid')})`,
    );
    expect((await walk(`${path}?status=running&sort=-created_at`, busy.editor.auth, 2)).ids).toEqual(
      [...running].reverse(),
    );
    await t.services.db.query(
      sql.typeAlias('void')`update jobs set status = 'queued' where id = any(${sql.array(running, 'uuid')})`,
    );
  });

  it('refuses an unknown sort with 422', async () => {
    for (const sort of ['newest', 'updated_at', '-id', 'created_at,id', ''])
      await request(t.app)
        .get(`/${busy.site.slug}/jobs/?sort=${encodeURIComponent(sort)}`)
        .set(busy.editor.auth)
        .expect(422);
  });
});

describe('sort on GET /admin/jobs/', () => {
  it('pages both orders to the end over every tenant, and over one', async () => {
    const expected = [...(await inCreationOrder(busy.site.id))];
    const oldest = await walk(`/admin/jobs/?tenant_id=${busy.tenant.id}`, admin.auth);
    expect(oldest.ids).toEqual(expected);
    expect(oldest.totals).toEqual([61, 61, 61]);
    const newest = await walk(`/admin/jobs/?tenant_id=${busy.tenant.id}&sort=-created_at`, admin.auth);
    expect(newest.ids).toEqual([...expected].reverse());
    expect(newest.totals).toEqual([61, 61, 61]);

    const everyone = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
      select id from jobs order by created_at desc, id desc`);
    const all = await walk('/admin/jobs/?sort=-created_at', admin.auth, 40);
    expect(all.ids).toEqual(everyone);
    expect(new Set(all.totals)).toEqual(new Set([everyone.length]));
  });

  it('names each row’s tenant and site, as one job does', async () => {
    const page = await request(t.app)
      .get(`/admin/jobs/?tenant_id=${busy.tenant.id}&sort=-created_at&limit=1`)
      .set(admin.auth)
      .expect(200);
    expect(page.body.items[0]).toMatchObject({
      id: jobs.at(-1)!.id,
      tenant_id: busy.tenant.id,
      tenant_name: busy.tenant.name,
      site_id: busy.site.id,
      site_slug: busy.site.slug,
    });
    const one = await request(t.app).get(`/admin/jobs/${jobs[0]!.id}`).set(admin.auth).expect(200);
    expect(one.body).toMatchObject({ tenant_name: busy.tenant.name, site_slug: busy.site.slug });
  });
});

describe('filters on GET /admin/jobs/', () => {
  let other: Staffed;
  let otherSite: Site;
  let made: Record<string, JobRow>;
  const list = async (query: string) =>
    (await request(t.app).get(`/admin/jobs/?limit=200&${query}`).set(admin.auth).expect(200)).body.items.map(
      (item: { id: string }) => item.id,
    ) as string[];

  beforeAll(async () => {
    other = await staffedTenant(t, `Quiet Quarry ${unique()}`);
    otherSite = await newSite(t, other.tenant);
    made = {
      queued: await newJob(t, other.site, { kind: 'image', userId: other.editor.user.id }),
      failed: await newJob(t, other.site, { kind: 'image', status: 'failed' }),
      invalid: await newJob(t, otherSite, { kind: 'video', status: 'failed' }),
      old: await newJob(t, otherSite, { kind: 'video', status: 'succeeded' }),
    };
    await t.services.db.query(sql.typeAlias('void')`
      update jobs set error = ${sql.jsonb({ code: 'invalid_input', message: 'no' })} where id = ${made.invalid!.id}`);
    await t.services.db.query(sql.typeAlias('void')`
      update jobs set created_at = '2024-03-01T12:00:00Z' where id = ${made.old!.id}`);
  });

  const ids = (...names: string[]) => names.map((name) => made[name]!.id);

  it('by kind and state', async () => {
    const tenant = `tenant_id=${other.tenant.id}`;
    expect(await list(`${tenant}&kind=image`)).toEqual(ids('queued', 'failed'));
    expect(await list(`${tenant}&status=failed`)).toEqual(ids('failed', 'invalid'));
    expect(await list(`${tenant}&status=failed&kind=video`)).toEqual(ids('invalid'));
  });

  it('by tenant: its id, a part of its name in any case, or its slug', async () => {
    const all = ids('old', 'queued', 'failed', 'invalid');
    const name = other.tenant.name;
    expect((await list(`tenant=${other.tenant.id}`)).sort()).toEqual([...all].sort());
    expect((await list(`tenant=${encodeURIComponent(name.toUpperCase())}`)).sort()).toEqual([...all].sort());
    expect((await list(`tenant=${encodeURIComponent(name.slice(6))}`)).sort()).toEqual([...all].sort());
    expect((await list(`tenant=${other.tenant.slug}`)).sort()).toEqual([...all].sort());
    expect(await list('tenant=nobody-has-this-name')).toEqual([]);
    // A LIKE wildcard in the name is a character, not "anything".
    expect(await list('tenant=%25')).toEqual([]);
  });

  it('by site (id or slug) and by user', async () => {
    expect(await list(`site_id=${otherSite.id}`)).toEqual(ids('old', 'invalid'));
    expect(await list(`site=${otherSite.slug}`)).toEqual(ids('old', 'invalid'));
    expect(await list(`site=${otherSite.id}`)).toEqual(ids('old', 'invalid'));
    expect(await list(`user_id=${other.editor.user.id}`)).toEqual(ids('queued'));
  });

  it('by age', async () => {
    const tenant = `tenant_id=${other.tenant.id}`;
    expect(await list(`${tenant}&created_before=2025-01-01T00:00:00Z`)).toEqual(ids('old'));
    expect(await list(`${tenant}&created_after=2025-01-01T00:00:00%2B02:00`)).toEqual(
      ids('queued', 'failed', 'invalid'),
    );
    expect(
      await list(`${tenant}&created_after=2024-03-01T12:00:00Z&created_before=2024-03-01T12:00:00.000001Z`),
    ).toEqual(ids('old'));
    expect(await list(`${tenant}&max_age_hours=24`)).toEqual(ids('queued', 'failed', 'invalid'));
  });

  it('by error code', async () => {
    expect(await list(`tenant_id=${other.tenant.id}&error_code=invalid_input`)).toEqual(ids('invalid'));
    expect(await list(`tenant_id=${other.tenant.id}&error_code=provider_rejected`)).toEqual(ids('failed'));
    expect(await list(`tenant_id=${other.tenant.id}&error_code=canceled`)).toEqual([]);
  });

  it('refuses bad values with 422', async () => {
    for (const query of [
      'sort=newest',
      'status=broken',
      'kind=Not%20A%20Kind',
      'tenant_id=acme',
      'tenant=',
      `tenant=${'x'.repeat(201)}`,
      'site_id=main',
      'site=',
      'user_id=42',
      'created_after=yesterday',
      'created_before=2024-13-01T00:00:00Z',
      'max_age_hours=0',
      'error_code=Bad%20Code',
    ]) {
      const answer = await request(t.app).get(`/admin/jobs/?${query}`).set(admin.auth);
      expect([query, answer.status]).toEqual([query, 422]);
      expect(answer.headers['content-type']).toMatch(/problem\+json/);
    }
  });

  it('is for global admins only', async () => {
    await request(t.app).get(`/admin/jobs/?tenant=${other.tenant.slug}`).set(other.admin.auth).expect(403);
    await request(t.app).get('/admin/jobs/?sort=-created_at').expect(401);
  });
});

describe('progress', () => {
  it('is answered rounded to two decimals: a whole percent', async () => {
    const job = await newJob(t, busy.site, { kind: 'speech', status: 'running' });
    const setProgress = (value: number) =>
      t.services.db.query(
        sql.typeAlias('void')`update jobs set progress = ${value}, stage = 'Rendering' where id = ${job.id}`,
      );
    const answered = async () => {
      const one = await request(t.app).get(`/${busy.site.slug}/jobs/${job.id}`).set(busy.editor.auth).expect(200);
      const adminOne = await request(t.app).get(`/admin/jobs/${job.id}`).set(admin.auth).expect(200);
      const listed = await request(t.app)
        .get(`/admin/jobs/?tenant_id=${busy.tenant.id}&sort=-created_at&limit=1`)
        .set(admin.auth)
        .expect(200);
      const siteListed = await request(t.app)
        .get(`/${busy.site.slug}/jobs/?status=running&limit=1`)
        .set(busy.editor.auth)
        .expect(200);
      expect(listed.body.items[0].id).toBe(job.id);
      expect(one.body.stage).toBe('Rendering');
      return [
        one.body.progress,
        adminOne.body.progress,
        listed.body.items[0].progress,
        siteListed.body.items[0].progress,
      ];
    };

    // Stored as a real, 0.1 read back as 0.10000000149011612.
    await setProgress(0.1);
    expect(await answered()).toEqual([0.1, 0.1, 0.1, 0.1]);
    await setProgress(0.4725);
    expect(await answered()).toEqual([0.47, 0.47, 0.47, 0.47]);
    await setProgress(0.999);
    expect(await answered()).toEqual([1, 1, 1, 1]);
    await setProgress(1 / 3);
    expect(await answered()).toEqual([0.33, 0.33, 0.33, 0.33]);
  });
});
