-- API processes keep search and suggestion answers (api/search/kept.ts)
-- tagged `search:<site>`: every statement that changes a site's search
-- documents announces the tag on `content_changed` (0011), whoever makes it
-- (a publish, a reindex, a dropped index, a deleted site), so a kept answer
-- never outlives a change to what it was computed from. The words the typo
-- correction and suggestions draw on change only with the documents.
create function search_documents_announced() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct 'search:' || site_id from doc_new));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct 'search:' || site_id from doc_old));
  end if;
  return null;
end $$;
create trigger search_documents_announce_ins after insert on search_documents referencing new table as doc_new
  for each statement execute function search_documents_announced();
create trigger search_documents_announce_upd after update on search_documents referencing new table as doc_new old table as doc_old
  for each statement execute function search_documents_announced();
create trigger search_documents_announce_del after delete on search_documents referencing old table as doc_old
  for each statement execute function search_documents_announced();

-- The newest matches of a common word, in a window of the newest documents.
-- Before, past search_candidates' exact bound the site's documents were
-- walked newest first, each tested through a TOAST fetch of its vector:
-- cheap for a word in half the documents, slow for one in 2% (5,000 tested
-- to find 100). Now the GIN indexes also hold each document's publication
-- time (btree_gin), so one index scan finds the matches published since a
-- moment: a window sized, from the planner's estimate, to hold about twice
-- the matches wanted, widened (×4) until it does. Only those matches are
-- read from the table, a few hundred at most whatever the word. Items never
-- published sort as newest, as `order by published_at desc` has them.
drop index search_documents_document_idx;
drop index search_documents_head_idx;
create index search_documents_document_idx on search_documents
  using gin (site_id, (coalesce(published_at, 'infinity'::timestamptz)), document);
create index search_documents_head_idx on search_documents
  using gin (site_id, (coalesce(published_at, 'infinity'::timestamptz)), head);
drop function search_candidates(uuid, tsquery, text, text[], integer, integer);
drop function search_newest_many(uuid, tsquery, text, text[], integer, boolean);

-- How many documents the planner expects the site to have.
create function search_site_size(site uuid) returns bigint language plpgsql volatile as $$
declare
  plan jsonb;
begin
  execute 'explain (format json) select 1 from search_documents d where d.site_id = $1' into plan using site;
  return (plan -> 0 -> 'Plan' ->> 'Plan Rows')::bigint;
end $$;

-- The newest matches published since `since` (the window), from the index alone.
create function search_newest_since(site uuid, query tsquery, only_locale text, kinds text[], newest integer,
                                    in_head boolean, since timestamptz)
returns table (kind text, item_id uuid)
language sql stable set enable_seqscan = off set enable_indexscan = off as $$
  (select d.kind, d.item_id from search_documents d
   where not in_head and d.site_id = site and coalesce(d.published_at, 'infinity'::timestamptz) >= since
     and d.document @@ query and (only_locale is null or d.locale = only_locale) and d.kind = any (kinds)
   order by coalesce(d.published_at, 'infinity'::timestamptz) desc limit newest)
  union all
  (select d.kind, d.item_id from search_documents d
   where in_head and d.site_id = site and coalesce(d.published_at, 'infinity'::timestamptz) >= since
     and d.head @@ query and (only_locale is null or d.locale = only_locale) and d.kind = any (kinds)
   order by coalesce(d.published_at, 'infinity'::timestamptz) desc limit newest)
$$;

-- The newest `newest` matches of a query expected to match `expected`
-- documents: in a window of the newest documents, widened until it holds
-- enough; once the window would be most of the site, all matches (few).
create function search_newest_windowed(site uuid, query tsquery, only_locale text, kinds text[], newest integer,
                                       in_head boolean, expected bigint)
returns table (kind text, item_id uuid) language plpgsql volatile as $$
declare
  size constant bigint := greatest(search_site_size(site), 1);
  span bigint := ceil(newest * 2.0 * size / greatest(expected, 1));
  since timestamptz;
  found_kinds text[];
  found_ids uuid[];
