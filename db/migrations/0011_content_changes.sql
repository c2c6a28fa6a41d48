-- API processes keep public answers in memory (or Redis), tagged by what
-- they show: `site:<id>`, `element:<master id>`, `type:<id>`, `types:<site>`,
-- `elements:<site>`, `page:<master id>`, `pages:<site>`, `media:<id>`, and
-- `tree:<site>` (a layout changed: the admin tree's element counts).
-- Every write that can change a public answer announces the tags it touches
-- on `content_changed` (space-separated, in chunks under NOTIFY's 8000-byte
-- limit), whoever makes it, at commit; each process drops the entries
-- carrying them. Statement-level triggers with transition tables: a bulk
-- change (a subtree moved) is one notification per chunk, not one per row.

create function announce_content_tags(tags text[]) returns void language plpgsql as $$
declare
  chunk text := '';
  tag text;
begin
  foreach tag in array tags loop
    if tag is null then continue; end if;
    if length(chunk) + length(tag) + 1 > 7900 then
      perform pg_notify('content_changed', chunk);
      chunk := '';
    end if;
    chunk := case when chunk = '' then tag else chunk || ' ' || tag end;
  end loop;
  if chunk <> '' then perform pg_notify('content_changed', chunk); end if;
end $$;

create function content_elements_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct unnest(array['element:' || coalesce(r.master_id, r.id), 'type:' || r.type_id, 'elements:' || r.site_id]) from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['element:' || coalesce(r.master_id, r.id), 'type:' || r.type_id, 'elements:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;

create function content_types_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct unnest(array['type:' || r.id, 'types:' || r.site_id]) from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['type:' || r.id, 'types:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;

create function pages_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(r.master_id, r.id), 'pages:' || r.site_id]) from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(r.master_id, r.id), 'pages:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;

create function page_elements_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(p.master_id, p.id), 'tree:' || r.site_id]) from changed_new r left join pages p on p.id = r.page_id));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(p.master_id, p.id), 'tree:' || r.site_id]) from changed_old r left join pages p on p.id = r.page_id));
  end if;
  return null;
end $$;

create function media_items_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct 'media:' || r.id from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct 'media:' || r.id from changed_old r));
  end if;
  return null;
end $$;

-- Visibility, locales, domain, a deletion: everything public of the site.
create function sites_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct 'site:' || r.id from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct 'site:' || r.id from changed_old r));
  end if;
  return null;
end $$;

-- A tenant suspended or blocked takes its sites' public answers away.
create function tenants_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct 'site:' || s.id from changed_new r join sites s on s.tenant_id = r.id));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct 'site:' || s.id from changed_old r join sites s on s.tenant_id = r.id));
  end if;
  return null;
end $$;

-- Insert, update and delete each get their own trigger (a trigger names only
-- the transition tables its event has); each function reads the ones its
-- event has, by TG_OP. An update announces both what was and what is.
-- Identical payloads of one transaction are delivered once.
do $$
declare
  spec record;
begin
  for spec in select * from (values
    ('content_elements', 'content_elements_changed'),
    ('content_types', 'content_types_changed'),
    ('pages', 'pages_changed'),
    ('page_elements', 'page_elements_changed'),
    ('media_items', 'media_items_changed'),
    ('sites', 'sites_changed'),
    ('tenants', 'tenants_changed')) as s (tab, fn)
  loop
    execute format('create trigger %I after insert on %I referencing new table as changed_new
      for each statement execute function %I()', spec.tab || '_content_ins', spec.tab, spec.fn);
    execute format('create trigger %I after update on %I referencing new table as changed_new old table as changed_old
      for each statement execute function %I()', spec.tab || '_content_upd', spec.tab, spec.fn);
    execute format('create trigger %I after delete on %I referencing old table as changed_old
      for each statement execute function %I()', spec.tab || '_content_del', spec.tab, spec.fn);
  end loop;
end $$;
