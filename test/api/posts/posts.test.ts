// Posts through HTTP: who reads and writes them (authors only their own),
// slugs unique per site and locale, HTML sanitised and Markdown kept,
// translations, If-Match, scheduled publication by the worker (once, also
// when the worker starts after the time), listing with filters and sorts,
// featured images counted as a use of the media item, and deletion.
import request from 'supertest';
import { z } from 'zod';
import { publishDuePost } from '../../../core/posts/schedule.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, mediaRow, pathsOf, withLocales, type ContentCast } from '../../helpers/content.ts';
import { expectPaginates, idsOf, unique, type Auth } from '../../helpers/identity.ts';
import { startTestWorker } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

type PostRow = {
  id: string;
  slug: string;
  title: string;
  body: string;
  status: string;
  version: number;
  locale: string;
  published_at: string | null;
  scheduled_for: string | null;
  author_id: string | null;
  tags: string[];
};

const base = () => `/${site.slug}/posts/`;
const at = (id: string) => `/${site.slug}/posts/${id}`;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de']);
});
afterAll(() => stopTestApp(t));

async function newPost(auth: Auth, body: Record<string, unknown> = {}): Promise<PostRow> {
  const res = await request(t.app)
    .post(base())
    .set(auth)
    .send({ title: `Post ${unique()}`, ...body });
  if (res.status !== 201) throw new Error(`create post: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as PostRow;
}

describe('writing', () => {
  it('creates a draft with a slug from its title, by its author, and says where it is', async () => {
    const res = await request(t.app)
      .post(base())
      .set(c.author.auth)
      .send({ title: 'Hello, Wörld! 2026', body: '# Hi\n\n<b>as written</b>', tags: [' news ', 'news', 'tech'] })
      .expect(201);
    expect(res.body).toMatchObject({
      slug: 'hello-world-2026',
      status: 'draft',
      body_format: 'markdown',
      body: '# Hi\n\n<b>as written</b>',
      locale: 'en',
      author_id: c.author.user.id,
      tags: ['news', 'tech'],
      published_at: null,
      master_id: null,
      source: null,
    });
    expect(res.headers.location).toBe(at(res.body.id));
    expect(res.headers.etag).toBe('"1"');
    const read = await request(t.app).get(at(res.body.id)).set(c.reader).expect(200);
    expect(read.body).toEqual(res.body);
  });

  it('sanitises an HTML body on the way in', async () => {
    const post = await newPost(c.a.editor.auth, {
      body_format: 'html',
      body: '<p onclick="x()">Hi <script>alert(1)</script><a href="javascript:alert(1)">link</a></p>',
    });
    expect(post.body).toBe('<p>Hi <a>link</a></p>');
    const changed = await request(t.app)
      .patch(at(post.id))
      .set(c.a.editor.auth)
      .send({ body: '<img src="x" onerror="alert(1)"><style>p{}</style>ok' })
      .expect(200);
    expect(changed.body.body).toBe('<img src="x" />ok');
  });

  it('keeps slugs unique per site and locale: 409 for a taken one', async () => {
    const first = await newPost(c.a.editor.auth, { slug: `taken-${site.id.slice(0, 8)}` });
    const again = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'Again', slug: first.slug })
      .expect(409);
    expect(again.headers['content-type']).toMatch(/problem\+json/);
    // Another locale may use it.
    await newPost(c.a.editor.auth, { slug: first.slug, locale: 'de' });
    const other = await newPost(c.a.editor.auth);
    await request(t.app).patch(at(other.id)).set(c.a.editor.auth).send({ slug: first.slug }).expect(409);
  });

  it('publishes with a time, and archives keeping it', async () => {
    const post = await newPost(c.a.editor.auth, { status: 'published' });
    expect(post.published_at).not.toBeNull();
    const archived = await request(t.app).patch(at(post.id)).set(c.a.editor.auth).send({ status: 'archived' });
    expect(archived.body).toMatchObject({ status: 'archived', published_at: post.published_at, version: 2 });
    const draft = await request(t.app).patch(at(post.id)).set(c.a.editor.auth).send({ status: 'draft' });
    expect(draft.body).toMatchObject({ status: 'draft', published_at: null });
  });

  it('makes translations in other locales, one per locale, and deletes them with their master', async () => {
    const master = await newPost(c.a.editor.auth, { title: 'Master' });
    const german = await newPost(c.a.editor.auth, { title: 'Meister', master_id: master.id, locale: 'de' });
    expect(german).toMatchObject({ locale: 'de', slug: 'meister' });
    await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'Noch einer', master_id: master.id, locale: 'de' })
      .expect(409);
    const same = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'Same', master_id: master.id, locale: 'en' })
      .expect(422);
    expect(pathsOf(same.body)).toEqual(['body.locale']);
    const notMaster = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'X', master_id: german.id, locale: 'en' })
      .expect(422);
    expect(pathsOf(notMaster.body)).toEqual(['body.master_id']);
    await request(t.app).delete(at(master.id)).set(c.a.editor.auth).expect(204);
    await request(t.app).get(at(german.id)).set(c.a.editor.auth).expect(404);
  });

  it('turns a lost update into a 412 with If-Match', async () => {
    const post = await newPost(c.a.editor.auth);
    await request(t.app)
      .patch(at(post.id))
      .set(c.a.editor.auth)
      .set('If-Match', '"1"')
      .send({ title: 'A' })
      .expect(200);
    const stale = await request(t.app)
      .patch(at(post.id))
      .set(c.a.editor.auth)
      .set('If-Match', '"1"')
      .send({ title: 'B' })
      .expect(412);
    expect(stale.headers['content-type']).toMatch(/problem\+json/);
    expect((await request(t.app).get(at(post.id)).set(c.a.editor.auth)).body.title).toBe('A');
  });

  it('answers 422 with every problem of a bad body, and writes nothing', async () => {
    const before = (await request(t.app).get(`${base()}?include_total=true`).set(c.a.editor.auth)).body.total;
    const res = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: '', slug: 'Not A Slug', body_format: 'rtf', status: 'live', tags: 'x', extra: 1 })
      .expect(422);
    expect(pathsOf(res.body)).toEqual(
      expect.arrayContaining(['body.title', 'body.slug', 'body.body_format', 'body.status', 'body.tags']),
    );
    await request(t.app).post(base()).set(c.a.editor.auth).send({ title: 'X', locale: 'fr' }).expect(422);
    const video = await mediaRow(t, site, 'video');
    const notImage = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'X', featured_media_id: video })
      .expect(422);
    expect(pathsOf(notImage.body)).toEqual(['body.featured_media_id']);
    const stranger = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'X', author_id: c.b.editor.user.id })
      .expect(422);
    expect(pathsOf(stranger.body)).toEqual(['body.author_id']);
    await request(t.app)
      .patch(at((await newPost(c.a.editor.auth)).id))
      .set(c.a.editor.auth)
      .send({})
      .expect(422);
    const after = (await request(t.app).get(`${base()}?include_total=true`).set(c.a.editor.auth)).body.total;
    expect(after).toBe(before + 1);
  });

  it('counts as a use of its featured image: the image is not deleted unless forced, then the post loses it', async () => {
    const image = await mediaRow(t, site);
    const post = await newPost(c.a.editor.auth, { featured_media_id: image });
    const refused = await request(t.app).delete(`/${site.slug}/media/${image}`).set(c.a.editor.auth).expect(409);
    expect(JSON.stringify(refused.body)).toContain(post.id);
    await request(t.app).delete(`/${site.slug}/media/${image}?force=true`).set(c.a.editor.auth).expect(204);
    expect((await request(t.app).get(at(post.id)).set(c.a.editor.auth)).body.featured_media_id).toBeNull();
  });
});

describe('who may', () => {
  it('answers 401 without a token, 404 for another tenant, 403 for an author on another’s post', async () => {
    const post = await newPost(c.a.editor.auth);
    await request(t.app).get(at(post.id)).expect(401);
    await request(t.app).post(base()).send({ title: 'X' }).expect(401);
    for (const call of [
      request(t.app).get(at(post.id)),
      request(t.app).patch(at(post.id)).send({ title: 'X' }),
      request(t.app).delete(at(post.id)),
      request(t.app).get(base()),
    ])
      await call.set(c.b.admin.auth).expect(404);
    await request(t.app).patch(at(post.id)).set(c.author.auth).send({ title: 'Mine now' }).expect(403);
    await request(t.app).delete(at(post.id)).set(c.author.auth).expect(403);
    await request(t.app).patch(at(post.id)).set(c.reader).send({ title: 'X' }).expect(403);
    await request(t.app).post(base()).set(c.noScope).send({ title: 'X' }).expect(403);
  });

  it('lets authors change their own posts and name only themselves as author', async () => {
    const own = await newPost(c.author.auth);
    await request(t.app).patch(at(own.id)).set(c.author.auth).send({ title: 'Mine' }).expect(200);
    await request(t.app).patch(at(own.id)).set(c.otherAuthor.auth).send({ title: 'Not yours' }).expect(403);
    await request(t.app)
      .post(base())
      .set(c.author.auth)
      .send({ title: 'X', author_id: c.a.editor.user.id })
      .expect(403);
    // A post an editor wrote for the author is the author's to change.
    const given = await newPost(c.a.editor.auth, { author_id: c.author.user.id });
    await request(t.app).patch(at(given.id)).set(c.author.auth).send({ title: 'Given' }).expect(200);
    await request(t.app).delete(at(own.id)).set(c.author.auth).expect(204);
  });
});

describe('scheduling', () => {
  const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
  const statusOf = async (id: string) => (await request(t.app).get(at(id)).set(c.a.editor.auth)).body as PostRow;

  it('refuses a time in the past, or a time without the status', async () => {
    const past = await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'X', status: 'scheduled', scheduled_for: '2020-01-01T00:00:00Z' })
      .expect(422);
    expect(pathsOf(past.body)).toEqual(['body.scheduled_for']);
    await request(t.app).post(base()).set(c.a.editor.auth).send({ title: 'X', status: 'scheduled' }).expect(422);
    await request(t.app)
      .post(base())
      .set(c.a.editor.auth)
      .send({ title: 'X', scheduled_for: soon(60_000) })
      .expect(422);
  });

  it('publishes a scheduled post at its time, once, also when the worker starts after it', async () => {
    const early = await newPost(c.a.editor.auth, { status: 'scheduled', scheduled_for: soon(800) });
    const later = await newPost(c.a.editor.auth, { status: 'scheduled', scheduled_for: soon(60_000) });
    const moved = await newPost(c.a.editor.auth, { status: 'scheduled', scheduled_for: soon(900) });
    // Moved away and back to draft: its job goes with the schedule.
    await request(t.app).patch(at(moved.id)).set(c.a.editor.auth).send({ status: 'draft' }).expect(200);
    expect(early).toMatchObject({ status: 'scheduled', published_at: null });
    // No worker runs until after the time (a restart, a deploy).
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await statusOf(early.id)).status).toBe('scheduled');
    const worker = await startTestWorker(t);
    try {
      const published = await pollUntil(
        () => statusOf(early.id),
        (post) => post.status === 'published',
        { tries: 100, everyMs: 100 },
      );
      expect(published).toMatchObject({ status: 'published', scheduled_for: null, version: 2 });
      expect(published.published_at).not.toBeNull();
    } finally {
      await worker.stop();
    }
    expect((await statusOf(later.id)).status).toBe('scheduled');
    expect((await statusOf(moved.id)).status).toBe('draft');
    // Once: the job run again (a crash after its work) changes nothing.
    expect(await publishDuePost(t.services.db, early.id)).toBe(false);
    expect((await statusOf(early.id)).version).toBe(2);
    const jobs = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int from graphile_worker.jobs where key = ${`post-publish:${moved.id}`}`);
    expect(jobs).toBe(0);
  });
});

