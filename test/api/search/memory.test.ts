// Large sites are searched in a copy of their documents held in memory
// (core/search/memory): the same answers as PostgreSQL gives — hits, order,
// scores, snippets, counts, pages — and caught up with every write before
// the next search. Two apps on one database answer each query: one holding
// the site in memory (every site held: SEARCH_MEMORY_MIN_DOCUMENTS=0), one
// searching PostgreSQL (SEARCH_MEMORY_MB=0).
import request from 'supertest';
import { z } from 'zod';
import { closeServices, createServices } from '../../../core/boot.ts';
import { createLogger } from '../../../core/logger.ts';
import type { Services } from '../../../core/services.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import { createApp } from '../../../api/app.ts';
import { startTestApp, stopTestApp, testConfig, accessChangeHeard, type TestApp } from '../../helpers/app.ts';
import { contentCast, withLocales, type ContentCast } from '../../helpers/content.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;
let plain: { app: ReturnType<typeof createApp>; services: Services };

type Hit = { kind: string; id: string; title: string; snippet: string; score: number; path: string | null };
type Result = {
  items: Hit[];
  total: number;
  facets: Record<string, number>;
  exact: boolean;
  corrected_query: string | null;
  next_cursor: string | null;
};

const english = ['harbour', 'lighthouse', 'keepers', 'storm', 'stormy', 'coast', 'ships', 'sailing', 'waves', 'rock'];
const more = ['light', 'night', 'sea', 'boat', 'island', 'fog', 'wind', 'tide', 'north', 'sand', 'the', 'and', 'of'];
const german = ['Haus', 'Häuser', 'Leuchtturm', 'Sturm', 'Küste', 'Schiff', 'Welle', 'Nacht', 'Insel', 'Nebel', 'und'];

const held = () => request(t.app).get(`/search/sites/${site.slug}/stats`).set(c.a.admin.auth).expect(200);

/** The same search of both apps; PostgreSQL's answer. */
async function both(query: string): Promise<{ memory: Result; postgres: Result }> {
  const memory = (await request(t.app).get(`/search/sites/${site.slug}?${query}`).expect(200)).body as Result;
  const postgres = (await request(plain.app).get(`/search/sites/${site.slug}?${query}`).expect(200)).body as Result;
  return { memory, postgres };
}

/** Equal answers; the scores as close as the moments the two were asked (recent items are boosted by the second). */
function expectSame(memory: Result, postgres: Result, query: string) {
  const withoutScores = (result: Result) => ({
    ...result,
    next_cursor: result.next_cursor !== null,
    items: result.items.map(({ score: _, ...hit }) => hit),
  });
  // Past 1,000 matches PostgreSQL estimates the counts; the copy in memory counts them.
  const counted = postgres.exact ? {} : { total: memory.total, facets: memory.facets };
  expect({ query, ...withoutScores(memory) }).toEqual({ query, ...withoutScores(postgres), exact: true, ...counted });
  memory.items.forEach((hit, n) => expect(hit.score).toBeCloseTo(postgres.items[n]!.score, 6));
}