begin
  loop
    if span * 2 > size then
      return query select * from search_newest_few(site, query, only_locale, kinds, newest, in_head);
      return;
    end if;
    -- Where the window of the `span` newest documents begins (by the site's publication index).
    select coalesce(d.published_at, 'infinity'::timestamptz) into since from search_documents d
    where d.site_id = site order by d.published_at desc offset span limit 1;
    if since is null then
      return query select * from search_newest_few(site, query, only_locale, kinds, newest, in_head);
      return;
    end if;
    select array_agg(w.kind), array_agg(w.item_id) into found_kinds, found_ids
    from search_newest_since(site, query, only_locale, kinds, newest, in_head, since) w;
    if coalesce(cardinality(found_ids), 0) >= newest then
      return query select * from unnest(found_kinds, found_ids);
      return;
    end if;
    span := span * 4;
  end loop;
end $$;

-- As in 0023, but past the exact bound the newest matches come from a window
-- (above), and so do the title and summary matches past `heads_up_to`. When
-- every match was taken already, the title and summary matches (a subset)
-- are not looked for again; within the exact bound they are few enough to
-- take from the index without an estimate of their own.
create function search_candidates(site uuid, query tsquery, only_locale text, kinds text[], newest integer,
                                  exact_up_to integer, heads_up_to integer default 500)
returns table (facets jsonb, exact boolean, found_kinds text[], found_ids uuid[], stems text[]) language plpgsql volatile as $$
declare
  every_kind constant text[] := array['post', 'page', 'element', 'media'];
  expected bigint := search_estimate(site, query, only_locale, false, null);
begin
  if expected <= exact_up_to then
    select e.facets, true, e.kinds, e.ids into facets, exact, found_kinds, found_ids
    from search_exact(site, query, only_locale, kinds, newest) e;
    if cardinality(found_ids) >= newest then
      select found_kinds || array_agg(c.kind), found_ids || array_agg(c.item_id) into found_kinds, found_ids
      from search_newest_few(site, query, only_locale, kinds, newest / 2, true) c;
    end if;
  else
    -- The estimate shared out by the kinds of the newest matches.
    select array_agg(c.kind), array_agg(c.item_id) into found_kinds, found_ids
    from search_newest_windowed(site, query, only_locale, every_kind, newest, false, expected) c;
    -- None found (stale statistics overestimated): no facets, and the query is tried for typos.
    select coalesce(jsonb_object_agg(k.kind, round(expected * k.n / cardinality(found_kinds))), '{}'), false into facets, exact
    from (select f.kind, count(*) as n from unnest(found_kinds) as f (kind) group by f.kind) k;
    if not every_kind <@ kinds then
      select array_agg(c.kind), array_agg(c.item_id) into found_kinds, found_ids
      from search_newest_windowed(site, query, only_locale, kinds, newest, false, expected) c;
    end if;
    -- Title and summary matches, fewer: a flood of body matches cannot hide them.
    expected := search_estimate(site, query, only_locale, true, null);
    if expected > heads_up_to then
      select found_kinds || array_agg(c.kind), found_ids || array_agg(c.item_id) into found_kinds, found_ids
      from search_newest_windowed(site, query, only_locale, kinds, newest / 2, true, expected) c;
    else
      select found_kinds || array_agg(c.kind), found_ids || array_agg(c.item_id) into found_kinds, found_ids
      from search_newest_few(site, query, only_locale, kinds, newest / 2, true) c;
    end if;
  end if;
  -- The query's lexemes (quoted in its text form), for marking them in snippets; not the negated ones.
  stems := array(select distinct replace(m[2], '''''', '''') from regexp_matches(query::text, '(!?)''((?:[^'']|'''')*)''', 'g') as m
                 where m[1] = '');
  return next;
end $$;
