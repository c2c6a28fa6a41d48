// The search index's administration through HTTP: stats for the site's
// editors, dropping and rebuilding a site's index (a job, one at a time per
// site) for its administrators, and the service's index health for global
// administrators.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard } from '../../helpers/app.ts';
import { mediaRow, withLocales } from '../../helpers/content.ts';
import { serviceAccount } from '../../helpers/factories.ts';
import { jobsSuite, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { unique } from '../../helpers/identity.ts';

const suite = jobsSuite();
let site: Site;

beforeAll(async () => {
  const { t, a } = suite;
  site = await withLocales(t, a.site, ['en', 'fr']);
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await accessChangeHeard(t);
});

async function post(body: Record<string, unknown>) {
  const res = await request(suite.t.app)
    .post(`/${site.slug}/posts/`)
    .set(suite.a.admin.auth)
    .send({ title: `Post ${unique()}`, status: 'published', ...body });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body as { id: string };
}

const total = async (q: string) =>
  (await request(suite.t.app).get(`/search/sites/${site.slug}?q=${q}`).expect(200)).body.total as number;
const reindex = (auth = suite.a.admin.auth) =>
  request(suite.t.app).post(`/search/admin/sites/${site.slug}/reindex`).set(auth);
const health = () => request(suite.t.app).get('/search/admin/health').set(suite.admin.auth).expect(200);

describe('the index of a site', () => {
  it('counts documents per kind and locale for the site’s editors', async () => {
    await post({ title: 'Bonjour les mouettes', locale: 'fr' });
    await post({ title: 'Seagulls at noon' });
    await mediaRow(suite.t, site);
    const stats = await request(suite.t.app)
      .get(`/search/sites/${site.slug}/stats`)
      .set(suite.a.editor.auth)
      .expect(200);
    expect(stats.body).toMatchObject({
      documents: 3,
      per_kind_and_locale: [
        { kind: 'media', locale: 'en', documents: 1 },
        { kind: 'post', locale: 'en', documents: 1 },
        { kind: 'post', locale: 'fr', documents: 1 },
      ],
      last_reindex: null,
    });
    expect(stats.body.words).toBeGreaterThan(3);
    expect(stats.body.index_bytes).toBeGreaterThan(0);
    // The French title is stemmed in French: "mouette" finds "mouettes".
    expect(await total('mouette')).toBe(1);

    const reader = await serviceAccount(suite.t, suite.a.tenant, ['sites:read', 'search:read'], suite.a.admin);
    await request(suite.t.app).get(`/search/sites/${site.slug}/stats`).set(reader.auth).expect(200);
    await request(suite.t.app).get(`/search/sites/${site.slug}/stats`).set(suite.a.author.auth).expect(404);
    await request(suite.t.app).get(`/search/sites/${site.slug}/stats`).set(suite.b.admin.auth).expect(404);
    await request(suite.t.app).get(`/search/sites/${site.slug}/stats`).expect(401);
  });

  it('drops the site’s documents and words, and rebuilds them with a reindex job', async () => {
    await post({ title: 'Puffin colony', body: 'Puffins nest in burrows.' });
    expect(await total('puffin')).toBe(1);
    const dropped = await request(suite.t.app)
      .delete(`/search/admin/sites/${site.slug}/index`)
      .set(suite.a.admin.auth)
      .expect(200);
    expect(dropped.body.deleted_documents).toBeGreaterThanOrEqual(1);
    expect(await total('puffin')).toBe(0);
    const words = await suite.t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from search_terms where site_id = ${site.id}`);
    expect(words).toBe(0);
    const degraded = await health();
    expect(degraded.body).toMatchObject({ status: 'degraded', extensions: { pg_trgm: expect.any(String) } });
    expect(degraded.body.unindexed).toBeGreaterThanOrEqual(1);
    expect(degraded.body.oldest_unindexed_change).toEqual(expect.any(String));

    // Two requests before the worker runs: one job, one at a time per site.
    const first = await reindex().expect(202);
    const second = await reindex().expect(202);
    expect(second.body.id).toBe(first.body.id);
    expect(first.headers.location).toBe(`/${site.slug}/jobs/${first.body.id}`);
    suite.worker = await startTestWorker(suite.t);
    const done = await waitForJob(suite.t, first.body.id, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(done.output).toMatchObject({ documents: expect.any(Number), removed: 0 });
    expect(await total('puffin')).toBe(1);
    expect(await total('mouette')).toBe(1);
    expect((await health()).body).toMatchObject({ status: 'ok', unindexed: 0, oldest_unindexed_change: null });
    const stats = await request(suite.t.app)
      .get(`/search/sites/${site.slug}/stats`)
      .set(suite.a.admin.auth)
      .expect(200);
    expect(stats.body.last_reindex).toMatchObject({ job_id: first.body.id, documents: stats.body.documents });

    // Safe to repeat: the same documents again, and with Prefer: wait the finished job.
    const again = await reindex().set('Prefer', 'wait=20').expect(200);
    expect(again.body).toMatchObject({ status: 'succeeded', output: { documents: stats.body.documents } });
    expect(await total('puffin')).toBe(1);
  });

  it('lets only the site’s administrators rebuild or drop it, and only global admins read health', async () => {
    await reindex(suite.a.editor.auth).expect(403);
    await reindex(suite.b.admin.auth).expect(404);
    await request(suite.t.app).post(`/search/admin/sites/${site.slug}/reindex`).expect(401);
    await request(suite.t.app).delete(`/search/admin/sites/${site.slug}/index`).set(suite.a.editor.auth).expect(403);
    await request(suite.t.app).delete(`/search/admin/sites/${site.slug}/index`).set(suite.b.admin.auth).expect(404);
    await request(suite.t.app).get('/search/admin/health').set(suite.a.admin.auth).expect(403);
    await request(suite.t.app).get('/search/admin/health').expect(401);
    expect(await total('puffin')).toBe(1);
  });

  it('keeps a site’s index out of the way of its deletion', async () => {
    const doomed = await request(suite.t.app)
      .post('/sites/')
      .set(suite.a.admin.auth)
      .send({ name: 'Doomed', slug: `doomed-${unique()}`, tenant_id: suite.a.tenant.id })
      .expect(201);
    await request(suite.t.app)
      .post(`/${doomed.body.slug}/posts/`)
      .set(suite.a.admin.auth)
      .send({ title: 'Ephemeral words', status: 'published' })
      .expect(201);
    await request(suite.t.app).delete(`/sites/${doomed.body.id}`).set(suite.a.admin.auth).expect(204);
    const left = await suite.t.services.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select (select count(*) from search_documents where site_id = ${doomed.body.id})
           + (select count(*) from search_terms where site_id = ${doomed.body.id}) as n`);
    expect(left).toBe(0);
  });
});
