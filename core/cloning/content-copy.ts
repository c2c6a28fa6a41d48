// The content half of a tenant’s clone (core/tenancy/tenants.ts makes the
// tenant, its sites and who may use them at once; this runs after, as the
// tenant_clone job): content types, media folders and items (their files
// shared by reference, core/media/shared-files.ts), elements with their
// translations and links, pages with their tree and slots, posts with their
// versions. Site by site, table by table, in batches of insert ... select:
// nothing is loaded into memory, so a tenant of any size is copied in
// statements of a bounded size.
//
// A copied row's id is clone_id(salt, its id) (migration 0060, the salt being
// the copy's tenant id): a reference is remapped by the same function wherever
// it sits — a page's parent, a translation's master, a slot's element, a
// post's featured media, an id inside an element's data — with no mapping
// table, and a batch run again (a retried job) inserts nothing twice.
//
// Not copied: content_versions (the history of elements and pages: a copy
// starts its own), translation states (the translations' triggers record
// them afresh), search documents (their triggers index the copies). Scheduled
// publishes (publish_at, scheduled_for) are copied and planned again for the
// copies, each a queue job keyed by its copy, as a schedule set by hand is.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { planPublication } from '../content/publish-schedule.ts';
import { schedulePublication } from '../posts/schedule.ts';
import { timestamp } from '../timestamp.ts';

/** Rows per statement. */
const batchSize = 500;

export type SitePair = { from: string; to: string };

export type CopyCounts = {
  content_types: number;
  media_folders: number;
  media_items: number;
  elements: number;
  pages: number;
  page_elements: number;
  posts: number;
};

type Fragment = ReturnType<typeof sql.fragment>;
type Progress = (done: number, stage: string) => Promise<void>;

/**
 * Where a batch starts: after the last row the one before read, by
 * (created_at, id), the order of each table's (site_id, created_at, id)
 * index, so every batch is a range of that index, however big the site.
 */
const start = '-infinity|00000000-0000-0000-0000-000000000000';
const after = (cursor: string) =>
  sql.fragment`(created_at, id) > (split_part(${cursor}, '|', 1)::timestamptz, split_part(${cursor}, '|', 2)::uuid)`;
const inOrder = sql.fragment`order by created_at, id limit ${batchSize}`;
const uuidShape = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** What one batch did: how many rows it copied and the last key it read (null: nothing left). */
const batchRow = z.object({ copied: z.number(), last: z.string().nullable() });

/** How many rows each stage will copy, for the job's progress. */
export async function countContent(db: CommonQueryMethods, sites: SitePair[]): Promise<CopyCounts> {
  const from = sql.array(
    sites.map((pair) => pair.from),
    'uuid',
  );
  return db.one(sql.type(
    z.object({
      content_types: z.number(),
      media_folders: z.number(),
      media_items: z.number(),
      elements: z.number(),
      pages: z.number(),
      page_elements: z.number(),
      posts: z.number(),
    }),
  )`
    select (select count(*)::int from content_types where site_id = any(${from})) as content_types,
           (select count(*)::int from media_folders where site_id = any(${from})) as media_folders,
           (select count(*)::int from media_items where site_id = any(${from})) as media_items,
           (select count(*)::int from content_elements where site_id = any(${from})) as elements,
           (select count(*)::int from pages where site_id = any(${from})) as pages,
           (select count(*)::int from page_elements where site_id = any(${from})) as page_elements,
           (select count(*)::int from posts where site_id = any(${from})) as posts`);
}

/**
 * The ids of the source site's elements and media items that `value` (jsonb)
 * holds as strings, anywhere in it, each with its copy's id: what
 * jsonb_replace_strings swaps. A string that only looks like an id is left.
 */
function idsIn(value: Fragment, salt: string, from: string): Fragment {
  return sql.fragment`coalesce((
    select jsonb_object_agg(s.v, clone_id(${salt}, u.id))
    from (select distinct j #>> '{}' as v from jsonb_path_query(${value}, 'strict $.** ? (@.type() == "string")') as j) s
      cross join lateral (select case when s.v ~ ${uuidShape} then s.v::uuid end as id) as u
    where exists (select 1 from content_elements x where x.id = u.id and x.site_id = ${from})
       or exists (select 1 from media_items x where x.id = u.id and x.site_id = ${from})), '{}'::jsonb)`;
}

/** `value` with the source site's element and media ids replaced by their copies'. */
const remapped = (value: Fragment, salt: string, from: string) =>
  sql.fragment`jsonb_replace_strings(${value}, ${idsIn(value, salt, from)})`;

