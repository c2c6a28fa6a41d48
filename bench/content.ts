// Content figures for npm run bench: a public page with ten elements, served
// from the cache (against bare Express hello) and computed on every request
// by an API process without the cache (against Express + pg, one row); a
// public list of 50 elements filtered by a field, in a locale with fallback,
// among 100,000 elements; the admin tree of 5,000 pages; and moving a subtree
// of 500 pages. Bulk rows are written in SQL (the API would take minutes to
// make 100,000 elements); everything measured goes through HTTP.
import { z } from 'zod';
import { createPool, sql } from '../db/pool.ts';
import { interleaved, median, rate, ratio, startBaseline, stopBaseline } from './compare.ts';
import { cpuPerRequest, withChildren } from './cpu.ts';
import { api, benchSite } from './http.ts';
import { load } from './load.ts';
import type { ApiLauncher } from './request-path.ts';

type Row = [string, string];

/** Percentiles of sequential requests, each built by `path(i)`. */
async function sequential(base: string, path: (i: number) => string, count: number, headers = {}) {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const began = performance.now();
    const res = await fetch(`${base}${path(i)}`, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path(i)} answered ${res.status}`);
    samples.push(performance.now() - began);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${samples.at(-1)!.toFixed(1)} ms (${count} requests)`;
}

const idRow = z.object({ id: z.uuid() });

export async function contentFigures(
  apiUrl: string,
  token: string,
  databaseUrl: string,
  launchApi: ApiLauncher,
  postgresPid: number,
): Promise<Row[]> {
  const db = await createPool(databaseUrl, { maxPoolSize: 2 });
  const uncached = await launchApi(databaseUrl, { PUBLIC_CACHE_SECONDS: '0' });
  const hello = await startBaseline('express-hello.ts', {});
  const withPg = await startBaseline('express-pg.ts', { DATABASE_URL: databaseUrl });
  try {
    const { site, pagePath } = await publicPage(apiUrl, token, 'Content bench');
    const siteId = await db.oneFirst(sql.type(idRow)`select id from sites where slug = ${site.slug}`);
    const tenantId = await db.oneFirst(sql.type(z.object({ tenant_id: z.uuid() }))`
      select tenant_id from sites where id = ${siteId}`);
    const mediaId = await db.oneFirst(sql.type(idRow)`
      insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
      values (${tenantId}, ${siteId}, 'image', 'image/png', ${`${tenantId}/${siteId}/bench.png`}, 'ready') returning id`);

    const pageBytes = (await (await fetch(`${apiUrl}${pagePath}`)).arrayBuffer()).byteLength;
    const loads = await interleaved(
      {
        hello: { url: `${hello.url}/` },
        sized: { url: `${hello.url}/bytes/${pageBytes}` },
        warm: { url: `${apiUrl}${pagePath}` },
        pg: { url: `${withPg.url}/media/${mediaId}` },
        cold: { url: `${uncached.url}${pagePath}` },
      },
      3,
      5,
    );

    // Where the uncached page's time goes, beside Express + pg's: CPU per request of each process.
    const postgres = () => withChildren(postgresPid);
    const coldSplit = await cpuPerRequest(
      { api: () => [uncached.pid], postgres },
      () => load(`${uncached.url}${pagePath}`, { seconds: 5 }),
      5,
    );
    const pgSplit = await cpuPerRequest(
      { express: () => [withPg.child.pid!], postgres },
      () => load(`${withPg.url}/media/${mediaId}`, { seconds: 5 }),
      5,
    );

    const bulk = await bulkElements(db, apiUrl, token, site.slug, siteId, tenantId);
    const filtered = await sequential(
      uncached.url,
      (i) => `/public/${site.slug}/elements?type=product&locale=de-CH&limit=50&filter[color]=color-${i % 50}`,
      200,
    );
    const byLocalized = await sequential(
      uncached.url,
      (i) =>
        `/public/${site.slug}/elements?type=product&locale=de-CH&limit=50&filter[label]=Produkt ${(i * 7919) % 100_000}`,
      200,
    );

    const tree = await bulkPages(db, siteId, tenantId);
    const auth = { Authorization: `Bearer ${token}` };
    const treeTimes = await sequential(apiUrl, () => `/${site.slug}/pages/tree`, 50, auth);
    const treeCold = await sequential(uncached.url, () => `/${site.slug}/pages/tree`, 50, auth);
    const moves: number[] = [];
    for (let i = 0; i < 10; i++) {
      const began = performance.now();
      await api(`${apiUrl}/${site.slug}/pages/${tree.big}/move`, token, 'PUT', {
        parent_id: i % 2 === 0 ? tree.target : null,
      });
      moves.push(performance.now() - began);
    }
    const pageCount = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from pages where site_id = ${siteId}`);

    return [
      [
        'Content: load client',
        '32 connections; 3 interleaved rounds of 5 s after one unrecorded warm-up round; medians (ranges of the rounds’ ratios)',
      ],
      [
        'Public page, 10 elements, de-CH → de fallback, cache warm',
        `${rate(loads.warm)}; ${ratio(loads.warm, loads.hello)} Express hello`,
      ],
      ['Bare Express hello (same rounds)', rate(loads.hello)],
      [
        `Bare Express, a JSON body of the page's ${(pageBytes / 1024).toFixed(1)} KB (same rounds)`,
        `${rate(loads.sized)}; the warm page is ${ratio(loads.warm, loads.sized)} of it`,
      ],
      [
        'The same page, no cache (every request computed)',
        `${rate(loads.cold)}; ${ratio(loads.cold, loads.pg)} Express + pg`,
      ],
      ['Bare Express + pg, one row (same rounds)', rate(loads.pg)],
      [
        'CPU per request, uncached page: API + PostgreSQL (one more 5 s load each)',
        `${coldSplit.micros.api} + ${coldSplit.micros.postgres} µs; Express + pg: ${pgSplit.micros.express} + ${pgSplit.micros.postgres} µs`,
      ],
      [`Public list of 50, filter[color] (not localized), de-CH, among ${bulk.count} elements, no cache`, filtered],
      [`Public list of 50, filter[label] (localized, falls back de-CH → de → en), among ${bulk.count}`, byLocalized],
      [`GET /{site}/pages/tree, ${pageCount} pages, kept between changes`, treeTimes],
      [`GET /{site}/pages/tree, ${pageCount} pages, no cache (every request computed)`, treeCold],
      [
        `PUT /{site}/pages/{id}/move of a subtree of ${tree.size} pages, 10 moves`,
        `p50 ${median(moves).toFixed(1)} ms, max ${Math.max(...moves).toFixed(1)} ms`,
      ],
    ];
  } finally {
    await Promise.all([stopBaseline(hello), stopBaseline(withPg), uncached.stop()]);
    await db.end();
  }
}

