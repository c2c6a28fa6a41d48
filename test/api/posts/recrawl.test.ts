// POST /{site}/posts/{post_id}/recrawl: the source page fetched again with
// its ETag; a 304 leaves the post alone, a changed page replaces the title
// and body (the previous kept in post_versions, the version raised so an old
// If-Match gets 412) and the job's output summarises the change.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { signedIn, type Caller } from '../../helpers/factories.ts';
import { giveCredits, jobsSuite, startTestWorker } from '../../helpers/jobs.ts';
import { articlePage, paragraph, startPageServer, type PageServer } from '../../helpers/pages.ts';

const suite = jobsSuite();
let pages: PageServer;
let author: Caller;

beforeAll(async () => {
  pages = await startPageServer();
  const { t, a } = suite;
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  for (const caller of [a.editor, author]) await giveCredits(t, a.site, 100, caller.user.id);
});
afterAll(() => pages.close());

const recrawl = (id: string, auth = suite.a.editor.auth) =>
  request(suite.t.app).post(`/${suite.a.site.slug}/posts/${id}/recrawl`).set(auth).set('Prefer', 'wait=20').send();

async function imported(path: string, auth = suite.a.editor.auth): Promise<string> {
  const job = await request(suite.t.app)
    .post(`/${suite.a.site.slug}/posts/from-url`)
    .set(auth)
    .set('Prefer', 'wait=20')
    .send({ url: `${pages.url}${path}` })
    .expect(200);
  expect(job.body.status).toBe('succeeded');
  return job.body.output.post_id as string;
}

it('says unchanged on a 304, and on a change keeps the old body as a version and summarises the diff', async () => {
  suite.worker = await startTestWorker(suite.t, { FETCH_ALLOW_LOOPBACK: 'true' });
  const [one, two, three] = [paragraph('tide', 1), paragraph('moon', 2), paragraph('wind', 3)];
  pages.pages.set('/story', { etag: '"v1"', body: articlePage({ title: 'Tides', paragraphs: [one, two, three] }) });
  const id = await imported('/story');
  const postPath = `/${suite.a.site.slug}/posts/${id}`;
  const before = await request(suite.t.app).get(postPath).set(suite.a.editor.auth).expect(200);

  const same = await recrawl(id).expect(200);
  expect(same.body).toMatchObject({ status: 'succeeded', output: { changed: false, not_modified: true } });
  expect(pages.requests.at(-1)?.headers['if-none-match']).toBe('"v1"');
  const unchanged = await request(suite.t.app).get(postPath).set(suite.a.editor.auth).expect(200);
  expect(unchanged.body.version).toBe(before.body.version);
  expect(unchanged.body.source.fetched_at > before.body.source.fetched_at).toBe(true);

  const edited = `${two.replace('moon', 'full moon')} And a sentence more.`;
  pages.pages.set('/story', {
    etag: '"v2"',
    body: articlePage({ title: 'Tides, revised', paragraphs: [one, edited, three, paragraph('rain', 4)] }),
  });
  const changed = await recrawl(id).expect(200);
  expect(changed.body.output).toMatchObject({
    changed: true,
    previous_version: before.body.version,
    version: before.body.version + 1,
    diff: {
      title_changed: true,
      paragraphs: { before: 3, after: 4, added: 1, removed: 0, changed: 1, unchanged: 2 },
    },
  });
  expect(changed.body.output.diff.words.after).toBeGreaterThan(changed.body.output.diff.words.before);
  const after = await request(suite.t.app).get(postPath).set(suite.a.editor.auth).expect(200);
  expect(after.body).toMatchObject({
    title: 'Tides, revised',
    version: before.body.version + 1,
    source: { etag: '"v2"' },
  });
  expect(after.body.body).toContain('full moon');
  const kept = await suite.t.services.db.one(sql.type(
    z.object({ version: z.number(), title: z.string(), body: z.string(), reason: z.string() }),
  )`
    select version, title, body, reason from post_versions where post_id = ${id}`);
  expect(kept).toEqual({ version: before.body.version, title: 'Tides', body: before.body.body, reason: 'recrawl' });
  // A client holding the version before the recrawl loses its update.
  await request(suite.t.app)
    .patch(postPath)
    .set(suite.a.editor.auth)
    .set('If-Match', `"${before.body.version}"`)
    .send({ excerpt: 'mine' })
    .expect(412);
});

it('is for imported posts the caller may change, and 404 across tenants', async () => {
  const { t, a, b } = suite;
  suite.worker = await startTestWorker(t, { FETCH_ALLOW_LOOPBACK: 'true' });
  pages.pages.set('/editors', { body: articlePage({ title: 'Editors', paragraphs: [paragraph('desk')] }) });
  const editorsPost = await imported('/editors');
  await recrawl(editorsPost, author.auth).expect(403);
  await recrawl(editorsPost, b.admin.auth).expect(404);
  await request(t.app).post(`/${a.site.slug}/posts/${editorsPost}/recrawl`).expect(401);
  await recrawl('not-a-uuid').expect(422);
  const written = await request(t.app)
    .post(`/${a.site.slug}/posts/`)
    .set(author.auth)
    .send({ title: 'Mine' })
    .expect(201);
  expect((await recrawl(written.body.id, author.auth).expect(409)).body.detail).toMatch(/not imported from a URL/);
  // The author's own imported post: allowed.
  pages.pages.set('/authors', { body: articlePage({ title: 'Authors', paragraphs: [paragraph('pen')] }) });
  const own = await imported('/authors', author.auth);
  expect((await recrawl(own, author.auth).expect(200)).body.output).toMatchObject({
    changed: false,
    not_modified: false,
  });
});