/** Runs `batch` from the start key until it reads nothing, reporting each batch's rows. */
async function batches(
  db: CommonQueryMethods,
  signal: AbortSignal,
  progress: Progress,
  stage: string,
  batch: (cursor: string) => Fragment,
): Promise<number> {
  let cursor = start;
  let total = 0;
  for (;;) {
    signal.throwIfAborted();
    const row = await db.one(sql.type(batchRow)`${batch(cursor)}`);
    total += row.copied;
    if (row.copied > 0) await progress(row.copied, stage);
    if (row.last === null) return total;
    cursor = row.last;
  }
}

/** The statement's tail: how many rows the insert made, and the last key the batch read. */
const tail = sql.fragment`
  select (select count(*)::int from copied) as copied,
         (select created_at::text || '|' || id from batch order by created_at desc, id desc limit 1) as last`;

async function copyTypes(db: CommonQueryMethods, salt: string, { from, to }: SitePair): Promise<number> {
  // Few per site, and their fields name other types by api_id, which the copy keeps: one statement.
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    with copied as (
      insert into content_types (id, tenant_id, site_id, name, api_id, description, fields, version, created_by, created_at, updated_at)
      select clone_id(${salt}, t.id), ${salt}, ${to}, t.name, t.api_id, t.description, t.fields, t.version, t.created_by,
             t.created_at, t.updated_at
      from content_types t where t.site_id = ${from}
      on conflict (id) do nothing returning 1
    ) select count(*)::int as n from copied`);
}

async function copyFolders(db: CommonQueryMethods, salt: string, { from, to }: SitePair): Promise<number> {
  // One statement, so a folder's parent exists by the time the foreign key is checked (at its end).
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    with copied as (
      insert into media_folders (id, tenant_id, site_id, parent_id, name, created_by, created_at, updated_at)
      select clone_id(${salt}, f.id), ${salt}, ${to}, clone_id(${salt}, f.parent_id), f.name, f.created_by, f.created_at, f.updated_at
      from media_folders f where f.site_id = ${from}
      on conflict (id) do nothing returning 1
    ) select count(*)::int as n from copied`);
}

/** Media items with their translations and earlier versions; the stored files are the same keys. */
const mediaBatch =
  (salt: string, { from, to }: SitePair) =>
  (cursor: string) => sql.fragment`
  with batch as (
    select * from media_items where site_id = ${from} and ${after(cursor)} ${inOrder}
  ), copied as (
    insert into media_items (id, tenant_id, site_id, folder_id, kind, mime_type, size_bytes, width, height, duration_seconds,
                             status, storage_key, file_name, alt, title, caption, tags, job_id, created_by, created_at, updated_at,
                             focal_point, dominant_color, variants, processing_error, version, version_created_by,
                             version_created_at, version_job_id, blurhash, exif)
    select clone_id(${salt}, m.id), ${salt}, ${to}, clone_id(${salt}, m.folder_id), m.kind, m.mime_type, m.size_bytes, m.width,
           m.height, m.duration_seconds, m.status, m.storage_key, m.file_name, m.alt, m.title, m.caption, m.tags, null,
           m.created_by, m.created_at, m.updated_at, m.focal_point, m.dominant_color, m.variants, m.processing_error, m.version,
           m.version_created_by, m.version_created_at, null, m.blurhash, m.exif
    from batch m
    on conflict (id) do nothing returning id
  ), translations as (
    insert into media_translations (id, tenant_id, site_id, media_id, locale, alt, title, caption, created_by, updated_by,
                                    created_at, updated_at)
    select clone_id(${salt}, t.id), ${salt}, ${to}, clone_id(${salt}, t.media_id), t.locale, t.alt, t.title, t.caption,
           t.created_by, t.updated_by, t.created_at, t.updated_at
    from media_translations t join copied c on c.id = clone_id(${salt}, t.media_id)
    on conflict (id) do nothing
  ), versions as (
    insert into media_versions (id, tenant_id, media_id, version, storage_key, mime_type, size_bytes, width, height, created_by,
                                created_at, replaced_at)
    select clone_id(${salt}, v.id), ${salt}, clone_id(${salt}, v.media_id), v.version, v.storage_key, v.mime_type, v.size_bytes,
           v.width, v.height, v.created_by, v.created_at, v.replaced_at
    from media_versions v join copied c on c.id = clone_id(${salt}, v.media_id)
    on conflict (id) do nothing
  ) ${tail}`;