/**
 * A public site (locales en, de, de-CH) with a page of ten published blocks,
 * each translated into German; answers the site and the page's public path in
 * de-CH (served from German, falling back to English per field).
 */
export async function publicPage(apiUrl: string, token: string, name: string) {
  const site = await benchSite(apiUrl, token, name);
  await api(`${apiUrl}/sites/${site.slug}`, token, 'PATCH', {
    visibility: 'public',
    locales: ['en', 'de', 'de-CH'],
    default_locale: 'en',
  });
  await api(`${apiUrl}/${site.slug}/contenttypes/`, token, 'POST', {
    name: 'Block',
    api_id: 'block',
    fields: [
      { id: 'heading', label: 'Heading', type: 'text', localized: true },
      { id: 'body', label: 'Body', type: 'long_text', localized: true },
      { id: 'order', label: 'Order', type: 'integer' },
    ],
  });
  const blocks: string[] = [];
  for (let i = 0; i < 10; i++) {
    const block = await api<{ id: string }>(`${apiUrl}/${site.slug}/elements/`, token, 'POST', {
      type: 'block',
      name: `Block ${i}`,
      status: 'published',
      data: { heading: `Heading ${i}`, body: 'Some text. '.repeat(20), order: i },
    });
    await api(`${apiUrl}/${site.slug}/elements/`, token, 'POST', {
      master_id: block.id,
      locale: 'de',
      name: `Block ${i} (de)`,
      status: 'published',
      data: { heading: `Überschrift ${i}` },
    });
    blocks.push(block.id);
  }
  const page = await api<{ id: string }>(`${apiUrl}/${site.slug}/pages/`, token, 'POST', {
    slug: 'home',
    title: 'Home',
    status: 'published',
  });
  await api(`${apiUrl}/${site.slug}/pages/${page.id}/elements/batch-update`, token, 'POST', {
    elements: blocks.map((id) => ({ element_id: id, area: 'main' })),
  });
  return { site, pagePath: `/public/${site.slug}/pages/${page.id}?locale=de-CH` };
}

