// Tenant isolation in the database (migration 0034, db/tenant-scope.ts): as
// the application role, a query that forgets its tenant filter sees only the
// tenant its request or job acts for, also in the tables keyed by site or by
// another tenant's row (migration 0041). The queries below forget it on purpose.
import request from 'supertest';
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import { allEndpoints as manifest, parseManifest } from '../../api/manifest.ts';
import { defineRoute } from '../../api/route.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { sql } from '../../db/pool.ts';
import { actingFor } from '../../db/tenant-scope.ts';
import { defineJob } from '../../worker/job.ts';
import { startWorker, type WorkerHandle } from '../../worker/runner.ts';
import { createLogger } from '../../core/logger.ts';
import { startTestApp, stopTestApp, testConfig, type TestApp } from '../helpers/app.ts';
import { createElement, createType } from '../helpers/content.ts';
import { giveCredits, submitAs, waitForJob } from '../helpers/jobs.ts';
import { newSite } from '../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../helpers/identity.ts';
import pg from 'pg';

// A route whose handler forgets the tenant filter: every folder, of every site.
const careless = parseManifest(
  [
    'group\tmethod\tpath\tname\tauth\ttimeout',
    'Test\tGET\t/{site_identifier}/careless/folders\tEvery folder\tbearer\t10s',
  ].join('\n'),
);
const tenantsSeen = z.object({ tenant_id: z.uuid(), name: z.string() });
const carelessRoute = defineRoute({
  key: 'GET /{site_identifier}/careless/folders',
  access: { site: 'read' },
  request: { params: z.object({ site_identifier: z.string() }) },
  responses: {
    200: {
      description: 'What an unfiltered query returned',
      schema: z.object({ rows: z.array(tenantsSeen), updated: z.number() }),
    },
  },
  async handler(_input, { db }) {
    const rows = await db.any(sql.type(tenantsSeen)`select tenant_id, name from media_folders order by name`);
    const updated = await db.query(sql.typeAlias('void')`update media_folders set name = name`);
    return { body: { rows, updated: updated.rowCount } };
  },
});

// A job whose handler forgets the tenant filter the same way.
const carelessKind = defineJob({
  input: z.object({}).loose(),
  async run(_input, { db }) {
    const tenants = await db.anyFirst(sql.type(z.object({ tenant_id: z.uuid() }))`select distinct tenant_id from jobs`);
    return { status: 'succeeded', output: { tenants: [...tenants] }, units: 1 };
  },
});

let t: TestApp;
let a: Staffed;
let b: Staffed;
beforeAll(async () => {
  t = await startTestApp({
    endpoints: [...manifest, ...careless],
    routes: [...allRoutes, carelessRoute],
    env: { DATABASE_APP_ROLE: 'app_user' },
  });
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  for (const [who, name] of [
    [a, 'a-folder'],
    [b, 'b-folder'],
  ] as const) {
    await request(t.app).post(`/${who.site.slug}/media/folders/`).set(who.admin.auth).send({ name }).expect(201);
  }
});
afterAll(() => stopTestApp(t));

const folderTenants = z.object({ tenant_id: z.uuid() });
const unfiltered = () => t.services.db.anyFirst(sql.type(folderTenants)`select tenant_id from media_folders`);

it('binds the application role: it owns nothing and cannot bypass row security', async () => {
  const role = await t.services.db.one(
    sql.type(
      z.object({ current_user: z.string(), super: z.boolean(), bypass: z.boolean() }),
    )`select current_user, rolsuper as super, rolbypassrls as bypass from pg_roles where rolname = current_user`,
  );
  expect(role).toEqual({ current_user: 'app_user', super: false, bypass: false });
});

it('shows an unfiltered query only the rows of the tenant it acts for', async () => {
  expect(await actingFor(a.tenant.id, unfiltered)).toEqual([a.tenant.id]);
  expect(await actingFor(b.tenant.id, unfiltered)).toEqual([b.tenant.id]);
  // Outside any scope (the process's own bookkeeping): every tenant, said explicitly by the setting '*'.
  expect([...(await unfiltered())].sort()).toEqual([a.tenant.id, b.tenant.id].sort());
});

it('refuses to write a row into another tenant, and changes none of its rows', async () => {
  const moved = actingFor(a.tenant.id, () =>
    t.services.db.query(sql.typeAlias('void')`update media_folders set tenant_id = ${b.tenant.id}`),
  );
  await expect(moved).rejects.toThrow(/row-level security/);
  const renamed = await actingFor(b.tenant.id, () =>
    t.services.db.query(sql.typeAlias('void')`update media_folders set name = name || '!' where name = 'a-folder'`),
  );
  expect(renamed.rowCount).toBe(0);
});

it('shows a connection as the role that never said whom it acts for nothing at all', async () => {
  const client = new pg.Client({ connectionString: t.database.url, options: '-c role=app_user' });
  await client.connect();
  try {
    // One simple query: the empty setting is what a connection that never set it has.
    const results = (await client.query(
      "set app.tenant_id = ''; select count(*)::int as n from media_folders; select count(*)::int as n from jobs",
    )) as unknown as pg.QueryResult[];
    expect(results.slice(1).map((result) => result.rows[0].n)).toEqual([0, 0]);
  } finally {
    await client.end();
  }
});

