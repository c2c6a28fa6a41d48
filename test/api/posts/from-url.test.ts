// POST /{site}/posts/from-url: a page served on 127.0.0.1 becomes a draft
// post (title, byline, published time, language, lead image) when the
// worker may reach loopback (FETCH_ALLOW_LOOPBACK), and every way into a
// private address is refused with a code and no charge: loopback when not
// allowed, IPv4-mapped IPv6, decimal and octal IPv4, a redirect to a private
// address, and a name that resolves to one.
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import type { Resolve } from '../../../core/net/safe-fetch.ts';
import { sql } from '../../../db/pool.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { articlePage, paragraph, startPageServer, type PageServer } from '../../helpers/pages.ts';

const suite = jobsSuite();
let pages: PageServer;
let author: Caller;
const loopback = { FETCH_ALLOW_LOOPBACK: 'true' };

beforeAll(async () => {
  pages = await startPageServer();
  const { t, a } = suite;
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  for (const caller of [a.editor, author, a.admin]) await giveCredits(t, a.site, 100, caller.user.id);
});
afterAll(() => pages.close());

const importUrl = (body: Record<string, unknown>, auth = suite.a.editor.auth, wait = true) => {
  const call = request(suite.t.app).post(`/${suite.a.site.slug}/posts/from-url`).set(auth);
  return (wait ? call.set('Prefer', 'wait=20') : call).send(body);
};

const postCount = () =>
  suite.t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from posts where site_id = ${suite.a.site.id}`);

describe('importing a page', () => {
  it('makes a draft post of the article, with its metadata and lead image, and charges one unit', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#c03' } })
      .png()
      .toBuffer();
    pages.pages.set('/img/lead.png', { body: png, type: 'image/png' });
    pages.pages.set('/news/harbour', {
      etag: '"v1"',
      body: articlePage({
        title: 'The Harbour at Night',
        byline: 'Ada Writer',
        lang: 'en-GB',
        published: '2026-03-01T10:00:00Z',
        image: '/img/lead.png',
        paragraphs: [paragraph('harbour', 1), paragraph('lighthouse', 2) + '<script>alert(1)</script>'],
      }),
    });
    const submitted = await importUrl(
      { url: `${pages.url}/news/harbour`, import_lead_image: true },
      author.auth,
      false,
    );
    expect(submitted.status).toBe(202);
    expect(submitted.headers.location).toBe(`/${suite.a.site.slug}/jobs/${submitted.body.id}`);
    const job = await waitForJob(suite.t, submitted.body.id, ['succeeded', 'failed']);
    // One url_import unit, at 2 credits (db/migrations/0004_credits.sql).
    expect(job).toMatchObject({ status: 'succeeded', credits_charged: 2, kind: 'url_import' });
    expect(job.output).toMatchObject({
      locale: 'en',
      extracted: {
        title: 'The Harbour at Night',
        byline: 'Ada Writer',
        published_at: '2026-03-01T10:00:00.000Z',
        lang: 'en-GB',
        lead_image_url: `${pages.url}/img/lead.png`,
      },
      lead_image: { imported: true },
    });
    const post = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/posts/${String(job.output!.post_id)}`)
      .set(author.auth)
      .expect(200);
    expect(post.body).toMatchObject({
      title: 'The Harbour at Night',
      status: 'draft',
      body_format: 'html',
      locale: 'en',
      author_id: author.user.id,
      featured_media_id: job.media_id,
      source: { url: `${pages.url}/news/harbour`, kind: 'url', etag: '"v1"', byline: 'Ada Writer' },
    });
    expect(post.body.body).toContain('The lighthouse is described here');
    expect(post.body.body).not.toMatch(/script|alert/);
    expect(post.body.source.fetched_at).toEqual(expect.any(String));
    const image = await request(suite.t.app)
      .get(`/${suite.a.site.slug}/media/${job.media_id}`)
      .set(author.auth)
      .expect(200);
    expect(image.body).toMatchObject({ kind: 'image', mime_type: 'image/png', width: 64, height: 32 });
  });

  it('answers 200 with the finished job under Prefer: wait, and replays it for the same Idempotency-Key', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    pages.pages.set('/news/replay', { body: articlePage({ title: 'Replayed', paragraphs: [paragraph('replay')] }) });
    const body = { url: `${pages.url}/news/replay` };
    const first = await importUrl(body).set('Idempotency-Key', 'from-url-1').expect(200);
    expect(first.body).toMatchObject({ status: 'succeeded', output: { extracted: { title: 'Replayed' } } });
    const again = await importUrl(body).set('Idempotency-Key', 'from-url-1').expect(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    await importUrl({ url: `${pages.url}/news/other` })
      .set('Idempotency-Key', 'from-url-1')
      .expect(422);
  });

  it('fails with a clear code and charges nothing for what is not an article', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    pages.pages.set('/thin', { body: '<html><body><p>Hi.</p></body></html>' });
    pages.pages.set('/data.json', { body: '{"a":1}', type: 'application/json' });
    for (const [path, code] of [
      ['/thin', 'not_an_article'],
      ['/data.json', 'not_an_article'],
      ['/missing', 'page_not_found'],
    ]) {
      const job = await importUrl({ url: `${pages.url}${path}` }).expect(200);
      expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code } });
    }
  });
});