/** Elements: masters first (`translations` false), then translations, whose master is copied by then. */
const elementBatch =
  (salt: string, { from, to }: SitePair, translations: boolean) =>
  (cursor: string) => sql.fragment`
  with batch as (
    select * from content_elements
    where site_id = ${from} and (master_id is not null) = ${translations} and ${after(cursor)} ${inOrder}
  ), copied as (
    insert into content_elements (id, tenant_id, site_id, type_id, schema_version, name, locale, master_id, data, status,
                                  published_at, version, created_by, updated_by, created_at, updated_at, draft,
                                  draft_updated_at, draft_updated_by, publish_at)
    select clone_id(${salt}, e.id), ${salt}, ${to}, clone_id(${salt}, e.type_id), e.schema_version, e.name, e.locale,
           clone_id(${salt}, e.master_id), ${remapped(sql.fragment`e.data`, salt, from)}, e.status, e.published_at, e.version,
           e.created_by, e.updated_by, e.created_at, e.updated_at, ${remapped(sql.fragment`e.draft`, salt, from)},
           e.draft_updated_at, e.draft_updated_by, e.publish_at
    from batch e
    on conflict (id) do nothing returning 1
  ) ${tail}`;

/** What elements' data points at (core/content/links.ts), once every element and media item is there. */
const linkBatch =
  (salt: string, { from, to }: SitePair) =>
  (cursor: string) => sql.fragment`
  with batch as (
    select id, created_at from content_elements where site_id = ${from} and ${after(cursor)} ${inOrder}
  ), links as (
    insert into content_element_links (element_id, path, target_id, site_id)
    select clone_id(${salt}, l.element_id), l.path, clone_id(${salt}, l.target_id), ${to}
    from content_element_links l join batch b on b.id = l.element_id
    on conflict (element_id, path) do nothing
  ), media as (
    insert into content_element_media (element_id, path, media_id, site_id)
    select clone_id(${salt}, l.element_id), l.path, clone_id(${salt}, l.media_id), ${to}
    from content_element_media l join batch b on b.id = l.element_id
    on conflict (element_id, path) do nothing
  ), copied as (select 1 from batch where false)
  ${tail}`;

/**
 * Pages whose parent and master are copied already (roots and masters
 * first), so each row's foreign keys hold as it is inserted. One pass over
 * the site's pages copies those; the next pass their children, and so on: as
 * many passes as the tree is deep (copyPages).
 */
const pageBatch =
  (salt: string, { from, to }: SitePair) =>
  (cursor: string) => {
    const copiedAlready = (id: Fragment) =>
      sql.fragment`exists (select 1 from pages c where c.id = clone_id(${salt}, ${id}))`;
    return sql.fragment`
      with batch as (
        select * from pages p
        where p.site_id = ${from} and ${after(cursor)} and not ${copiedAlready(sql.fragment`p.id`)}
          and (p.parent_id is null or ${copiedAlready(sql.fragment`p.parent_id`)})
          and (p.master_id is null or ${copiedAlready(sql.fragment`p.master_id`)})
        ${inOrder}
      ), copied as (
        insert into pages (id, tenant_id, site_id, parent_id, position, slug, path, title, locale, master_id, status,
                           published_at, seo, template, version, created_by, updated_by, created_at, updated_at, draft,
                           draft_updated_at, draft_updated_by, publish_at)
        select clone_id(${salt}, p.id), ${salt}, ${to}, clone_id(${salt}, p.parent_id), p.position, p.slug, p.path, p.title,
               p.locale, clone_id(${salt}, p.master_id), p.status, p.published_at, ${remapped(sql.fragment`p.seo`, salt, from)},
               p.template, p.version, p.created_by, p.updated_by, p.created_at, p.updated_at,
               ${remapped(sql.fragment`p.draft`, salt, from)}, p.draft_updated_at, p.draft_updated_by, p.publish_at
        from batch p
        on conflict (id) do nothing returning 1
      ) ${tail}`;
  };

/** Slots, by page: the element each holds is the copy's (its master_id is set by its trigger). */
const slotBatch =
  (salt: string, { from, to }: SitePair) =>
  (cursor: string) => sql.fragment`
  with batch as (
    select id, created_at from pages where site_id = ${from} and ${after(cursor)} ${inOrder}
  ), copied as (
    insert into page_elements (page_id, element_id, site_id, area, position, settings, created_at)
    select clone_id(${salt}, s.page_id), clone_id(${salt}, s.element_id), ${to}, s.area, s.position,
           ${remapped(sql.fragment`s.settings`, salt, from)}, s.created_at
    from page_elements s join batch b on b.id = s.page_id
    on conflict (page_id, element_id) do nothing returning 1
  ) ${tail}`;

