// Site search through HTTP: what is found (published posts, pages, elements,
// ready media of a public site, in each locale's language), how it ranks (a
// title above a body), how it pages, snippets, typos, completions, and the
// index kept current by every write in its own transaction.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { accessChangeHeard, startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import {
  contentCast,
  createElement,
  createType,
  mediaRow,
  withLocales,
  type ContentCast,
} from '../../helpers/content.ts';
import { startCountedApp } from '../../helpers/counted-app.ts';
import { newSite, serviceAccount } from '../../helpers/factories.ts';
import { unique } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

type Hit = {
  kind: string;
  id: string;
  locale: string;
  title: string;
  path: string | null;
  snippet: string;
  score: number;
};

const search = (query: string, target: Site = site) => request(t.app).get(`/search/sites/${target.slug}?${query}`);
const hitsOf = (body: { items: Hit[] }) => body.items.map((hit) => hit.title);

async function makePublic(target: Site): Promise<void> {
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${target.id}`);
  await accessChangeHeard(t);
}

async function post(body: Record<string, unknown>, target: Site = site, auth = c.a.admin.auth) {
  const res = await request(t.app)
    .post(`/${target.slug}/posts/`)
    .set(auth)
    .send({ title: `Post ${unique()}`, status: 'published', ...body });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body as { id: string; slug: string; version: number };
}

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de']);
  await makePublic(site);
});
afterAll(() => stopTestApp(t));

describe('searching a site', () => {
  it('ranks a title hit above a body hit, stems each locale’s language and finds nothing unpublished', async () => {
    const body = await post({ title: 'Harbour notes', body: 'We walked to the old lighthouse at dusk.' });
    const title = await post({ title: 'The lighthouse keepers', body: 'Stories from the coast.' });
    await post({ title: 'Lighthouse draft', status: 'draft' });
    await post({ title: 'Leuchttürme und Häuser', body: 'Wir besuchten alte Häuser.', locale: 'de' });

    const found = await search('q=lighthouse').expect(200);
    expect(found.headers['cache-control']).toBe('no-store');
    expect(found.body.items.map((hit: Hit) => hit.id)).toEqual([title.id, body.id]);
    expect(found.body.items[0]).toMatchObject({ kind: 'post', locale: 'en', path: title.slug });
    expect(found.body.items[0].score).toBeGreaterThan(found.body.items[1].score);
    expect(found.body.items[1].snippet).toContain('<mark>lighthouse</mark>');
    expect(found.body).toMatchObject({
      total: 2,
      facets: { post: 2, page: 0, element: 0, media: 0 },
      corrected_query: null,
    });
    // Stemmed: "keeper" finds "keepers"; German "Haus" finds "Häuser".
    expect(hitsOf((await search('q=keeper').expect(200)).body)).toEqual(['The lighthouse keepers']);
    expect(hitsOf((await search('q=Haus').expect(200)).body)).toEqual(['Leuchttürme und Häuser']);
    expect(hitsOf((await search('q=Haus&locale=en').expect(200)).body)).toEqual([]);
    // Web search syntax: a phrase, and a word left out.
    expect(hitsOf((await search('q="old lighthouse"').expect(200)).body)).toEqual(['Harbour notes']);
    expect(hitsOf((await search('q=lighthouse -coast').expect(200)).body)).toEqual(['Harbour notes']);
  });

  it('finds pages, elements by their text fields and media by alt text, with counts per kind', async () => {
    const page = await request(t.app)
      .post(`/${site.slug}/pages/`)
      .set(c.a.admin.auth)
      .send({
        title: 'Zeppelin rides',
        slug: `zeppelin-${unique()}`,
        status: 'published',
        seo: { description: 'Fly high' },
      })
      .expect(201);
    const type = await createType(t, c.a.admin.auth, site, {
      fields: [
        { id: 'headline', label: 'Headline', type: 'text' },
        { id: 'story', label: 'Story', type: 'rich_text' },
        { id: 'link', label: 'Link', type: 'url' },
      ],
    });
    const element = await createElement(t, c.a.admin.auth, site, {
      type: type.api_id,
      name: 'Hero block',
      status: 'published',
      data: {
        headline: 'Above the clouds',
        story: '<p>A <b>zeppelin</b> over the bay</p>',
        link: 'https://zeppelin.example',
      },
    });
    const media = await mediaRow(t, site);
    await request(t.app)
      .patch(`/${site.slug}/media/${media}`)
      .set(c.a.admin.auth)
      .send({ alt: 'A zeppelin above the harbour' })
      .expect(200);

    const all = await search('q=zeppelin').expect(200);
    expect(all.body.facets).toEqual({ post: 0, page: 1, element: 1, media: 1 });
    expect(new Set(all.body.items.map((hit: Hit) => hit.id))).toEqual(new Set([page.body.id, element.id, media]));
    const elements = await search('q=zeppelin&kind=element,media').expect(200);
    expect(elements.body.total).toBe(2);
    expect(elements.body.facets.page).toBe(1);
    expect(elements.body.items.map((hit: Hit) => hit.kind).sort()).toEqual(['element', 'media']);
    // A URL field is not prose: its words are not indexed.
    expect((await search('q=example&kind=element').expect(200)).body.total).toBe(0);
    expect((await search('q=clouds').expect(200)).body.items[0]).toMatchObject({ id: element.id, title: 'Hero block' });
  });

  it('keeps the index current with every write: edit, unpublish, publish again, delete', async () => {
    const made = await post({ title: 'Quokka sightings', body: 'Small and happy.' });
    expect((await search('q=quokka').expect(200)).body.total).toBe(1);
    const edited = await request(t.app)
      .patch(`/${site.slug}/posts/${made.id}`)
      .set(c.a.admin.auth)
      .send({ title: 'Wombat sightings' })
      .expect(200);
    expect((await search('q=quokka').expect(200)).body.total).toBe(0);
    expect((await search('q=wombat').expect(200)).body.total).toBe(1);
    await request(t.app)
      .patch(`/${site.slug}/posts/${made.id}`)
      .set(c.a.admin.auth)
      .set('If-Match', `"${edited.body.version}"`)
      .send({ status: 'draft' })
      .expect(200);
    expect((await search('q=wombat').expect(200)).body.total).toBe(0);
    await request(t.app)
      .patch(`/${site.slug}/posts/${made.id}`)
      .set(c.a.admin.auth)
      .send({ status: 'published' })
      .expect(200);
    expect((await search('q=wombat').expect(200)).body.total).toBe(1);
    await request(t.app).delete(`/${site.slug}/posts/${made.id}`).set(c.a.admin.auth).expect(204);
    expect((await search('q=wombat').expect(200)).body.total).toBe(0);
  });

  it('escapes snippets, so the only markup in them is <mark>', async () => {
    await post({ title: 'Inequalities', body: 'When a < b & c > d, the narwhal <i>agrees</i>.' });
    const [hit] = (await search('q=narwhal').expect(200)).body.items as Hit[];
    expect(hit!.snippet).toContain('a &lt; b &amp; c &gt; d, the <mark>narwhal</mark>');
    expect(hit!.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  it('pages with a cursor through every hit once, in order', async () => {
    for (let n = 0; n < 5; n++) await post({ title: `Pelican report ${n}`, body: 'pelican '.repeat(n + 1) });
    const full = await search('q=pelican&limit=50').expect(200);
    expect(full.body.total).toBe(5);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await search(`q=pelican&limit=2${cursor ? `&cursor=${cursor}` : ''}`).expect(200);
      walked.push(...res.body.items.map((hit: Hit) => hit.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(full.body.items.map((hit: Hit) => hit.id));
    await search('q=pelican&cursor=garbage').expect(400);
  });

  it('corrects a misspelt word when the query as written finds nothing', async () => {
    await post({ title: 'Flamingo season', body: 'Pink birds everywhere.' });
    const res = await search('q=flamingos%20seasn').expect(200);
    // Each word no document holds is replaced (the plural too: its stem is the same).
    expect(res.body.corrected_query).toBe('flamingo season');
    expect(hitsOf(res.body)).toEqual(['Flamingo season']);
    const none = await search('q=xqzvvk').expect(200);
    expect(none.body).toMatchObject({ total: 0, items: [], corrected_query: null });
  });

  it('serves only public sites, and only the site asked', async () => {
    const other = await newSite(t, c.b.tenant);
    await post({ title: 'Secret lighthouse' }, other, c.b.admin.auth);
    await search('q=lighthouse', other).expect(404);
    await makePublic(other);
    expect(hitsOf((await search('q=lighthouse', other).expect(200)).body)).toEqual(['Secret lighthouse']);
    expect(hitsOf((await search('q=lighthouse').expect(200)).body)).not.toContain('Secret lighthouse');
  });

  it('answers 422 for a bad query', async () => {
    for (const query of ['', 'q=', 'q=x&kind=bogus', 'q=x&limit=500', `q=${'x'.repeat(201)}`]) {
      const res = await search(query).expect(422);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
  });
});

describe('suggestions', () => {
  const suggest = (query: string) => request(t.app).get(`/search/sites/${site.slug}/suggest?${query}`);

  it('completes titles by prefix, then frequent words, at most ten, and survives a typo', async () => {
    await post({ title: 'Kingfisher diaries', body: 'kingfishers kingfisher kingdom kingdom kingdom' });
    const res = await suggest('q=King').expect(200);
    expect(res.body.suggestions[0]).toMatchObject({ text: 'Kingfisher diaries', source: 'title', kind: 'post' });
    expect(
      res.body.suggestions.filter((s: { source: string }) => s.source === 'word').map((s: { text: string }) => s.text),
    ).toEqual(expect.arrayContaining(['kingdom', 'kingfisher', 'kingfishers']));
    expect(res.body.corrected).toBe(false);
    for (let n = 0; n < 12; n++) await post({ title: `Kiwi ${n}`, body: `kiwi${String.fromCharCode(97 + n)}` });
    expect((await suggest('q=kiwi').expect(200)).body.suggestions).toHaveLength(10);
    expect((await suggest('q=kiwi&limit=3').expect(200)).body.suggestions).toHaveLength(3);

    const typo = await suggest('q=the%20kingdmo').expect(200);
    expect(typo.body.corrected).toBe(true);
    expect(typo.body.suggestions[0]).toMatchObject({ text: 'the kingdom', source: 'word' });
    await suggest('q=').expect(422);
    await suggest('q=x&limit=11').expect(422);
  });
});

describe('kept answers', () => {
  it('answers a repeated search from what was kept, still logs it, and drops it when the site’s index changes', async () => {
    const counted = await startCountedApp(t);
    try {
      const own = await newSite(t, c.a.tenant);
      await makePublic(own);
      await post({ title: 'Kestrel sightings' }, own);
      // The post's announcement reaches this app in its own time: heard after the first search, it would drop what
      // that search kept. Once sync() answers, every change committed before has been heard.
      await counted.services.notifications.sync();
      const searchKept = (q: string) => request(counted.app).get(`/search/sites/${own.slug}?q=${q}`).expect(200);
      const suggestKept = () => request(counted.app).get(`/search/sites/${own.slug}/suggest?q=kes`).expect(200);
      const first = await searchKept('kestrel');
      const completions = await suggestKept();
      expect(first.body.total).toBe(1);
      counted.counter.reset();
      const again = await searchKept('kestrel');
      expect((await suggestKept()).body).toEqual(completions.body);
      expect(counted.counter.count()).toBe(0);
      expect(again.body).toEqual(first.body);
      expect(again.headers['cache-control']).toBe('no-store');

      // A publish through the API is heard before its answer: the next search ranks again.
      const second = (
        await request(counted.app)
          .post(`/${own.slug}/posts/`)
          .set(c.a.admin.auth)
          .send({ title: 'Kestrel nests', status: 'published' })
          .expect(201)
      ).body as { id: string };
      const after = await searchKept('kestrel');
      expect(after.body.total).toBe(2);
      expect(after.body.items[0].id).toBe(second.id);
      // Unpublished again: gone from the next answer.
      await request(counted.app)
        .patch(`/${own.slug}/posts/${second.id}`)
        .set(c.a.admin.auth)
        .send({ status: 'draft' })
        .expect(200);
      expect((await searchKept('kestrel')).body.total).toBe(1);

      // Every search counted, kept or not.
      await counted.services.statistics.flush(t.services.db);
      const analytics = await request(t.app).get(`/search/sites/${own.slug}/analytics`).set(c.a.admin.auth).expect(200);
      expect(analytics.body.top_queries).toEqual([{ query: 'kestrel', searches: 4, average_hits: 1.3 }]);
    } finally {
      await counted.close();
    }
  });
});

describe('analytics, stats and the index', () => {
  it('logs each first page of a search, without who asked, for the site’s editors', async () => {
    const own = await newSite(t, c.a.tenant);
    await makePublic(own);
    for (const q of ['Otters', 'otters ', 'otters', 'nothing-here-at-all']) await search(`q=${q}`, own).expect(200);
    // Counted in memory, written by the process's next flush.
    await t.services.statistics.flush(t.services.db);
    const res = await request(t.app).get(`/search/sites/${own.slug}/analytics`).set(c.a.admin.auth).expect(200);
    expect(res.body).toMatchObject({
      searches: 4,
      searches_without_results: 4,
      top_queries: [
        { query: 'otters', searches: 3, average_hits: 0 },
        { query: 'nothing-here-at-all', searches: 1 },
      ],
    });
    expect(res.body.per_day).toEqual([{ day: new Date().toISOString().slice(0, 10), searches: 4, without_results: 4 }]);
    const columns = await t.services.db.anyFirst(sql.type(z.object({ name: z.string() }))`
      select column_name as name from information_schema.columns where table_name = 'search_queries' order by 1`);
    expect(columns).toEqual(['created_at', 'hits', 'id', 'locale', 'query', 'site_id']);

    const searcher = await serviceAccount(t, c.a.tenant, ['sites:read', 'search:read'], c.a.admin);
    await request(t.app).get(`/search/sites/${site.slug}/analytics`).set(searcher.auth).expect(200);
    await request(t.app).get(`/search/sites/${site.slug}/analytics`).set(c.reader).expect(403);
    await request(t.app).get(`/search/sites/${site.slug}/analytics`).set(c.author.auth).expect(403);
    await request(t.app).get(`/search/sites/${site.slug}/analytics`).set(c.b.admin.auth).expect(404);
    await request(t.app).get(`/search/sites/${site.slug}/analytics`).expect(401);
    await request(t.app).get(`/search/sites/${site.slug}/analytics?days=0`).set(c.a.admin.auth).expect(422);
  });
});

describe('bounded work', () => {
  it('takes the newest matches by either path alike, and estimates counts past the exact bound', async () => {
    for (let n = 0; n < 4; n++) await post({ title: `Osprey ${n}`, body: 'osprey nest' });
    const db = t.services.db;
    const query = sql.fragment`websearch_to_tsquery('english', 'osprey')`;
    const few = (count: number, inHead = false) =>
      db.anyFirst(sql.type(z.object({ item_id: z.uuid() }))`
        select item_id from search_newest_few(${site.id}, ${query}, null, array['post'], ${count}, ${inHead})`);
    // Expected to be so common that the first window is the newest document alone: widened until it holds three.
    const windowed = (count: number, inHead = false) =>
      db.anyFirst(sql.type(z.object({ item_id: z.uuid() }))`
        select item_id from search_newest_windowed(${site.id}, ${query}, null, array['post'], ${count}, ${inHead}, 10000000)`);
    expect(await windowed(3)).toEqual(await few(3));
    expect(await windowed(3, true)).toEqual(await few(3, true));
    expect(await few(10)).toHaveLength(4);
    const counted = (bound: number) =>
      db.one(sql.type(z.object({ facets: z.record(z.string(), z.number()), exact: z.boolean(), found: z.number() }))`
        select facets, exact, cardinality(found_ids) as found
        from search_candidates(${site.id}, ${query}, null, array['post'], 3, ${bound})`);
    // Exact: every match counted; three newest of the whole text and one of the titles (the same post twice).
    expect(await counted(10_000)).toEqual({ facets: { post: 4 }, exact: true, found: 4 });
    const estimated = await counted(0);
    expect(estimated.exact).toBe(false);
    expect(estimated.found).toBe(4);
    // Windowed, and nothing matches (the estimate was wrong): no facets rather than none at all.
    const nothing = await db.one(sql.type(z.object({ facets: z.record(z.string(), z.number()), exact: z.boolean() }))`
      select facets, exact from search_candidates(${site.id}, websearch_to_tsquery('english', 'zzyzx'), null, array['post'], 3, -1)`);
    expect(nothing).toEqual({ facets: {}, exact: false });
    expect(estimated.facets.post).toBeGreaterThan(0);
  });
});