describe('refusing private addresses', () => {
  const refused = async (url: string) => {
    const before = pages.requests.length;
    const posts = await postCount();
    const job = await importUrl({ url }).expect(200);
    expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'address_not_allowed' } });
    expect(job.body.error.message).not.toMatch(/10\.0\.0|192\.168|127\.0/);
    expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(await postCount()).toBe(posts);
    return pages.requests.length - before;
  };

  it('refuses a page on 127.0.0.1 unless loopback is allowed, and every other spelling of it', async () => {
    suite.worker = await startTestWorker(suite.t);
    pages.pages.set('/news/local', { body: articlePage({ title: 'Local', paragraphs: [paragraph('local')] }) });
    const port = new URL(pages.url).port;
    for (const url of [
      `${pages.url}/news/local`,
      `http://[::ffff:127.0.0.1]:${port}/news/local`,
      `http://2130706433:${port}/news/local`,
      `http://0177.0.0.1:${port}/news/local`,
      `http://0x7f.1:${port}/news/local`,
      `http://localhost:${port}/news/local`,
    ])
      expect(await refused(url)).toBe(0);
  });

  it('refuses a redirect to a private address, even with loopback allowed', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    pages.pages.set('/go/metadata', { redirect: 'http://169.254.169.254/latest/meta-data/' });
    pages.pages.set('/go/private', { redirect: 'http://10.0.0.1/admin', status: 301 });
    pages.pages.set('/go/mapped', { redirect: 'http://[::ffff:192.168.1.1]/' });
    for (const path of ['/go/metadata', '/go/private', '/go/mapped'])
      expect(await refused(`${pages.url}${path}`)).toBe(1);
  });

  it('refuses a name that resolves to a private address, even among public ones', async () => {
    const resolve: Resolve = async (hostname) =>
      hostname === 'intranet.example'
        ? [{ address: '10.0.0.7', family: 4 }]
        : [
            { address: '93.184.216.34', family: 4 },
            { address: 'fd00::1', family: 6 },
          ];
    suite.worker = await startTestWorker(suite.t, loopback, undefined, { resolve });
    await refused('http://intranet.example/page');
    await refused('http://mixed.example/page');
  });
});

describe('who may import, and what', () => {
  it('refuses callers without access and bad bodies before queueing', async () => {
    const { t, a, b } = suite;
    await request(t.app).post(`/${a.site.slug}/posts/from-url`).send({ url: 'https://example.com/' }).expect(401);
    await importUrl({ url: 'https://example.com/' }, b.admin.auth).expect(404);
    const reader = await serviceAccount(t, a.tenant, ['content:read', 'jobs:write']);
    await importUrl({ url: 'https://example.com/' }, reader.auth).expect(403);
    for (const body of [
      {},
      { url: 'not a url' },
      { url: 'ftp://example.com/file' },
      { url: 'file:///etc/passwd' },
      { url: 'https://example.com/', status: 'published' },
      { url: 'https://example.com/', locale: 'fr' },
      { url: 'https://example.com/', extra: true },
    ])
      await importUrl(body).expect(422);
    const poor = await signedIn(t, { tenant: a.tenant, role: 'editor', sites: [a.site] });
    expect((await importUrl({ url: 'https://example.com/' }, poor.auth).expect(402)).body).toMatchObject({
      required: 2,
    });
  });
});
