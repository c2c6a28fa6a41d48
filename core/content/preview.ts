// Reading a site as it would be if its drafts were published, for preview
// tokens (./preview-tokens.ts). The public reads (./public.ts,
// ./public-pages.ts, ../posts/public-posts.ts and the public_page function)
// run unchanged, in a transaction where temporary views of the same names
// stand in front of the site's tables: content_elements and pages with each
// draft laid over its live row and every draft shown as published, posts
// with drafts and scheduled ones shown, and public_elements worked out from
// those rows as refresh_public_elements (db/migrations/0021) works it out
// from the live ones. So a preview has the same fallback, depth and shape as
// what it previews, and no second copy of the reads to drift apart. The
// transaction is rolled back: the views never outlive the request, and
// nothing is written.
//
// Why this is safe with cached plans: `search_path` is set to put pg_temp
// first for the transaction, and PostgreSQL plans again any cached statement
// (prepared, or inside a function) whose search_path differs from the one it
// was planned under — before the views exist, and again after they are gone.
//
// The cost: public_elements is worked out for the whole site on each read
// (every master and its published translations), where the live one is kept
// up to date by triggers: fine for editors previewing, not for serving.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

/**
 * Columns whose preview differs from the live row, by table; every other
 * column is the row's own. Only the site's rows: the site is a setting of the
 * transaction, since a view's definition cannot take a parameter.
 */
const shownSite = sql.fragment`site_id = current_setting('app.preview_site')::uuid`;
const shownElementStatus = sql.fragment`case when status in ('draft', 'published') then 'published' else status end`;
const shownElementPublishedAt = sql.fragment`case when status in ('draft', 'published') then coalesce(published_at, updated_at) end`;
const shownUpdatedAt = sql.fragment`greatest(updated_at, draft_updated_at)`;
const shown: Record<string, Record<string, ReturnType<typeof sql.fragment>>> = {
  content_elements: {
    name: sql.fragment`coalesce(draft->>'name', name)`,
    data: sql.fragment`coalesce(draft->'data', data)`,
    schema_version: sql.fragment`coalesce((draft->>'schema_version')::integer, schema_version)`,
    status: shownElementStatus,
    published_at: shownElementPublishedAt,
    updated_at: shownUpdatedAt,
  },
  pages: {
    title: sql.fragment`coalesce(draft->>'title', title)`,
    seo: sql.fragment`coalesce(draft->'seo', seo)`,
    template: sql.fragment`case when draft ? 'template' then draft->>'template' else template end`,
    status: shownElementStatus,
    published_at: shownElementPublishedAt,
    updated_at: shownUpdatedAt,
  },
  posts: {
    status: sql.fragment`case when status in ('draft', 'scheduled', 'published') then 'published' else status end`,
    published_at: sql.fragment`case when status in ('draft', 'scheduled', 'published')
      then coalesce(published_at, scheduled_for, updated_at) end`,
  },
};

/** public_elements as refresh_public_elements makes each row, over the views of elements above. */
const publicElementsView = sql.fragment`
  create temporary view public_elements as
  select m.id as master_id, m.status = 'published' as published, m.type_id, t.links, m.locale, m.data,
    jsonb_object_agg(e.locale, filled_fields(e.data) order by e.master_id nulls first, e.id) as localized,
    '{"id":"' || m.id || '","type":' || to_json(t.api_id) || ',"name":' || to_json(m.name) || ',"served_locale":' as head,
    ',"published_at":' || coalesce(to_json(api_time(m.published_at))::text, 'null')
      || ',"updated_at":' || to_json(api_time(m.updated_at)) || '}' as tail,
    'element:' || m.id || ' type:' || m.type_id as tags
  from pg_temp.content_elements m
  join public.content_types t on t.id = m.type_id
  join pg_temp.content_elements e on e.id = m.id or (e.master_id = m.id and e.status = 'published')
  where m.master_id is null
  group by m.id, m.status, m.type_id, m.locale, m.data, m.name, m.published_at, m.updated_at, t.id, t.links, t.api_id`;

const columnRow = z.object({ table: z.string(), column: z.string() });

/** Each table's columns in order, read once per process (a migration that adds one restarts the service). */
let tableColumns: Promise<Map<string, string[]>> | undefined;

function columnsOf(db: CommonQueryMethods): Promise<Map<string, string[]>> {
  tableColumns ??= db
    .any(
      sql.type(columnRow)`
      select c.relname as table, a.attname as column from pg_attribute a
      join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      where c.relname in ('content_elements', 'pages', 'posts') and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`,
    )
    .then((rows) => {
      const byTable = new Map<string, string[]>();
      for (const { table, column } of rows) byTable.set(table, [...(byTable.get(table) ?? []), column]);
      return byTable;
    })
    .catch((error: unknown) => {
      tableColumns = undefined;
      throw error;
    });
  return tableColumns;
}

/** Thrown to roll the preview's transaction back once its answer is in hand. */
class Answered<T> extends Error {
  readonly answer: T;
  constructor(answer: T) {
    super('preview answered');
    this.answer = answer;
  }
}

/**
 * `read` run against the site as its drafts would publish it (see above);
 * `db` must be the primary (temporary views cannot be made on a replica).
 */
export async function withDrafts<T>(
  db: CommonQueryMethods,
  siteId: string,
  read: (db: CommonQueryMethods) => Promise<T>,
): Promise<T> {
  const columns = await columnsOf(db);
  try {
    await db.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`
        select from (values (set_config('search_path', 'pg_temp, public', true),
                             set_config('app.preview_site', ${siteId}, true))) settings`);
      for (const [table, overrides] of Object.entries(shown)) {
        const list = (columns.get(table) ?? []).map((column) => {
          const override = overrides[column];
          return override ? sql.fragment`${override} as ${sql.identifier([column])}` : sql.identifier([column]);
        });
        await tx.query(sql.typeAlias('void')`
          create temporary view ${sql.identifier([table])} as
          select ${sql.join(list, sql.fragment`, `)} from ${sql.identifier(['public', table])} where ${shownSite}`);
      }
      await tx.query(sql.typeAlias('void')`${publicElementsView}`);
      throw new Answered(await read(tx));
    });
  } catch (thrown) {
    if (thrown instanceof Answered) return thrown.answer as T;
    throw thrown;
  }
  throw new Error('unreachable: the preview transaction always ends by throwing');
}
