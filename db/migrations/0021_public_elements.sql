-- An element's public row: what serving it needs, in one row kept with it.
-- element_locales (0020) held each master's filled fields by locale; a page
-- then read, for every element it places, the placed element, its master,
-- the master's type and its locales row (four index probes), and built the
-- element's JSON from them: id, type api_id, name and timestamps formatted
-- on every read. public_elements holds, per master, its locales as before
-- and the parts of its JSON that do not depend on the locale asked, written
-- when the element (or a translation, or its type) changes, in the same
-- transaction; page_elements keeps the master of what it places. A page's
-- element is then one probe and the chain's overlay (chain_data).
--
-- Measured with pgbench on the content bench's page (ten elements, each
-- with a translation, de-CH -> de -> en), prepared, 8 clients on 2 cores,
-- interleaved rounds: public_page of 0020 4,800-6,800 calls/s, below
-- 11,100-11,800 (one client: 0.35 -> 0.16 ms a call).

-- What a placement shows: the master of the element placed (a translation's
-- id names its master). An element's master never changes once written.
alter table page_elements add column master_id uuid;
update page_elements pe set master_id = coalesce(e.master_id, e.id) from content_elements e where e.id = pe.element_id;
alter table page_elements alter column master_id set not null;

-- An element that does not exist (deleted meanwhile) is left to element_id's
-- foreign key to refuse, as before, rather than to this column's not null.
create function page_elements_master() returns trigger language plpgsql as $$
begin
  new.master_id := coalesce((select coalesce(e.master_id, e.id) from content_elements e where e.id = new.element_id),
    new.element_id);
  return new;
end $$;
create trigger page_elements_master before insert or update of element_id on page_elements
  for each row execute function page_elements_master();

drop trigger content_elements_locales_insert on content_elements;
drop trigger content_elements_locales_update on content_elements;
drop trigger content_elements_locales_delete on content_elements;
drop function content_elements_locales();
drop function refresh_element_locales(uuid[]);
drop function public_page(uuid, uuid, text[]);
drop type public_page_answer;
drop type public_slot;
drop type public_element;
drop table element_locales;

-- A row for every master, drafts too: a refresh locks it (below), which is
-- what orders two transactions changing one master's translations.
create table public_elements (
  master_id uuid primary key references content_elements (id) on delete cascade,
  published boolean not null,
  type_id uuid not null,
  -- Whether the type's fields hold references or media (content_types.links).
  links boolean not null,
  -- The master's own locale and data.
  locale text not null,
  data jsonb not null,
  -- {locale: {field: value}}: the fields the locale fills, for the master's own locale and each published translation.
  localized jsonb not null,
  -- The element's JSON (publicElementSchema) up to its served_locale's value, and from after its data.
  head text not null,
  tail text not null,
  -- Its cache tags (core/content/public-cache.ts).
  tags text not null
);

-- Two transactions changing translations of one master must not each write
-- what they saw: the second would put back the first one's old fields. So
-- the masters' rows are locked first (in id order), and the fields are read
-- by the statements after it, which, the function being volatile, see what
-- the transaction that held the lock committed (READ COMMITTED). Timestamps
-- are written as the API writes them (api_time), names and api_ids escaped
-- by to_json.
create function refresh_public_elements(masters uuid[]) returns void language sql as $$
  select 1 from public_elements where master_id = any (masters) order by master_id for update;
  delete from public_elements p
  where p.master_id = any (masters)
    and not exists (select 1 from content_elements m where m.id = p.master_id and m.master_id is null);
  insert into public_elements as p (master_id, published, type_id, links, locale, data, localized, head, tail, tags)
  select m.id, m.status = 'published', m.type_id, t.links, m.locale, m.data,
    -- The master first: a translation in the master's own locale (none should exist) would win, as it did.
    jsonb_object_agg(e.locale, filled_fields(e.data) order by e.master_id nulls first, e.id),
    '{"id":"' || m.id || '","type":' || to_json(t.api_id) || ',"name":' || to_json(m.name) || ',"served_locale":',
    ',"published_at":' || coalesce(to_json(api_time(m.published_at))::text, 'null')
      || ',"updated_at":' || to_json(api_time(m.updated_at)) || '}',
    'element:' || m.id || ' type:' || m.type_id
  from content_elements m
  join content_types t on t.id = m.type_id
  join content_elements e on e.id = m.id or (e.master_id = m.id and e.status = 'published')
  where m.id = any (masters) and m.master_id is null
  group by m.id, t.id
  on conflict (master_id) do update set
    published = excluded.published, type_id = excluded.type_id, links = excluded.links, locale = excluded.locale,
    data = excluded.data, localized = excluded.localized, head = excluded.head, tail = excluded.tail, tags = excluded.tags
  where (p.published, p.type_id, p.links, p.locale, p.data, p.localized, p.head, p.tail, p.tags)
    is distinct from (excluded.published, excluded.type_id, excluded.links, excluded.locale, excluded.data,
      excluded.localized, excluded.head, excluded.tail, excluded.tags);
