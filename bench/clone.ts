// Tenant clone figures for npm run bench (issue 41 item 5): a tenant with
// 1,000 elements (100 people with a photo, 700 articles each naming an author,
// two gallery pictures and an earlier article, 200 French translations), 200
// pages in a tree (20 roots of 9 children each) holding 3 articles each, and
// 100 media items is written through HTTP, then cloned; the clone's job is
// timed, beside how long writing that content through the API took. The copy
// is then checked: every public page of the copy reads as the original's
// (ids mapped by clone_id), and no id in the copy's element data points
// outside the copy.
import { z } from 'zod';
import { createPool, sql } from '../db/pool.ts';
import { api, benchSite } from './http.ts';

type Row = [string, string];

const idRow = z.object({ id: z.uuid() });

/** Runs `work` over `items`, `width` at a time, in order of start. */
async function inParallel<T, R>(items: T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

export async function cloneFigures(url: string, token: string, databaseUrl: string): Promise<Row[]> {
  const db = await createPool(databaseUrl, { maxPoolSize: 2 });
  try {
    const site = await benchSite(url, token, 'Clone bench');
    await api(`${url}/sites/${site.slug}`, token, 'PATCH', { visibility: 'public', locales: ['en', 'fr'] });
    const siteId = await db.oneFirst(sql.type(idRow)`select id from sites where slug = ${site.slug}`);
    const tenantId = await db.oneFirst(sql.type(z.object({ tenant_id: z.uuid() }))`
      select tenant_id from sites where id = ${siteId}`);
    const at = (path: string) => `${url}/${site.slug}${path}`;

    const writing = performance.now();
    // Media rows in SQL (an upload's processing is the media bench's): the clone shares their keys.
    const media = await db.anyFirst(sql.type(idRow)`
      insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status, title)
      select ${tenantId}, ${siteId}, 'image', 'image/png', ${`${tenantId}/${siteId}/`} || n || '.png', 'ready', 'Picture ' || n
      from generate_series(1, 100) n returning id`);
    await api(at('/contenttypes/'), token, 'POST', {
      name: 'Person',
      api_id: 'person',
      fields: [
        { id: 'name', label: 'Name', type: 'text', localized: true },
        { id: 'photo', label: 'Photo', type: 'media' },
      ],
    });
    await api(at('/contenttypes/'), token, 'POST', {
      name: 'Article',
      api_id: 'article',
      fields: [
        { id: 'title', label: 'Title', type: 'text', localized: true },
        { id: 'author', label: 'Author', type: 'reference', validations: { reference_types: ['person'] } },
        { id: 'gallery', label: 'Gallery', type: 'list', of: { type: 'media' } },
        { id: 'related', label: 'Related', type: 'list', of: { type: 'reference' } },
      ],
    });
    const element = (body: Record<string, unknown>) =>
      api<{ id: string }>(at('/elements/'), token, 'POST', { status: 'published', ...body }).then((made) => made.id);
    const people = await inParallel([...Array(100).keys()], 4, (i) =>
      element({ type: 'person', name: `Person ${i}`, data: { name: `Person ${i}`, photo: media[i] } }),
    );
    // In rounds of 100, each article naming one of the round before.
    const articles: string[] = [];
    for (let round = 0; round < 7; round++) {
      const earlier = articles.slice();
      articles.push(
        ...(await inParallel([...Array(100).keys()], 4, (i) => {
          const n = round * 100 + i;
          return element({
            type: 'article',
            name: `Article ${n}`,
            data: {
              title: `Article ${n}`,
              author: people[n % 100],
              gallery: [media[n % 100], media[(n * 7 + 3) % 100]],
              related: earlier.length ? [earlier[(n * 13) % earlier.length]] : [],
            },
          });
        })),
      );
    }
    await inParallel(articles.slice(0, 200), 4, (master, n) =>
      element({
        master_id: master,
        locale: 'fr',
        name: `Article ${n} (fr)`,
        data: { title: `Article ${n} en français` },
      }),
    );
    const page = (body: Record<string, unknown>) =>
      api<{ id: string }>(at('/pages/'), token, 'POST', { status: 'published', ...body }).then((made) => made.id);
    const roots = await inParallel([...Array(20).keys()], 4, (i) =>
      page({ slug: `section-${i}`, title: `Section ${i}` }),
    );
    const children = await inParallel([...Array(180).keys()], 4, (i) =>
      page({ slug: `page-${i}`, title: `Page ${i}`, parent_id: roots[i % 20] }),
    );
    const pages = [...roots, ...children];
    await inParallel(pages, 4, async (pageId, i) => {
      for (let slot = 0; slot < 3; slot++)
        await api(at(`/pages/${pageId}/elements`), token, 'POST', { element_id: articles[(i * 3 + slot) % 700] });
    });
    const wroteMs = performance.now() - writing;

    // The clone: answered at once, its content copied by the job.
    const began = performance.now();
    const copy = await api<{ id: string; copy_job_id: string; copy_job_url: string }>(
      `${url}/admin/tenants/${tenantId}/clone`,
      token,
      'POST',
      { name: `Clone bench copy ${Date.now()}` },
    );
    const answeredMs = performance.now() - began;
    let job: {
      status: string;
      output: (Record<string, number> & { stage_ms?: Record<string, number> }) | null;
      error: unknown;
    };
    for (;;) {
      job = await api(`${url}${copy.copy_job_url}`, token, 'GET');
      if (['succeeded', 'failed', 'canceled'].includes(job.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const doneMs = performance.now() - began;
    if (job.status !== 'succeeded') throw new Error(`the clone job ended ${job.status}: ${JSON.stringify(job.error)}`);
    const output = job.output!;

    // The copy read as the original: its ids mapped back by clone_id.
    const copySlug = await db.oneFirst(sql.type(z.object({ slug: z.string() }))`
      select slug from sites where tenant_id = ${copy.id}`);
    const pairs = await db.any(sql.type(z.object({ old: z.string(), new: z.string() }))`
      select id::text as old, clone_id(${copy.id}, id)::text as new from (
        select id from content_elements where site_id = ${siteId} union all select id from pages where site_id = ${siteId}
        union all select id from media_items where site_id = ${siteId} union all select id from content_types where site_id = ${siteId}) ids`);
    const back = new Map(pairs.map((pair) => [pair.new, pair.old]));
    const forth = new Map(pairs.map((pair) => [pair.old, pair.new]));
    let equal = 0;
    const differing: string[] = [];
    await inParallel(pages, 4, async (pageId) => {
      for (const locale of ['en', 'fr']) {
        const read = (slug: string, id: string) =>
          fetch(`${url}/public/${slug}/pages/${id}?depth=2&locale=${locale}`).then((res) => res.text());
        const [original, copied] = await Promise.all([read(site.slug, pageId), read(copySlug, forth.get(pageId)!)]);
        const mapped = copied.replace(uuidPattern, (id) => back.get(id) ?? id).replaceAll(copySlug, site.slug);
        if (mapped === original && original.includes('"elements":[{')) equal++;
        else differing.push(pageId);
      }
    });
    const outside = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from content_elements e,
        jsonb_path_query(e.data, 'strict $.** ? (@.type() == "string")') s
      where e.tenant_id = ${copy.id} and s #>> '{}' ~ '^[0-9a-f-]{36}$'
        and not exists (select 1 from content_elements x where x.id = (s #>> '{}')::uuid and x.tenant_id = ${copy.id})
        and not exists (select 1 from media_items x where x.id = (s #>> '{}')::uuid and x.tenant_id = ${copy.id})`);
    const kinds = ['content_types', 'media_folders', 'media_items', 'elements', 'pages', 'page_elements', 'posts'];
    const rowsCopied = kinds.reduce((sum, kind) => sum + (output[kind] ?? 0), 0);
    const stages = Object.entries(output.stage_ms ?? {})
      .map(([stage, ms]) => `${stage} ${ms}`)
      .join(', ');

    return [
      [
        'Tenant clone: content written through HTTP first',
        `${output.elements} elements (incl. 200 translations), ${output.pages} pages, ${output.page_elements} slots, ` +
          `${output.media_items} media items: ${(wroteMs / 1000).toFixed(1)} s, 4 requests at a time`,
      ],
      ['POST /admin/tenants/{id}/clone → 201 (tenant, sites, members; job queued)', `${answeredMs.toFixed(0)} ms`],
      [
        'Tenant clone job, POST → job succeeded (polled every 20 ms)',
        `${(doneMs / 1000).toFixed(2)} s (the job's own time ${output.took_ms} ms, ${rowsCopied} rows, ` +
          `${Math.round(rowsCopied / (output.took_ms! / 1000))} rows/s); ${((doneMs / wroteMs) * 100).toFixed(1)}% of the time the content took to write`,
      ],
      ['Tenant clone job, time per stage (ms)', stages],
      [
        'Tenant clone: copy’s public pages equal to the original’s (en and fr, depth 2, ids mapped)',
        `${equal} of ${pages.length * 2}${differing.length ? `; differing: ${differing.slice(0, 3).join(', ')}` : ''}; ` +
          `ids in the copy’s element data pointing outside the copy: ${outside}`,
      ],
    ];
  } finally {
    await db.end();
  }
}
