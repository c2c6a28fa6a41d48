// Search figures for npm run bench: a public site of 100,000 published posts,
// searched and completed by 8 clients at once through HTTP. The posts are
// written in SQL (through the same triggers as the API's writes, so the
// index is the one writes keep) from a vocabulary of 20,000 words drawn
// Zipf-like (a word's frequency falls as 1/rank), as natural text is: the
// 100 most frequent are English stop words (in English they make about half
// of all text, and the english configuration leaves them out), the rest
// made-up words, the commonest of which are in about a quarter of the
// posts, most in a few. Queries draw their one or two words from those
// content words the same way, so common words are searched as often as the
// corpus holds them, drawn afresh for each request (so popular queries repeat
// and are answered from what the API keeps, rare ones are ranked afresh), and
// again each made new, the engine's own cost; completions type 1–6 letters of
// such a word, one in ten with two letters swapped.
import { z } from 'zod';
import { createPool, sql } from '../db/pool.ts';
import { closedLoop, describeLatencies } from './closed-loop.ts';
import { api, benchSite } from './http.ts';
import type { ApiLauncher } from './request-path.ts';

type Row = [string, string];

const posts = 100_000;
const batch = 10_000;
const vocabularySize = 20_000;
const loadClients = 8;
const seconds = 8;

// Word i of the vocabulary: syllables chosen by the digits of i, so every word is distinct and pronounceable.
export const vocabulary = sql.fragment`
  select i, (array['ka','lo','mi','ne','ru','sa','to','vi','ber','dan','fel','gor','han','jin','kel','mor','nat','pel','ros','tam'])[1 + i % 20]
         || (array['ra','le','mo','ni','su','ta','po','ve','ko','di'])[1 + i / 20 % 10]
         || (array['n','s','r','t','l','m','x','d','k','p'])[1 + i / 200 % 10]
         || (array['','a','o','e','i','u','y','an','er','on'])[1 + i / 2000 % 10] as w
  from generate_series(0, ${vocabularySize - 1}::int) i`;

/** A word's index with probability falling as 1/rank: log-uniform over the vocabulary. */
export const zipfIndex = () =>
  Math.min(vocabularySize - 1, Math.floor(Math.exp(Math.random() * Math.log(vocabularySize))) - 1);

async function writePosts(db: Awaited<ReturnType<typeof createPool>>, siteId: string, tenantId: string) {
  for (let from = 0; from < posts; from += batch) {
    // 6 title words and 244 body words a post, newest first by a minute each.
    await db.query(sql.typeAlias('void')`
      with vocab as materialized (${vocabulary})
      insert into posts (tenant_id, site_id, title, slug, body, locale, status, published_at)
      select ${tenantId}, ${siteId}, string_agg(w, ' ' order by k) filter (where k <= 6), 'post-' || g,
             string_agg(w, ' ' order by k) filter (where k > 6), 'en', 'published', now() - make_interval(mins => g)
      from (
        select g, k, v.w from generate_series(${from}::int, ${from + batch - 1}::int) g, generate_series(1, 250) k,
          lateral (select least(${vocabularySize - 1}, floor(exp(random() * ln(${vocabularySize}::float8)))::int - 1 + (g * 0 + k * 0)) as i) r
          join vocab v on v.i = r.i
      ) words group by g`);
  }
  // As autovacuum soon would: GIN pending lists merged, statistics (the estimates searches rely on) taken.
  await db.query(sql.typeAlias('void')`vacuum analyze search_documents`);
  await db.query(sql.typeAlias('void')`vacuum analyze search_terms`);
}

const vocabularyWord = 'karan';
const heldSchema = z.object({ held_in_memory: z.object({ documents: z.number(), bytes: z.number() }).nullable() });