$$;

create function content_elements_public() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform refresh_public_elements(array(select distinct coalesce(r.master_id, r.id) from changed_new r));
  elsif tg_op = 'UPDATE' then
    perform refresh_public_elements(array(
      select coalesce(r.master_id, r.id) from changed_new r union select coalesce(r.master_id, r.id) from changed_old r));
  else
    perform refresh_public_elements(array(select distinct r.master_id from changed_old r where r.master_id is not null));
  end if;
  return null;
end $$;

create trigger content_elements_public_insert after insert on content_elements
  referencing new table as changed_new for each statement execute function content_elements_public();
create trigger content_elements_public_update after update on content_elements
  referencing old table as changed_old new table as changed_new for each statement execute function content_elements_public();
create trigger content_elements_public_delete after delete on content_elements
  referencing old table as changed_old for each statement execute function content_elements_public();

-- A type's api_id is in its elements' rows, and whether its fields hold links.
create function content_types_public() returns trigger language plpgsql as $$
begin
  perform refresh_public_elements(array(
    select m.id from changed_new n join changed_old o on o.id = n.id
    join content_elements m on m.type_id = n.id and m.master_id is null
    where n.api_id is distinct from o.api_id or n.links is distinct from o.links));
  return null;
end $$;
create trigger content_types_public after update on content_types
  referencing old table as changed_old new table as changed_new for each statement execute function content_types_public();

select refresh_public_elements(array(select id from content_elements where master_id is null));

-- The page's own fields, in publicPageSchema's order: row_to_json writes a
-- row of one as JSON.stringify would (keys in order, no spaces).
create type public_page_fields as (
  id uuid, parent_id uuid, "position" integer, slug text, path text, title text, served_locale text, seo jsonb,
  template text, published_at text, updated_at text
);

-- A page of a site (by its own id or any of its group's) in a chain of
-- locales, as one row: the group's best published page with its published
-- elements resolved in the chain, by area then position (a translation
-- without a layout of its own shows its master's), written as the answer's
-- JSON text (core/content/public-pages.ts sends it as it is); the cache
-- tags of what it shows and of the elements it places unpublished; and, for elements whose types hold references or
-- media, those fields, for the caller to resolve them. None when the page
-- is not published. A SQL function the planner inlines into the statement
-- calling it: the plan is the same as written there, and the statement a
-- client sends (and copies, and parses) is one line.
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
    -- The page's fields, then its elements: row_to_json's object always ends with its closing brace.
    left(row_to_json(row(b.id, b.parent_id, b.position, b.slug, b.path, b.title, b.locale, b.seo, b.template,
      api_time(b.published_at), api_time(b.updated_at))::public_page_fields)::text, -1)
      || ',"elements":[' || coalesce(s.elements, '') || ']}',
    s.tags, s.linking
  from best b cross join lateral (
    select
      string_agg('{"area":' || to_json(slot.area) || ',"position":' || slot.position || ',"settings":' || slot.settings::text
          || ',"element":' || e.head || to_json(chain_locale(e.localized, chain, e.locale)) || ',"data":'
          || chain_data(e.data, e.localized, chain)::text || e.tail || '}', ','
        order by slot.area, slot.position) filter (where e.published) as elements,
      -- Every element placed, shown or not: publishing one changes the page.
      string_agg(e.tags, ' ') as tags,
      jsonb_object_agg(e.master_id, jsonb_build_object('type_id', e.type_id,
          'fields', (select t.fields from content_types t where t.id = e.type_id))) filter (where e.published and e.links)
        as linking
    from page_elements slot
    join public_elements e on e.master_id = slot.master_id
    where slot.page_id = case when exists (select 1 from page_elements x where x.page_id = b.id) then b.id else b.group_id end
  ) s
$$;