it('acts for the site’s tenant in a request: a handler that forgets the filter sees its own tenant’s rows only', async () => {
  for (const [who, name] of [
    [a, 'a-folder'],
    [b, 'b-folder'],
  ] as const) {
    const res = await request(t.app).get(`/${who.site.slug}/careless/folders`).set(who.admin.auth).expect(200);
    expect(res.body).toEqual({ rows: [{ tenant_id: who.tenant.id, name }], updated: 1 });
  }
  // A global administrator is bound to no tenant (their site routes may show every site): the backstop is for the others.
  const admin = await globalAdmin(t);
  const res = await request(t.app).get(`/${a.site.slug}/careless/folders`).set(admin.auth).expect(200);
  expect(res.body.rows.map((row: { tenant_id: string }) => row.tenant_id).sort()).toEqual(
    [a.tenant.id, b.tenant.id].sort(),
  );
});

it('acts for the job’s tenant in a worker: a handler that forgets the filter sees its own tenant’s jobs only', async () => {
  await t.services.db.query(sql.typeAlias('void')`
    insert into cost_settings (kind, unit, price, description) values ('test_careless', 'item', 1, 'test')
    on conflict do nothing`);
  const config = testConfig({
    DATABASE_URL: t.database.url,
    DATA_DIR: t.config.dataDir,
    DATABASE_APP_ROLE: 'app_user',
  });
  const worker: WorkerHandle = await startWorker({
    databaseUrl: t.database.url,
    config,
    db: t.services.db,
    logger: createLogger(config.logLevel),
    crontab: '',
    extraKinds: new Map([['test_careless', carelessKind]]),
  });
  try {
    const ids: Record<string, string> = {};
    for (const who of [a, b]) {
      await giveCredits(t, who.site, 10, who.admin.user.id);
      const actor: Actor = { kind: 'user', userId: who.admin.user.id, sessionId: 'test', isGlobalAdmin: false };
      const job = await submitAs(t, actor, who.site, { kind: 'test_careless', input: {}, estimatedUnits: 1 });
      ids[who.tenant.id] = job.id;
    }
    for (const who of [a, b]) {
      const done = await waitForJob(t, ids[who.tenant.id]!, ['succeeded', 'failed']);
      expect(done.output).toEqual({ tenants: [who.tenant.id] });
    }
  } finally {
    await worker.stop();
  }
});

it('shows a query that forgets its filter only its own tenant’s rows of the tables keyed by site or by another row', async () => {
  const elements: Record<string, string> = {};
  for (const who of [a, b]) {
    await request(t.app)
      .post(`/${who.site.slug}/posts/`)
      .set(who.admin.auth)
      .send({ title: 'Harbour lights', status: 'published' })
      .expect(201);
    const type = await createType(t, who.admin.auth, who.site);
    elements[who.site.id] = (
      await createElement(t, who.admin.auth, who.site, { type: type.api_id, status: 'published' })
    ).id;
  }
  const sitesIn = (table: 'search_documents' | 'search_terms') =>
    t.services.db.anyFirst(sql.type(z.object({ site_id: z.uuid() }))`
      select distinct site_id from ${sql.identifier([table])} order by site_id`);
  // Keyed by another row (the element it publishes), not by site: reached through that row.
  const published = () =>
    t.services.db.anyFirst(sql.type(z.object({ master_id: z.uuid() }))`select master_id from public_elements`);
  for (const who of [a, b]) {
    await actingFor(who.tenant.id, async () => {
      expect(await sitesIn('search_documents')).toEqual([who.site.id]);
      expect(await sitesIn('search_terms')).toEqual([who.site.id]);
      expect(await published()).toEqual([elements[who.site.id]]);
    });
  }
  expect([...(await sitesIn('search_documents'))].sort()).toEqual([a.site.id, b.site.id].sort());
});

it('lets a tenant’s administrator delete a site whose documents are indexed, as the bound role', async () => {
  // The deletion's cascade removes the documents after the site: their removal log is still written.
  const doomed = await newSite(t, a.tenant);
  await request(t.app)
    .post(`/${doomed.slug}/posts/`)
    .set(a.admin.auth)
    .send({ title: 'Ephemeral words', status: 'published' })
    .expect(201);
  await request(t.app).delete(`/sites/${doomed.id}`).set(a.admin.auth).expect(204);
  const removed = await t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from search_removals where site_id = ${doomed.id}`);
  expect(removed).toBe(1);
});

// What every tenant shares, though it may point at one tenant's row: an agent is assigned to
// many tenants, and its avatar (an image of one of their sites) is an optional pointer.
const sharedTables = ['agents'];

it('covers every table that carries tenant_id or site_id, or a key to a row of such a table', async () => {
  const uncovered = await t.services.db.anyFirst(sql.type(z.object({ relname: z.string() }))`
    with recursive owned as (
      select c.oid from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      where c.relkind in ('r', 'p') and exists (
        select from pg_attribute a where a.attrelid = c.oid and a.attname in ('tenant_id', 'site_id') and not a.attisdropped)
      union
      select k.conrelid from pg_constraint k join owned o on o.oid = k.confrelid
      where k.contype = 'f' and k.conrelid::regclass::text <> all (${sql.array(sharedTables, 'text')})
    )
    select c.relname from owned join pg_class c on c.oid = owned.oid
    where not (c.relrowsecurity and exists (
      select from pg_policy p where p.polrelid = c.oid and p.polname = 'tenant_isolation'))
    order by c.relname`);
  expect(uncovered).toEqual([]);
});