/** What the API holds of the site in memory once it holds it (a minute at most), or null. */
async function heldInMemory(apiUrl: string, token: string, slug: string) {
  for (let waited = 0; waited < 60_000; waited += 250) {
    const res = await fetch(`${apiUrl}/search/sites/${slug}/stats`, { headers: { authorization: `Bearer ${token}` } });
    const { held_in_memory: held } = heldSchema.parse(await res.json());
    if (held) return held;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return null;
}

/** Each client asks the next URL of the list (round the list again at its end). */
const concurrently = (urls: string[], seconds: number, clients = loadClients) =>
  closedLoop(
    async (n) => {
      const res = await fetch(urls[n % urls.length]!);
      await res.arrayBuffer();
      return res.ok;
    },
    seconds,
    clients,
  );

const describe = describeLatencies;

export async function searchFigures(
  apiUrl: string,
  token: string,
  databaseUrl: string,
  launchApi: ApiLauncher,
): Promise<Row[]> {
  const db = await createPool(databaseUrl, { maxPoolSize: 2 });
  try {
    // A kept data directory (BENCH_DATA_DIR) holds the posts of an earlier run: searched again, not written again.
    const kept = await db.maybeOne(sql.type(z.object({ slug: z.string() }))`
      select s.slug from sites s
      where s.name = 'Search bench' and s.visibility = 'public'
        and (select count(*) from search_documents d where d.site_id = s.id) = ${posts}
      order by s.created_at desc limit 1`);
    let writeMs: number | undefined;
    let site = kept;
    if (!site) {
      site = await benchSite(apiUrl, token, 'Search bench');
      await api(`${apiUrl}/sites/${site.slug}`, token, 'PATCH', { visibility: 'public' });
      const ids = await db.one(sql.type(z.object({ id: z.uuid(), tenant_id: z.uuid() }))`
        select id, tenant_id from sites where slug = ${site.slug}`);
      const writing = performance.now();
      await writePosts(db, ids.id, ids.tenant_id);
      writeMs = performance.now() - writing;
    }
    // The first search asks the API to hold the site in memory (core/search/memory); measured once it does.
    // Meanwhile one client asks the cheapest endpoint over and over: what the load costs the requests it shares the process with.
    const holding = performance.now();
    await fetch(`${apiUrl}/search/sites/${site.slug}?q=${vocabularyWord}`);
    let loading = true;
    const duringLoad: number[] = [];
    const sampling = (async () => {
      while (loading) {
        const asked = performance.now();
        await (await fetch(`${apiUrl}/health/live`)).arrayBuffer();
        duringLoad.push(performance.now() - asked);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const heldIn = await heldInMemory(apiUrl, token, site.slug);
    const heldMs = performance.now() - holding;
    loading = false;
    await sampling;
    duringLoad.sort((a, b) => a - b);
    const quantile = (q: number) => duringLoad[Math.min(duringLoad.length - 1, Math.floor(duringLoad.length * q))]!;
    const words = await db.anyFirst(sql.type(z.object({ w: z.string() }))`select w from (${vocabulary}) v order by i`);

    // A query drawn for each request, so a query repeats as often as its words are common: the site's
    // popular queries are answered from what the API kept, the rare ones ranked afresh.
    const queries = Array.from({ length: 20_000 }, (_, n) =>
      Array.from({ length: 1 + (n % 2) }, () => words[zipfIndex()]!).join(' '),
    );
    const searchUrls = queries.map((q) => `${apiUrl}/search/sites/${site.slug}?q=${encodeURIComponent(q)}`);
    // The same queries each asked for the first time (a parameter the search ignores makes each URL new): the engine's own cost.
    const freshUrls = searchUrls.map((url, n) => `${url}&fresh=${n}`);
    const prefixes = queries.map((q, n) => {
      const word = q.split(' ')[0]!;
      const typed = word.slice(0, 1 + (n % 6));
      // One in ten swaps two letters, as a fast typist does.
      return n % 10 === 0 && typed.length >= 3 ? typed[1]! + typed[0]! + typed.slice(2) : typed;
    });
    const suggestUrls = prefixes.map((q) => `${apiUrl}/search/sites/${site.slug}/suggest?q=${encodeURIComponent(q)}`);

    // How many of the queries were counted exactly (the rest estimated, bounded work).
    let exact = 0;
    for (const url of freshUrls.slice(0, 100)) {
      const body = (await (await fetch(url)).json()) as { exact: boolean };
      if (body.exact) exact++;
    }
    // The baseline, in the same run: an API that holds nothing in memory searches the same queries in PostgreSQL.
    const inPostgres = await launchApi(databaseUrl, { SEARCH_MEMORY_MB: '0' });
    const there = (url: string) => url.replace(apiUrl, inPostgres.url);
    let baseline: Awaited<ReturnType<typeof concurrently>>;
    try {
      await concurrently(freshUrls.slice(15_000).map(there), 2);
      baseline = await concurrently(freshUrls.slice(100, 10_000).map(there), seconds);
    } finally {
      await inPostgres.stop();
    }
    await concurrently(freshUrls.slice(15_000), 2);
    const fresh = await concurrently(freshUrls.slice(100, 10_000), seconds);
    // One client: a search's own latency, without queueing behind seven others on two cores.
    const alone = await concurrently(freshUrls.slice(10_000, 15_000), seconds, 1);
    await concurrently(searchUrls.slice(10_000), 2);
    const searched = await concurrently(searchUrls, seconds);
    await concurrently(suggestUrls, 2);
    const suggested = await concurrently(suggestUrls, seconds);
    return [
      [
        `search: 100,000 published posts written through the index triggers (SQL, ${posts / batch} statements)`,
        writeMs === undefined
          ? 'written by an earlier run (BENCH_DATA_DIR)'
          : `${(writeMs / 1000).toFixed(1)} s (${((writeMs / posts) * 1000).toFixed(0)} µs a post)`,
      ],
      [
        'The site held in memory by the API (the load, from the first search until its stats say so)',
        heldIn
          ? `${(heldMs / 1000).toFixed(1)} s; ${heldIn.documents.toLocaleString('en')} documents in ${(heldIn.bytes / 1048576).toFixed(0)} MB`
          : 'not held: searched in PostgreSQL',
      ],
      [
        'GET /health/live, one client, while the site is loaded into memory',
        `p50 ${quantile(0.5).toFixed(1)} ms, p99 ${quantile(0.99).toFixed(1)} ms, slowest ${quantile(1).toFixed(1)} ms (${duringLoad.length} requests)`,
      ],
      [
        `GET /search/sites/{site}?q= (1–2 Zipf words drawn for each request), ${loadClients} clients, ${seconds} s after 2 s unrecorded (target p95 ≤ 25 ms)`,
        describe(searched),
      ],
      [
        `The same queries, each asked for the first time, ${loadClients} clients`,
        `${describe(fresh)}; ${exact}% counted exactly`,
      ],
      [
        `The same, ${loadClients} clients, searched in PostgreSQL (an API holding nothing: SEARCH_MEMORY_MB=0, same run)`,
        describe(baseline),
      ],
      [`The same, 1 client`, describe(alone)],
      [
        `GET /search/sites/{site}/suggest?q= (1–6 letters, 1 in 10 misspelt), ${loadClients} clients (target p95 ≤ 10 ms)`,
        describe(suggested),
      ],
    ];
  } finally {
    await db.end();
  }
}