/** Posts: masters first, then translations; with their versions. Authors are users, shared. */
const postBatch =
  (salt: string, { from, to }: SitePair, translations: boolean) =>
  (cursor: string) => sql.fragment`
  with batch as (
    select * from posts
    where site_id = ${from} and (master_id is not null) = ${translations} and ${after(cursor)} ${inOrder}
  ), copied as (
    insert into posts (id, tenant_id, site_id, title, slug, excerpt, body, body_format, locale, master_id, status, published_at,
                       scheduled_for, author_id, tags, categories, featured_media_id, seo, source, version, created_by,
                       updated_by, created_at, updated_at)
    select clone_id(${salt}, p.id), ${salt}, ${to}, p.title, p.slug, p.excerpt, p.body, p.body_format, p.locale,
           clone_id(${salt}, p.master_id), p.status, p.published_at, p.scheduled_for, p.author_id, p.tags, p.categories,
           clone_id(${salt}, p.featured_media_id), ${remapped(sql.fragment`p.seo`, salt, from)}, p.source, p.version,
           p.created_by, p.updated_by, p.created_at, p.updated_at
    from batch p
    on conflict (id) do nothing returning id
  ), versions as (
    insert into post_versions (id, tenant_id, site_id, post_id, version, title, excerpt, body, body_format, source, reason,
                               job_id, created_at)
    select clone_id(${salt}, v.id), ${salt}, ${to}, clone_id(${salt}, v.post_id), v.version, v.title, v.excerpt, v.body,
           v.body_format, v.source, v.reason, null, v.created_at
    from post_versions v join copied c on c.id = clone_id(${salt}, v.post_id)
    on conflict (id) do nothing
  ) ${tail}`;

const planned = z.object({ kind: z.enum(['element', 'page', 'post']), id: z.uuid(), at: timestamp });

/** Queues the scheduled publishes of the copy's site, as setting each by hand would; answers how many. */
async function planSchedules(db: CommonQueryMethods, siteId: string): Promise<number> {
  const rows = await db.any(sql.type(planned)`
    select 'element' as kind, id, publish_at as at from content_elements where site_id = ${siteId} and publish_at is not null
    union all
    select 'page', id, publish_at from pages where site_id = ${siteId} and publish_at is not null
    union all
    select 'post', id, scheduled_for from posts where site_id = ${siteId} and status = 'scheduled' and scheduled_for is not null`);
  for (const row of rows) {
    if (row.kind === 'post') await schedulePublication(db, row.id, row.at);
    else await planPublication(db, row.kind, row.id, row.at);
  }
  return rows.length;
}

/** Milliseconds each stage took, summed over the sites: where a clone's time goes. */
export type StageTimes = Record<string, number>;

/**
 * Copies the content of each source site into its copy, reporting rows
 * copied per stage. `salt` is the copy's tenant id. Safe to run again: a
 * row already copied is skipped.
 */
export async function copyContent(
  db: CommonQueryMethods,
  salt: string,
  sites: SitePair[],
  signal: AbortSignal,
  progress: Progress,
): Promise<{ counts: CopyCounts; stageMs: StageTimes }> {
  const counts: CopyCounts = {
    content_types: 0,
    media_folders: 0,
    media_items: 0,
    elements: 0,
    pages: 0,
    page_elements: 0,
    posts: 0,
  };
  const stageMs: StageTimes = {};
  const timed = async (stage: string, work: () => Promise<number>) => {
    const began = performance.now();
    const rows = await work();
    stageMs[stage] = Math.round((stageMs[stage] ?? 0) + performance.now() - began);
    return rows;
  };
  const run = (stage: string, batch: (cursor: string) => Fragment) =>
    timed(stage, () => batches(db, signal, progress, stage, batch));
  const once = (stage: string, copy: () => Promise<number>) =>
    timed(stage, async () => {
      const rows = await copy();
      await progress(rows, stage);
      return rows;
    });
  for (const pair of sites) {
    signal.throwIfAborted();
    counts.content_types += await once('content types', () => copyTypes(db, salt, pair));
    counts.media_folders += await once('media folders', () => copyFolders(db, salt, pair));
    counts.media_items += await run('media items', mediaBatch(salt, pair));
    counts.elements += await run('elements', elementBatch(salt, pair, false));
    counts.elements += await run('element translations', elementBatch(salt, pair, true));
    await run('element links', linkBatch(salt, pair));
    // Pass after pass, each taking the pages whose parent and master are in already, until one copies none.
    counts.pages += await timed('pages', async () => {
      let copied = 0;
      for (;;) {
        const pass = await batches(db, signal, progress, 'pages', pageBatch(salt, pair));
        if (pass === 0) return copied;
        copied += pass;
      }
    });
    counts.page_elements += await run('page slots', slotBatch(salt, pair));
    counts.posts += await run('posts', postBatch(salt, pair, false));
    counts.posts += await run('post translations', postBatch(salt, pair, true));
    await once('schedules', () => planSchedules(db, pair.to));
  }
  return { counts, stageMs };
}