/** Waits (10 s at most) until this app holds the site read afresh with that many documents. */
async function untilHeld(documents: number) {
  for (let tries = 0; (await held()).body.held_in_memory?.documents !== documents; tries++) {
    if (tries > 200) throw new Error(`the site was never held with ${documents} documents`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function until(condition: () => boolean) {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 200) throw new Error('waited 10 s in vain');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  t = await startTestApp({ env: { SEARCH_MEMORY_MIN_DOCUMENTS: '0' } });
  const config = testConfig({ DATABASE_URL: t.database.url, SEARCH_MEMORY_MB: '0' });
  const services = await createServices(config, t.database.url, createLogger(config.logLevel), 'test');
  plain = { app: createApp(services), services };
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de']);
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await accessChangeHeard(t);
  // 400 posts, a word drawn for each place, the first words of each list most often; one in five in German.
  const draw = (words: string[], salt: number) => sql.fragment`
    (${sql.array(words, 'text')}::text[])[1 + floor(${words.length} * power(((g * 7919 + k * ${salt}) % 1009) / 1009.0, 2))::int]`;
  await t.services.db.query(sql.typeAlias('void')`
    insert into posts (tenant_id, site_id, title, slug, body, locale, status, published_at)
    select ${site.tenant_id}, ${site.id},
           string_agg(case when g % 5 = 0 then ${draw(german, 104729)} else ${draw(english, 104729)} end, ' ' order by k)
             filter (where k <= 4),
           'bulk-' || g,
           string_agg(case when g % 5 = 0 then ${draw(german, 7727)} else ${draw([...english, ...more], 7727)} end, ' ' order by k)
             filter (where k > 4),
           case when g % 5 = 0 then 'de' else 'en' end, 'published', now() - make_interval(mins => g)
    from generate_series(1, 400) g, generate_series(1, 40) k group by g`);
  // The first search asks for the site to be loaded; it is held once the stats say so.
  await request(t.app).get(`/search/sites/${site.slug}?q=storm`).expect(200);
  for (let tries = 0; !(await held()).body.held_in_memory; tries++) {
    if (tries > 100) throw new Error('the site was never held in memory');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
afterAll(async () => {
  if (plain) await closeServices(plain.services);
  await stopTestApp(t);
});

describe('a site held in memory', () => {
  it('says so in its stats, with every document', async () => {
    const { body } = await held();
    expect(body.held_in_memory).toMatchObject({ documents: 400, bytes: expect.any(Number) });
    expect(z.iso.datetime().safeParse(body.held_in_memory.loaded_at).success).toBe(true);
    expect(
      (await request(plain.app).get(`/search/sites/${site.slug}/stats`).set(c.a.admin.auth).expect(200)).body,
    ).toMatchObject({ documents: 400, held_in_memory: null });
  });

  it('reads the site’s words with it, as PostgreSQL reads them in each of its locales: their searches ask nothing', async () => {
    const index = (await t.services.searchIndexes.current(site.id))!;
    const read = (locale: string, word: string) =>
      t.services.db.oneFirst(sql.type(z.object({ q: z.string() }))`
        select websearch_to_tsquery(search_config(${locale}), ${word})::text as q`);
    for (const word of ['keepers', 'lighthouse', 'the', 'leuchtturm'])
      for (const locale of ['en', 'de'])
        expect([word, locale, index.wordQuery(locale, word)]).toEqual([word, locale, await read(locale, word)]);
    expect(index.wordQuery('en', 'narwhal')).toBeUndefined();
  });

  it.each([
    'q=storm',
    'q=lighthouse',
    'q=keeper',
    'q=storm%20coast',
    'q=harbour%20or%20rock',
    'q=storm%20-coast',
    'q=-storm',
    'q=the',
    'q=h%C3%A4user',
    'q=leuchtturm&locale=de',
    'q=storm&locale=en',
    'q=storm&kind=page,media',
    'q=storm&kind=post&limit=50',
    'q=sailing%20waves%20rock',
    'q=%22stormy%20coast%22',
    'q=stromy',
    'q=Storm%20the%20COAST',
    'q=the%20and%20of',
    'q=Leuchtturm%20h%C3%A4user',
    'q=storm-coast',
    'q=storms%27%20coast%209',
  ])('answers %s as PostgreSQL does', async (query) => {
    const { memory, postgres } = await both(query);
    expectSame(memory, postgres, query);
  });

  it('pages as PostgreSQL does, to the last page', async () => {
    let memory = (await both('q=storm&limit=7')).memory;
    let postgres = (await both('q=storm&limit=7')).postgres;
    let pages = 1;
    while (memory.next_cursor) {
      expect(memory.items.map((hit) => hit.id)).toEqual(postgres.items.map((hit) => hit.id));
      memory = (
        await request(t.app).get(`/search/sites/${site.slug}?q=storm&limit=7&cursor=${memory.next_cursor}`).expect(200)
      ).body;
      postgres = (
        await request(plain.app)
          .get(`/search/sites/${site.slug}?q=storm&limit=7&cursor=${postgres.next_cursor}`)
          .expect(200)
      ).body;
      pages++;
    }
    expect(postgres.next_cursor).toBeNull();
    expect(memory.items.map((hit) => hit.id)).toEqual(postgres.items.map((hit) => hit.id));
    // The 60 newest matches and up to 30 newest title matches are ranked: more than 8 pages of 7.
    expect(pages).toBeGreaterThan(8);
  });

  it('is caught up with every write before the next search: new, edited, unpublished, dropped', async () => {
    const made = await request(t.app)
      .post(`/${site.slug}/posts/`)
      .set(c.a.admin.auth)
      .send({ title: 'Zephyrine storm', body: 'A quiet harbour.', status: 'published' })
      .expect(201);
    let found = await both('q=zephyrine');
    expect(found.memory.items.map((hit) => hit.id)).toEqual([made.body.id]);
    expectSame(found.memory, found.postgres, 'zephyrine');
    expectSame((await both('q=storm')).memory, (await both('q=storm')).postgres, 'storm after a post');
    // Its text is kept for the next search that shows it, and never shown for another version.
    expect((await both('q=quiet')).memory.items[0]).toMatchObject({ id: made.body.id, title: 'Zephyrine storm' });

    const edited = await request(t.app)
      .patch(`/${site.slug}/posts/${made.body.id}`)
      .set(c.a.admin.auth)
      .send({ title: 'Quillwort fog' })
      .expect(200);
    found = await both('q=zephyrine');
    expect(found.memory.total).toBe(0);
    expect((await both('q=quillwort')).memory.items.map((hit) => hit.id)).toEqual([made.body.id]);
    expect((await both('q=quiet')).memory.items[0]).toMatchObject({ id: made.body.id, title: 'Quillwort fog' });

    await request(t.app)
      .patch(`/${site.slug}/posts/${made.body.id}`)
      .set(c.a.admin.auth)
      .set('If-Match', `"${edited.body.version}"`)
      .send({ status: 'draft' })
      .expect(200);
    expect((await both('q=quillwort')).memory).toMatchObject({ total: 0, items: [] });
    expect((await held()).body.held_in_memory.documents).toBe(400);

    // Written behind the API's back (SQL): heard on content_changed like any write.
    await t.services.db.query(sql.typeAlias('void')`
      update posts set status = 'archived' where site_id = ${site.id} and slug in ('bulk-1', 'bulk-2', 'bulk-3')`);
    await t.services.notifications.sync();
    const storm = await both('q=storm');
    expectSame(storm.memory, storm.postgres, 'storm after archiving');

    // Written while this process was not listening (its connection cut): caught up once it listens again.
    await t.services.db.any(sql.type(z.object({ terminated: z.boolean() }))`
      select pg_terminate_backend(pid) as terminated from pg_stat_activity
      where application_name = 'notifications' and datname = current_database()`);
    await until(() => !t.services.notifications.listening);
    await t.services.db.query(sql.typeAlias('void')`
      update posts set title = 'Unheard tern' where site_id = ${site.id} and slug = 'bulk-7'`);
    await until(() => t.services.notifications.listening);
    expect((await both('q=tern')).memory.items.map((hit) => hit.title)).toEqual(['Unheard tern']);

    // More rows written than a catch-up takes one by one (2,000): the site is read afresh, searched in PostgreSQL meanwhile.
    await t.services.db.query(sql.typeAlias('void')`
      insert into posts (tenant_id, site_id, title, slug, body, locale, status, published_at)
      select ${site.tenant_id}, ${site.id}, 'Flood ' || g, 'flood-' || g, 'storm surge', 'en', 'published', now() - make_interval(secs => g)
      from generate_series(1, 2100) g`);
    await t.services.notifications.sync();
    const flooded = await both('q=surge&limit=3');
    expectSame(flooded.memory, flooded.postgres, 'surge after a flood of writes');
    expect(flooded.memory.total).toBe(2100);
    await untilHeld(2497);
    const reread = await both('q=surge%20storm&limit=3');
    expectSame(reread.memory, reread.postgres, 'surge storm once read afresh');
    expect(reread.memory).toMatchObject({ total: 2100, exact: true });

    // Every row removed, more than a catch-up takes: read afresh again, empty, searched in PostgreSQL meanwhile.
    await request(t.app).delete(`/search/admin/sites/${site.slug}/index`).set(c.a.admin.auth).expect(200);
    expect((await both('q=storm')).memory).toMatchObject({ total: 0, items: [] });
    await untilHeld(0);
    expect((await both('q=storm')).memory).toMatchObject({ total: 0, items: [] });
  });
});
