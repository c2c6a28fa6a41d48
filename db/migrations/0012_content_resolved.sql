-- An element in a fallback chain of locales: the locale it is served in (its
-- best published translation in the chain, else the master's locale) and its
-- data, each field from the best-ranked row that has it (translations hold
-- only localized fields, so the others always come from the master). A
-- PL/pgSQL function, so its plan is made once per connection: inlined, the
-- same SQL cost public reads more to plan than to run.
create function content_resolved(m_id uuid, m_locale text, m_data jsonb, chain text[])
-- ROWS 1: one row always; the planner's default guess (1000) would have it
-- resolve every candidate of a list before keeping the first page.
returns table (served_locale text, data jsonb) language plpgsql stable rows 1 as $$
declare
  candidate record;
  merged jsonb := m_data;
  served text := m_locale;
begin
  -- From the least wanted to the most, each row's filled fields laid over the
  -- ones before: the master first (it holds the fields that are not
  -- localized), and again at its own rank when its locale is in the chain.
  for candidate in
    select c.locale, c.data from (
      select m_locale as locale, array_position(chain, m_locale) as rank, m_data as data
      union all
      select tr.locale, array_position(chain, tr.locale), tr.data from content_elements tr
      where tr.master_id = m_id and tr.status = 'published' and tr.locale = any (chain)
    ) c
    where c.rank is not null
    order by c.rank desc
  loop
    merged := merged || coalesce((select jsonb_object_agg(kv.key, kv.value) from jsonb_each(candidate.data) kv
                                  where kv.value <> 'null'::jsonb), '{}'::jsonb);
    served := candidate.locale;
  end loop;
  return query select served, merged;
end $$;

-- A public page in a fallback chain of locales, as one row: the best
-- published page of the group of `page` (a page and its translations), and
-- its published elements resolved, as JSON in area and position order (a
-- translation without a layout of its own shows its master's), with the
-- fields of the elements' types that hold references or media, for the
-- caller to resolve those. None when the page is not published. One row of
-- JSON rather than a row per slot: the client parses one value, not every
-- column of every slot. A function for the same reason as above.
create function api_time(value timestamptz) returns text language sql immutable as $$
  select to_char(value at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

create function public_page(site uuid, page uuid, chain text[])
returns table (
  id uuid, parent_id uuid, "position" integer, slug text, path text, title text, served_locale text, seo jsonb,
  template text, published_at timestamptz, updated_at timestamptz, group_id uuid, elements jsonb, linking_types jsonb
) language plpgsql stable as $$
#variable_conflict use_column
begin
  return query
  with grp (id) as (select coalesce(g.master_id, g.id) from pages g where g.id = page and g.site_id = site),
  best as (
    select p.id, p.parent_id, p.position, p.slug, p.path, p.title, p.locale, p.seo, p.template, p.published_at,
      p.updated_at, grp.id as group_id
    from pages p, grp
    -- By id and by master (two index lookups), not by the group expression (a scan of the site's pages).
    where (p.id = grp.id or p.master_id = grp.id) and p.status = 'published'
    order by coalesce(array_position(chain, p.locale), 1000), (p.master_id is null) desc
    limit 1
  ),
  placed as (
    select slot.area, slot.position, slot.settings, m.id, m.type_id, t.api_id, t.fields, m.name, r.served_locale,
      r.data, m.published_at, m.updated_at
    from best b
    join page_elements slot
      on slot.page_id = case when exists (select 1 from page_elements x where x.page_id = b.id) then b.id else b.group_id end
    join content_elements m on m.id = (select coalesce(x.master_id, x.id) from content_elements x where x.id = slot.element_id)
    join content_types t on t.id = m.type_id
    cross join lateral content_resolved(m.id, m.locale, m.data, chain) r
    where m.status = 'published'
  )
  select b.id, b.parent_id, b.position, b.slug, b.path, b.title, b.locale, b.seo, b.template, b.published_at,
    b.updated_at, b.group_id,
    coalesce((select jsonb_agg(jsonb_build_object(
        'area', e.area, 'position', e.position, 'settings', e.settings, 'type_id', e.type_id,
        'element', jsonb_build_object('id', e.id, 'type', e.api_id, 'name', e.name, 'served_locale', e.served_locale,
          'data', e.data, 'published_at', api_time(e.published_at), 'updated_at', api_time(e.updated_at)))
      order by e.area, e.position) from placed e), '[]'::jsonb),
    coalesce((select jsonb_object_agg(l.type_id, l.fields) from (select distinct e.type_id, e.fields from placed e
      where jsonb_path_exists(e.fields, 'strict $.**.type ? (@ == "reference" || @ == "media")')) l), '{}'::jsonb)
  from best b;
end $$;