/**
 * 100,000 published products: colour (not localized) one of 50, label
 * localized with a German translation for a third of them, the rest served
 * from English. Made through the API's type, the rows in SQL.
 */
async function bulkElements(
  db: Awaited<ReturnType<typeof createPool>>,
  apiUrl: string,
  token: string,
  slug: string,
  siteId: string,
  tenantId: string,
) {
  const type = await api<{ id: string; version: number }>(`${apiUrl}/${slug}/contenttypes/`, token, 'POST', {
    name: 'Product',
    api_id: 'product',
    fields: [
      { id: 'label', label: 'Label', type: 'text', localized: true },
      { id: 'color', label: 'Color', type: 'text' },
      { id: 'price', label: 'Price', type: 'number' },
    ],
  });
  const count = 100_000;
  await db.query(sql.typeAlias('void')`
    insert into content_elements (tenant_id, site_id, type_id, schema_version, name, locale, data, status, published_at, created_at)
    select ${tenantId}, ${siteId}, ${type.id}, 1, 'Product ' || n, 'en',
      jsonb_build_object('label', 'Product ' || n, 'color', 'color-' || (n % 50), 'price', n % 1000),
      'published', now(), now() - make_interval(secs => ${count} - n)
    from generate_series(0, ${count - 1}) as n`);
  await db.query(sql.typeAlias('void')`
    insert into content_elements (tenant_id, site_id, type_id, schema_version, name, locale, master_id, data, status, published_at)
    select ${tenantId}, ${siteId}, ${type.id}, 1, e.name || ' (de)', 'de', e.id,
      jsonb_build_object('label', 'Produkt ' || substr(e.name, 9)), 'published', now()
    from content_elements e where e.type_id = ${type.id} and e.master_id is null and substr(e.name, 9)::int % 3 = 0`);
  // As autovacuum would soon: the GIN index's pending list merged, statistics taken.
  await db.query(sql.typeAlias('void')`vacuum analyze content_elements`);
  return { count };
}

/**
 * 5,000 pages: 10 sections of 10 subsections of 44 pages, and beside
 * them a subtree of 500 pages (a page with 20 children of 24 each) that the
 * bench moves under the first section and back.
 */
async function bulkPages(db: Awaited<ReturnType<typeof createPool>>, siteId: string, tenantId: string) {
  const insertLevel = (parents: ReturnType<typeof sql.fragment>, perParent: number, prefix: string) =>
    db.query(sql.typeAlias('void')`
      insert into pages (tenant_id, site_id, parent_id, position, slug, path, title, locale, status, published_at)
      select ${tenantId}, ${siteId}, parent.id, n, ${prefix} || n, coalesce(parent.path, '') || '/' || ${prefix} || n,
        'Page ' || n, 'en', 'published', now()
      from (${parents}) as parent, generate_series(0, ${perParent - 1}) as n`);
  const top = sql.fragment`select null::uuid as id, null::text as path`;
  const level = (depth: number, slugPrefix: string) =>
    sql.fragment`select p.id, p.path from pages p where p.site_id = ${siteId} and p.slug like ${`${slugPrefix}%`}
      and array_length(string_to_array(p.path, '/'), 1) = ${depth + 1}`;
  // The home page of the page figure sits at position 0 of the top level: sections start after it.
  await db.query(
    sql.typeAlias('void')`update pages set position = position + 11 where site_id = ${siteId} and parent_id is null`,
  );
  await insertLevel(top, 10, 'section-');
  await insertLevel(level(1, 'section-'), 10, 'sub-');
  await insertLevel(level(2, 'sub-'), 44, 'leaf-');
  await db.query(sql.typeAlias('void')`
    insert into pages (tenant_id, site_id, parent_id, position, slug, path, title, locale, status, published_at)
    values (${tenantId}, ${siteId}, null, 10, 'big', '/big', 'Big', 'en', 'published', now())`);
  const big = await db.oneFirst(sql.type(idRow)`select id from pages where site_id = ${siteId} and path = '/big'`);
  await insertLevel(sql.fragment`select id, path from pages where id = ${big}`, 20, 'branch-');
  await insertLevel(level(2, 'branch-'), 24, 'twig-');
  const target = await db.oneFirst(
    sql.type(idRow)`select id from pages where site_id = ${siteId} and path = '/section-0'`,
  );
  const size = await db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from pages where site_id = ${siteId} and (path = '/big' or path like '/big/%')`);
  await db.query(sql.typeAlias('void')`analyze pages`);
  return { big, target, size };
}