describe('listing', () => {
  it('filters by status, locale, tag, category, author and text, sorts, and pages', async () => {
    const listSite = await withLocales(t, c.a.site, ['en', 'de']);
    const tagged = await newPost(c.a.editor.auth, {
      title: `Zebra ${unique()}`,
      tags: ['zoo'],
      categories: ['animals'],
      status: 'published',
    });
    const german = await newPost(c.a.editor.auth, { title: `Apfel ${unique()}`, locale: 'de' });
    const mine = await newPost(c.author.auth, { excerpt: 'a needle here' });
    const list = (query: string) =>
      request(t.app).get(`/${listSite.slug}/posts/?limit=200&${query}`).set(c.reader).expect(200);
    expect(idsOf((await list('tag=zoo')).body)).toEqual([tagged.id]);
    expect(idsOf((await list('category=animals&status=published')).body)).toEqual([tagged.id]);
    expect(idsOf((await list('locale=de')).body)).toContain(german.id);
    expect(idsOf((await list('locale=de')).body)).not.toContain(tagged.id);
    expect(idsOf((await list(`author_id=${c.author.user.id}&q=needle`)).body)).toEqual([mine.id]);
    const byTitle = idsOf((await list('sort=-title')).body);
    expect(byTitle.indexOf(tagged.id)).toBeLessThan(byTitle.indexOf(german.id));
    await request(t.app).get(`${base()}?sort=size`).set(c.reader).expect(422);
    await expectPaginates(t, c.reader, base());
    await expectPaginates(t, c.reader, `${base()}?sort=-title`);
  });
});
