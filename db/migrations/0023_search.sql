-- Site search: one stored, weighted tsvector per published post, page,
-- element and ready media item (title A, headings/excerpt/description B,
-- body C), in the text search configuration of the item's language. The
-- source tables' statement triggers keep it in the same transaction as every
-- write; reindex (core/search/reindex.ts) rebuilds a site's rows from the same
-- functions. Whether the site is public is checked when it is searched.
create extension if not exists pg_trgm;
-- Lets one GIN index hold the site beside the words, so a site's search does
-- not walk every tenant's matches.
create extension if not exists btree_gin;

-- The configuration for a BCP 47 locale: PostgreSQL's stemmer for the
-- language where it has one, `simple` (lower-case, no stemming) otherwise.
create function search_config(locale text) returns regconfig
language sql immutable parallel safe as $$
  select (case lower(split_part(replace(locale, '_', '-'), '-', 1))
    when 'ar' then 'arabic' when 'hy' then 'armenian' when 'eu' then 'basque' when 'ca' then 'catalan'
    when 'da' then 'danish' when 'nl' then 'dutch' when 'en' then 'english' when 'fi' then 'finnish'
    when 'fr' then 'french' when 'de' then 'german' when 'el' then 'greek' when 'hi' then 'hindi'
    when 'hu' then 'hungarian' when 'id' then 'indonesian' when 'ga' then 'irish' when 'it' then 'italian'
    when 'lt' then 'lithuanian' when 'ne' then 'nepali' when 'no' then 'norwegian' when 'nb' then 'norwegian'
    when 'nn' then 'norwegian' when 'pt' then 'portuguese' when 'ro' then 'romanian' when 'ru' then 'russian'
    when 'sr' then 'serbian' when 'es' then 'spanish' when 'sv' then 'swedish' when 'ta' then 'tamil'
    when 'tr' then 'turkish' when 'yi' then 'yiddish' else 'simple' end)::regconfig
$$;

