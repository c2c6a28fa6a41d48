-- Fallback as an expression, not a search. Every master keeps, in
-- element_locales, the fields each of its locales fills: its own locale's
-- (its data) and each published translation's, top-level null values left
-- out. Serving an element in a chain of locales is then one expression on
-- its row (chain_data below: the master's data, then each locale's filled
-- fields from the least wanted to the most), where it was a search of the
-- translations and an aggregate over their fields for every element read.
-- Same rules as before (db/migrations/0012: each field from the best-ranked
-- published row that fills it, the master's data under all), kept current
-- by statement triggers in the same transaction as the write.
--
-- Measured with pgbench on the content bench's page (ten elements, each
-- with a translation, de-CH -> de -> en), 16 clients on 2 cores: the page's
-- query 2,900-3,060 calls/s as the PL/pgSQL function of 0019, 5,400-5,600 as
-- public_page below, prepared once per connection (core/content/public-pages.ts).

create table element_locales (
  master_id uuid primary key references content_elements (id) on delete cascade,
  -- {locale: {field: value}}: the fields the locale fills, for the master's own locale and each published translation.
  localized jsonb not null
);

create function filled_fields(data jsonb) returns jsonb language sql immutable parallel safe
return coalesce((select jsonb_object_agg(kv.key, kv.value) from jsonb_each(data) kv where kv.value <> 'null'::jsonb), '{}');

-- Two transactions changing translations of one master must not each write
-- what they saw: the second would put back the first one's old fields. So
-- the masters' rows are locked first (in id order), and the fields are read
-- by the statements after it, which, the function being volatile, see what
-- the transaction that held the lock committed (READ COMMITTED).
create function refresh_element_locales(masters uuid[]) returns void language sql as $$
  select 1 from element_locales where master_id = any (masters) order by master_id for update;
  delete from element_locales l
  where l.master_id = any (masters)
    and not exists (select 1 from content_elements m where m.id = l.master_id and m.master_id is null);
  insert into element_locales (master_id, localized)
  -- The master first: a translation in the master's own locale (none should exist) would win, as it did.
  select m.id, jsonb_object_agg(e.locale, filled_fields(e.data) order by e.master_id nulls first, e.id)
  from content_elements m
  join content_elements e on e.id = m.id or (e.master_id = m.id and e.status = 'published')
  where m.id = any (masters) and m.master_id is null
  group by m.id
  on conflict (master_id) do update set localized = excluded.localized
    where element_locales.localized is distinct from excluded.localized;
$$;

create function content_elements_locales() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform refresh_element_locales(array(select distinct coalesce(r.master_id, r.id) from changed_new r));
  elsif tg_op = 'UPDATE' then
    perform refresh_element_locales(array(
      select coalesce(r.master_id, r.id) from changed_new r union select coalesce(r.master_id, r.id) from changed_old r));
  else
    perform refresh_element_locales(array(select distinct r.master_id from changed_old r where r.master_id is not null));
  end if;
  return null;
end $$;

create trigger content_elements_locales_insert after insert on content_elements
  referencing new table as changed_new for each statement execute function content_elements_locales();
create trigger content_elements_locales_update after update on content_elements
  referencing old table as changed_old new table as changed_new for each statement execute function content_elements_locales();
create trigger content_elements_locales_delete after delete on content_elements
  referencing old table as changed_old for each statement execute function content_elements_locales();

select refresh_element_locales(array(select id from content_elements where master_id is null));

-- An element's data in a chain of locales (at most 8, core/content/locales.ts):
-- inlined by the planner, so it costs what the expression costs.
create function chain_data(data jsonb, localized jsonb, chain text[]) returns jsonb language sql immutable parallel safe
return data || coalesce(localized -> chain[8], '{}') || coalesce(localized -> chain[7], '{}')
  || coalesce(localized -> chain[6], '{}') || coalesce(localized -> chain[5], '{}')
  || coalesce(localized -> chain[4], '{}') || coalesce(localized -> chain[3], '{}')
  || coalesce(localized -> chain[2], '{}') || coalesce(localized -> chain[1], '{}');

-- The locale it is served in: the first of the chain it has, else its own.
create function chain_locale(localized jsonb, chain text[], own text) returns text language sql immutable parallel safe
return case
  when localized ? chain[1] then chain[1] when localized ? chain[2] then chain[2]
  when localized ? chain[3] then chain[3] when localized ? chain[4] then chain[4]
  when localized ? chain[5] then chain[5] when localized ? chain[6] then chain[6]
  when localized ? chain[7] then chain[7] when localized ? chain[8] then chain[8]
  else own end;