-- Text of HTML (sanitised on the way in, so no scripts) or Markdown: tags and
-- markup characters become spaces, the entities sanitize-html writes are decoded.
create function search_plain(body text, format text) returns text
language sql immutable parallel safe as $$
  select btrim(regexp_replace(
    replace(replace(replace(replace(replace(replace(
      case when format = 'html' then regexp_replace(body, '</?[A-Za-z][^<>]*>', ' ', 'g')
           -- Markdown may hold HTML too; links and images keep their text, blockquote marks and emphasis go.
           else regexp_replace(regexp_replace(regexp_replace(regexp_replace(body, '</?[A-Za-z][^<>]*>', ' ', 'g'),
                  '!?\[([^\]]*)\]\([^)]*\)', '\1', 'g'), '(^|\n)[ \t]*>+', '\1', 'g'), '[#*_`~|]+', ' ', 'g') end,
      '&nbsp;', ' '), '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&#39;', ''''), '&amp;', '&'),
    '\s+', ' ', 'g'))
$$;

-- The headings of a body: `<h1>`–`<h6>` of HTML, `#` lines of Markdown.
create function search_headings(body text, format text) returns text
language sql immutable parallel safe as $$
  select coalesce(string_agg(search_plain(m[1], format), ' '), '')
  from regexp_matches(body, case when format = 'html' then '<h[1-6][^>]*>(.*?)</h[1-6]>' else '(?:^|\n)#{1,6}[ \t]+([^\n]+)' end, 'gi') m
$$;

-- The text of an element's data by its type's fields: text and long text as
-- written, rich text without markup, objects and lists followed (nested
-- definitions as core/content/fields.ts writes them). Other types (slugs,
-- URLs, enums, references) are not prose and are left out.
create function search_field_text(field jsonb, value jsonb) returns text
language plpgsql immutable parallel safe as $$
declare
  parts text[] := '{}';
  inner_field jsonb;
  item jsonb;
begin
  if value is null or value = 'null'::jsonb then return ''; end if;
  case field->>'type'
    when 'text', 'long_text' then
      if jsonb_typeof(value) = 'string' then return value #>> '{}'; end if;
    when 'rich_text' then
      if jsonb_typeof(value) = 'string' then return search_plain(value #>> '{}', 'html'); end if;
    when 'object' then
      if jsonb_typeof(value) = 'object' then
        for inner_field in select * from jsonb_array_elements(coalesce(field->'fields', '[]')) loop
          parts := parts || search_field_text(inner_field, value -> (inner_field->>'id'));
        end loop;
      end if;
    when 'list' then
      if jsonb_typeof(value) = 'array' and field ? 'of' then
        for item in select * from jsonb_array_elements(value) loop
          parts := parts || search_field_text(field->'of', item);
        end loop;
      end if;
    else
      return '';
  end case;
  return array_to_string(parts, ' ');
end $$;

create function search_element_text(fields jsonb, data jsonb) returns text
language sql immutable parallel safe as $$
  select coalesce(string_agg(search_field_text(f, data -> (f->>'id')), ' '), '')
  from jsonb_array_elements(fields) f
$$;

create table search_documents (
  kind text not null check (kind in ('post', 'page', 'element', 'media')),
  item_id uuid not null,
  site_id uuid not null references sites (id) on delete cascade,
  locale text not null,
  title text not null,
  -- Where a public client finds it: a post's slug, a page's path.
  path text,
  -- Plain text the snippets are cut from (B and C), capped like the vector.
  summary text not null,
  body text not null,
  published_at timestamptz,
  -- The title and summary alone (A and B), and everything (A, B and C).
  head tsvector not null,
  document tsvector not null,
  -- Distinct unstemmed words, for suggestions and typo correction (search_terms).
  words text[] not null,
  indexed_at timestamptz not null default now(),
  primary key (kind, item_id)
)
-- The texts and vectors go out of line (TOAST), so the heap row a match
-- visits is small: counting 10,000 matches reads a few hundred pages, not
-- one page per document.
with (toast_tuple_target = 128);
-- But the title and the head vector stay in the row (compressed if need be):
-- suggestions read titles, and a dense title word is tested row by row.
alter table search_documents alter column title set storage main, alter column path set storage main,
  alter column head set storage main;
create index search_documents_document_idx on search_documents using gin (site_id, document);
create index search_documents_head_idx on search_documents using gin (site_id, head);
create index search_documents_site_idx on search_documents (site_id, published_at desc);
-- Suggestions: titles by prefix, in byte order (the C collation lets LIKE 'abc%' use it).
create index search_documents_title_idx on search_documents (site_id, lower(title) collate "C");

-- How many documents of a site and locale hold each word: the vocabulary
-- suggestions complete from and a misspelt query is corrected against.
create table search_terms (
  site_id uuid not null references sites (id) on delete cascade,
  locale text not null,
  term text not null,
  documents integer not null,
  primary key (site_id, locale, term)
);
create index search_terms_trgm_idx on search_terms using gin (site_id, term gin_trgm_ops);
create index search_terms_prefix_idx on search_terms (site_id, locale, term text_pattern_ops);

-- Public searches, for analytics: what was asked, nothing about who asked.
create table search_queries (
  id bigint generated always as identity primary key,
  site_id uuid not null references sites (id) on delete cascade,
  query text not null,
  locale text,
  hits integer not null,
  created_at timestamptz not null default now()
);
create index search_queries_site_idx on search_queries (site_id, created_at);

-- When each site was last rebuilt, for stats and health.
create table search_reindexes (
  site_id uuid primary key references sites (id) on delete cascade,
  job_id uuid,
  documents integer not null,
  finished_at timestamptz not null default now()
);

-- One document from its parts; the body is capped so the vector stays far
-- under PostgreSQL's 1 MB limit.
create function search_head(locale text, title text, summary text) returns tsvector
language sql immutable parallel safe as $$
  select setweight(to_tsvector(search_config(locale), title), 'A') || setweight(to_tsvector(search_config(locale), summary), 'B')
$$;

create function search_vector(head tsvector, locale text, body text) returns tsvector
language sql immutable parallel safe as $$
  select head || setweight(to_tsvector(search_config(locale), left(body, 200000)), 'C')
$$;

create function search_words(title text, summary text, body text) returns text[]
language sql immutable parallel safe as $$
  select coalesce(array_agg(w.lexeme order by w.lexeme), '{}')
  from unnest(to_tsvector('simple', title || ' ' || summary || ' ' || left(body, 200000))) w
  where length(w.lexeme) between 3 and 40 and w.lexeme ~ '^[[:alpha:]]+$'
$$;

-- What each kind contributes, for the ids given (published or ready ones only).
create function search_sources(source_kind text, ids uuid[])
returns table (kind text, item_id uuid, site_id uuid, locale text, title text, path text, summary text, body text, published_at timestamptz)
language sql stable as $$
  select 'post', p.id, p.site_id, p.locale, p.title, p.slug,
         btrim(p.excerpt || ' ' || search_headings(p.body, p.body_format)), search_plain(p.body, p.body_format), p.published_at
  from posts p where source_kind = 'post' and p.id in (select unnest(ids)) and p.status = 'published'
  union all
  select 'page', g.id, g.site_id, g.locale, g.title, g.path,
         btrim(coalesce(g.seo->>'title', '') || ' ' || coalesce(g.seo->>'description', '')), '', g.published_at
  from pages g where source_kind = 'page' and g.id in (select unnest(ids)) and g.status = 'published'
  union all
  select 'element', e.id, e.site_id, e.locale, e.name, null, '', search_element_text(t.fields, e.data), e.published_at
  from content_elements e join content_types t on t.id = e.type_id
  where source_kind = 'element' and e.id in (select unnest(ids)) and e.status = 'published'
  union all
  select 'media', m.id, m.site_id, s.default_locale, coalesce(nullif(m.title, ''), m.file_name), null,
         m.alt, m.caption, m.created_at
  from media_items m join sites s on s.id = m.site_id
  where source_kind = 'media' and m.id in (select unnest(ids)) and m.status = 'ready'
$$;

-- Brings the documents of these items up to date: written where the text
-- changed, removed where the item is gone or no longer published.
create function search_refresh(source_kind text, ids uuid[], force boolean default false) returns void language plpgsql as $$
begin
  if cardinality(ids) = 0 then return; end if;
  with source as materialized (select * from search_sources(source_kind, ids)),
  gone as (
    delete from search_documents d
    where d.kind = source_kind and d.item_id in (select unnest(ids)) and d.item_id not in (select item_id from source)
  )
  insert into search_documents as d (kind, item_id, site_id, locale, title, path, summary, body, published_at, head, document, words)
  select s.kind, s.item_id, s.site_id, s.locale, s.title, s.path, s.summary, s.body, s.published_at,
         s.head, search_vector(s.head, s.locale, s.body), search_words(s.title, s.summary, s.body)
  from (select s.kind, s.item_id, s.site_id, s.locale, s.title, s.path, left(s.summary, 20000) as summary,
               left(s.body, 200000) as body, s.published_at, search_head(s.locale, s.title, left(s.summary, 20000)) as head
        from source s) s
  on conflict (kind, item_id) do update
    set site_id = excluded.site_id, locale = excluded.locale, title = excluded.title, path = excluded.path,
        summary = excluded.summary, body = excluded.body, published_at = excluded.published_at,
        head = excluded.head, document = excluded.document, words = excluded.words, indexed_at = now()
    -- Unchanged text is not written again (a reindex forces it: the configuration may have changed).
    where force or (d.locale, d.title, d.path, d.summary, d.body, d.published_at)
          is distinct from (excluded.locale, excluded.title, excluded.path, excluded.summary, excluded.body, excluded.published_at);
end $$;

-- Searching in bounded time. Counting or ranking every match of a word most
-- documents hold would cost a visit per match (100,000 of them: ~0.3 s),
-- and a public endpoint must not be that cheap to make expensive. So:
-- - search_candidates counts exactly, through the GIN index as a bitmap,
--   only when the planner expects at most `exact_up_to` matches; beyond that
--   the counts are the planner's estimates (from the lexeme statistics
--   ANALYZE keeps), and say so;
-- - the hits ranked are the newest `newest` matches of the whole document
--   and the newest `newest` matches of the title and summary (a title hit is
--   never lost to a flood of body hits): search_newest_* below.
-- The planner cannot see that testing a document outside the index costs a
-- TOAST fetch, so each path is chosen here by the estimate, and fixed by the
-- functions' own settings.
create function search_estimate(site uuid, query tsquery, only_locale text, in_head boolean, only_kind text) returns bigint
language plpgsql volatile as $$
declare
  plan jsonb;
begin
  -- Volatile: EXPLAIN is refused in a stable function.
  execute format('explain (format json) select 1 from search_documents d where d.site_id = $1 and d.%I @@ $2 '
                 'and ($3::text is null or d.locale = $3) and ($4::text is null or d.kind = $4)',
                 case when in_head then 'head' else 'document' end)
    into plan using site, query, only_locale, only_kind;
  return (plan -> 0 -> 'Plan' ->> 'Plan Rows')::bigint;
end $$;

-- What a search ranks, and its counts per kind: one call, one row. Up to
-- `exact_up_to` expected matches, every match is read once from the index
-- (search_exact); beyond, the counts are estimates and the newest matches
-- are found by walking the site's documents newest first. The title and
-- summary matches are found the same way past ~2,000 (their head vector is
-- in the row, so testing one is cheap), from the index below.
create function search_candidates(site uuid, query tsquery, only_locale text, kinds text[], newest integer, exact_up_to integer)
returns table (facets jsonb, exact boolean, found_kinds text[], found_ids uuid[], stems text[]) language plpgsql volatile as $$
declare
  every_kind constant text[] := array['post', 'page', 'element', 'media'];
  expected bigint := search_estimate(site, query, only_locale, false, null);
  heads_by_walk boolean := search_estimate(site, query, only_locale, true, null) > 2000;
begin
  if expected <= exact_up_to then
    select e.facets, true, e.kinds, e.ids into facets, exact, found_kinds, found_ids
    from search_exact(site, query, only_locale, kinds, newest) e;
  else
    -- The estimate shared out by the kinds of the newest matches.
    select array_agg(c.kind), array_agg(c.item_id) into found_kinds, found_ids
    from search_newest_many(site, query, only_locale, every_kind, newest, false) c;
    -- None found (stale statistics overestimated): no facets, and the query is tried for typos.
    select coalesce(jsonb_object_agg(k.kind, round(expected * k.n / cardinality(found_kinds))), '{}'), false into facets, exact
    from (select f.kind, count(*) as n from unnest(found_kinds) as f (kind) group by f.kind) k;
    if not every_kind <@ kinds then
      select array_agg(c.kind), array_agg(c.item_id) into found_kinds, found_ids
      from search_newest_many(site, query, only_locale, kinds, newest, false) c;
    end if;
  end if;
  -- Title and summary matches, fewer: a flood of body matches cannot hide them.
  if heads_by_walk then
    select found_kinds || array_agg(c.kind), found_ids || array_agg(c.item_id) into found_kinds, found_ids
    from search_newest_many(site, query, only_locale, kinds, newest / 2, true) c;
  else
    select found_kinds || array_agg(c.kind), found_ids || array_agg(c.item_id) into found_kinds, found_ids
    from search_newest_few(site, query, only_locale, kinds, newest / 2, true) c;
  end if;
  -- The query's lexemes, for marking them in snippets.
  -- The query's lexemes (quoted in its text form), for marking them in snippets; not the negated ones.
  stems := array(select distinct replace(m[2], '''''', '''') from regexp_matches(query::text, '(!?)''((?:[^'']|'''')*)''', 'g') as m
                 where m[1] = '');
  return next;
end $$;

-- One page of hits among the candidates: ranked by cover density (ts_rank_cd,
-- weights A title, B summary, C body, normalised to 0–1) times a recency
-- boost (a hit published at `at` counts 1.5 times one published long ago;
-- half the boost is gone at 90 days), then after the cursor's position.
-- PL/pgSQL so the plan is kept between calls; each candidate is read by its
-- key and must match as a whole (a title candidate may hold a -word in its body).
create function search_page(query tsquery, found_kinds text[], found_ids uuid[], at timestamptz,
                            after_score float8, after_kind text, after_id uuid, page_size integer)
returns table (kind text, item_id uuid, locale text, title text, path text, published_at timestamptz, score float8, text text)
language plpgsql stable as $$
begin
  return query
  with found as (select distinct f.kind, f.item_id from unnest(found_kinds, found_ids) as f (kind, item_id)),
  ranked as (
    select d.kind, d.item_id, d.published_at,
           (ts_rank_cd(d.document, query, 32) * (1 + 0.5 / (1 + greatest(0,
             extract(epoch from at - coalesce(d.published_at, at))) / (90 * 86400.0))))::float8 as score
    from found f cross join lateral (
      select d.kind, d.item_id, d.published_at, d.document from search_documents d
      where d.kind = f.kind and d.item_id = f.item_id offset 0) d
    where d.document @@ query
  ),
  page as (
    select * from ranked r
    where after_score is null or (r.score, r.kind, r.item_id) < (after_score, after_kind, after_id)
    order by r.score desc, r.kind desc, r.item_id desc
    limit page_size
  )
  select p.kind, p.item_id, d.locale, d.title, d.path, p.published_at, p.score,
         left(btrim(d.summary || ' ' || d.body), 20000)
  from page p join search_documents d on d.kind = p.kind and d.item_id = p.item_id
  order by p.score desc, p.kind desc, p.item_id desc;
end $$;

-- Every match from the index, once: counted per kind, the newest kept.
create function search_exact(site uuid, query tsquery, only_locale text, kinds text[], newest integer)
returns table (facets jsonb, kinds text[], ids uuid[])
language sql stable set enable_seqscan = off set enable_indexscan = off as $$
  with m as materialized (
    select d.kind, d.item_id, d.published_at from search_documents d
    where d.site_id = site and d.document @@ query and (only_locale is null or d.locale = only_locale))
  select (select coalesce(jsonb_object_agg(c.kind, c.n), '{}') from (select m.kind, count(*) as n from m group by m.kind) c),
         n.kinds, n.ids
  from (select coalesce(array_agg(t.kind), '{}') as kinds, coalesce(array_agg(t.item_id), '{}') as ids
        from (select m.kind, m.item_id from m where m.kind = any (search_exact.kinds) order by m.published_at desc limit newest) t) n
$$;

-- The newest matches of the whole document, or of the title and summary
-- (in_head). Plain SQL, so a caller's query inlines it and plans it under
-- the caller's settings: the two functions below.
create function search_newest(site uuid, query tsquery, only_locale text, kinds text[], newest integer, in_head boolean)
returns table (kind text, item_id uuid)
language sql stable as $$
  (select d.kind, d.item_id from search_documents d
   where not in_head and d.site_id = site and d.document @@ query and (only_locale is null or d.locale = only_locale)
     and d.kind = any (kinds)
   order by d.published_at desc limit newest)
  union all
  (select d.kind, d.item_id from search_documents d
   where in_head and d.site_id = site and d.head @@ query and (only_locale is null or d.locale = only_locale)
     and d.kind = any (kinds)
   order by d.published_at desc limit newest)
$$;

-- Few matches: all of them from the index, the newest kept.
create function search_newest_few(site uuid, query tsquery, only_locale text, kinds text[], newest integer, in_head boolean)
returns table (kind text, item_id uuid)
language sql stable set enable_seqscan = off set enable_indexscan = off as $$
  select * from search_newest(site, query, only_locale, kinds, newest, in_head)
$$;

-- Many matches: the site's documents newest first, tested until enough match.
create function search_newest_many(site uuid, query tsquery, only_locale text, kinds text[], newest integer, in_head boolean)
returns table (kind text, item_id uuid)
language sql stable set enable_seqscan = off set enable_bitmapscan = off as $$
  select * from search_newest(site, query, only_locale, kinds, newest, in_head)
$$;

-- Keeps search_terms' counts: each statement's words added and removed, summed
-- per term, written in term order (two writers of one site take the rows in
-- the same order) and only where the count changes.
create function search_terms_apply(deltas jsonb) returns void language plpgsql as $$
begin
  with delta as (
    select (d->>'site_id')::uuid as site_id, d->>'locale' as locale, d->>'term' as term, (d->>'n')::int as n
    from jsonb_array_elements(deltas) d
  )
  -- A site being deleted takes its terms with it (its cascade may run first).
  insert into search_terms as t (site_id, locale, term, documents)
  select site_id, locale, term, n from delta
  where exists (select 1 from sites s where s.id = delta.site_id)
  order by site_id, locale, term
  on conflict (site_id, locale, term) do update set documents = t.documents + excluded.documents;
  delete from search_terms t
  using jsonb_array_elements(deltas) d
  where t.site_id = (d->>'site_id')::uuid and t.locale = d->>'locale' and t.term = d->>'term' and t.documents <= 0;
end $$;

create function search_documents_counted() returns trigger language plpgsql as $$
declare
  deltas jsonb;
begin
  if tg_op = 'INSERT' then
    select jsonb_agg(jsonb_build_object('site_id', site_id, 'locale', locale, 'term', term, 'n', n)) into deltas
    from (select site_id, locale, unnest(words) as term, count(*) as n from doc_new group by 1, 2, 3) x;
  elsif tg_op = 'DELETE' then
    select jsonb_agg(jsonb_build_object('site_id', site_id, 'locale', locale, 'term', term, 'n', -n)) into deltas
    from (select site_id, locale, unnest(words) as term, count(*) as n from doc_old group by 1, 2, 3) x;
  else
    select jsonb_agg(jsonb_build_object('site_id', site_id, 'locale', locale, 'term', term, 'n', n)) into deltas
    from (
      select site_id, locale, term, sum(n) as n from (
        select site_id, locale, unnest(words) as term, 1 as n from doc_new
        union all
        select site_id, locale, unnest(words), -1 from doc_old
      ) w group by 1, 2, 3 having sum(n) <> 0
    ) x;
  end if;
  if deltas is not null then perform search_terms_apply(deltas); end if;
  return null;
end $$;
create trigger search_documents_terms_ins after insert on search_documents referencing new table as doc_new
  for each statement execute function search_documents_counted();
create trigger search_documents_terms_upd after update on search_documents referencing new table as doc_new old table as doc_old
  for each statement execute function search_documents_counted();
create trigger search_documents_terms_del after delete on search_documents referencing old table as doc_old
  for each statement execute function search_documents_counted();

-- The source tables: every statement refreshes the documents of the rows it
-- wrote. Updates pass only rows whose searchable columns changed, so a page
-- moved or a view counted costs nothing here. Content type changes reach
-- elements through their data (core/content/type-changes.ts rewrites it).
create function search_source_changed() returns trigger language plpgsql as $$
declare
  ids uuid[];
begin
  if tg_op = 'INSERT' then
    select array_agg(id) into ids from src_new;
  elsif tg_op = 'DELETE' then
    select array_agg(id) into ids from src_old;
  else
    execute format(
      'select array_agg(n.id) from src_new n join src_old o on o.id = n.id where (%s) is distinct from (%s)',
      tg_argv[1], replace(tg_argv[1], 'n.', 'o.')) into ids;
  end if;
  perform search_refresh(tg_argv[0], coalesce(ids, '{}'));
  return null;
end $$;

create trigger posts_search_ins after insert on posts referencing new table as src_new
  for each statement execute function search_source_changed('post');
create trigger posts_search_upd after update on posts referencing new table as src_new old table as src_old
  for each statement execute function search_source_changed('post', 'n.title, n.slug, n.excerpt, n.body, n.body_format, n.locale, n.status, n.published_at');
create trigger posts_search_del after delete on posts referencing old table as src_old
  for each statement execute function search_source_changed('post');

create trigger pages_search_ins after insert on pages referencing new table as src_new
  for each statement execute function search_source_changed('page');
create trigger pages_search_upd after update on pages referencing new table as src_new old table as src_old
  for each statement execute function search_source_changed('page', 'n.title, n.path, n.seo, n.locale, n.status, n.published_at');
create trigger pages_search_del after delete on pages referencing old table as src_old
  for each statement execute function search_source_changed('page');

create trigger content_elements_search_ins after insert on content_elements referencing new table as src_new
  for each statement execute function search_source_changed('element');
create trigger content_elements_search_upd after update on content_elements referencing new table as src_new old table as src_old
  for each statement execute function search_source_changed('element', 'n.name, n.data, n.locale, n.status, n.published_at');
create trigger content_elements_search_del after delete on content_elements referencing old table as src_old
  for each statement execute function search_source_changed('element');

create trigger media_items_search_ins after insert on media_items referencing new table as src_new
  for each statement execute function search_source_changed('media');
create trigger media_items_search_upd after update on media_items referencing new table as src_new old table as src_old
  for each statement execute function search_source_changed('media', 'n.title, n.file_name, n.alt, n.caption, n.status');
create trigger media_items_search_del after delete on media_items referencing old table as src_old
  for each statement execute function search_source_changed('media');

-- What is already published is searchable from the start.
select search_refresh('post', array(select id from posts));
select search_refresh('page', array(select id from pages));
select search_refresh('element', array(select id from content_elements));
select search_refresh('media', array(select id from media_items));

-- Reindexing is an admin's job and costs nothing unless a price is set.
insert into cost_settings (kind, unit, price, description) values
  ('search_reindex', 'item', 0, 'Search reindex of a site, per site');