-- Whether a type's fields (nested ones too) hold references or media: what a
-- public read resolves further. Kept with the type, not worked out per read.
alter table content_types add column links boolean not null
  generated always as (jsonb_path_exists(fields, 'strict $.**.type ? (@ == "reference" || @ == "media")')) stored;

-- Timestamps as the API writes them everywhere (db/pool.ts, utcText: UTC,
-- the fraction to 3 digits or 6), so an element reads the same on a page as
-- alone. Stable, as its body is: the planner inlines it, where as an
-- immutable function over stable ones it was called through the SQL
-- function executor, 2 us a value (1 us now).
create or replace function api_time(value timestamptz) returns text language sql stable parallel safe
return case length(to_json(value at time zone 'UTC') #>> '{}')
  when 26 then (to_json(value at time zone 'UTC') #>> '{}') || 'Z'
  when 19 then (to_json(value at time zone 'UTC') #>> '{}') || '.000Z'
  else rpad(to_json(value at time zone 'UTC') #>> '{}',
    case when length(to_json(value at time zone 'UTC') #>> '{}') <= 23 then 23 else 26 end, '0') || 'Z'
  end;

drop function public_page(uuid, uuid, text[]);
drop function content_resolved(uuid, text, jsonb, text[]);

-- The shapes of public_page's answer (publicPageWithElementsSchema), their
-- attributes in the schema's order: row_to_json writes a row of one as the
-- JSON object JSON.stringify would, keys in that order and no spaces
-- (json_build_object writes `"key" : value`).
create type public_element as (
  id uuid, type text, name text, served_locale text, data jsonb, published_at text, updated_at text
);
create type public_slot as (area text, "position" integer, settings jsonb, element public_element);
create type public_page_answer as (
  id uuid, parent_id uuid, "position" integer, slug text, path text, title text, served_locale text, seo jsonb,
  template text, published_at text, updated_at text, elements json
);

-- A page of a site (by its own id or any of its group's) in a chain of
-- locales, as one row: the group's best published page with its published
-- elements resolved in the chain, by area then position (a translation
-- without a layout of its own shows its master's), written as the answer's
-- JSON text (core/content/public-pages.ts sends it as it is); the cache
-- tags of what it shows; and, for elements whose types hold references or
-- media, those fields, for the caller to resolve them. None when the page is not published. A SQL
-- function the planner inlines into the statement calling it: the plan is
-- the same as written there, and the statement a client sends (and copies,
-- and parses) is one line.
create function public_page(site uuid, page uuid, chain text[])
returns table (group_id uuid, body text, tags text, linking jsonb) language sql stable as $$
  with grp (id) as (select coalesce(g.master_id, g.id) from pages g where g.id = page and g.site_id = site),
  best as (
    select p.id, p.parent_id, p.position, p.slug, p.path, p.title, p.locale, p.seo, p.template, p.published_at,
      p.updated_at, grp.id as group_id
    from pages p, grp
    -- By id and by master (two index lookups), not by the group expression (a scan of the site's pages).
    where (p.id = grp.id or p.master_id = grp.id) and p.status = 'published'
    order by coalesce(array_position(chain, p.locale), 1000), (p.master_id is null) desc
    limit 1
  )
  select b.group_id,
    row_to_json(row(b.id, b.parent_id, b.position, b.slug, b.path, b.title, b.locale, b.seo, b.template,
      api_time(b.published_at), api_time(b.updated_at), coalesce(s.elements, '[]'::json))::public_page_answer)::text,
    s.tags, s.linking
  from best b cross join lateral (
    select
      json_agg(row_to_json(row(slot.area, slot.position, slot.settings,
          row(m.id, t.api_id, m.name, chain_locale(l.localized, chain, m.locale), chain_data(m.data, l.localized, chain),
            api_time(m.published_at), api_time(m.updated_at))::public_element)::public_slot)
        order by slot.area, slot.position) as elements,
      string_agg('element:' || m.id || ' type:' || m.type_id, ' ') as tags,
      jsonb_object_agg(m.id, jsonb_build_object('type_id', m.type_id, 'fields', t.fields)) filter (where t.links)
        as linking
    from page_elements slot
    join content_elements placed on placed.id = slot.element_id
    join content_elements m on m.id = coalesce(placed.master_id, placed.id)
    join content_types t on t.id = m.type_id
    left join element_locales l on l.master_id = m.id
    where m.status = 'published'
      and slot.page_id = case when exists (select 1 from page_elements x where x.page_id = b.id) then b.id else b.group_id end
  ) s
$$;
