-- Drafts beside the live version (issue 41). A published element or page
-- that is edited keeps its live columns, which public delivery reads, and
-- holds the edit in `draft` until it is published (copied over the live
-- columns) or discarded (set to null). An element or page never published
-- has no draft beside it: its own columns are the draft, as before.
--   content_elements.draft: {"name": text, "data": object, "schema_version": int}
--   pages.draft:            {"title": text, "seo": object, "template": text|null}
-- `publish_at` plans a publication (of the draft, or of a draft-status row),
-- as posts' scheduled_for does; a queue job keyed by the row runs it.
alter table content_elements
  add column draft jsonb check (draft is null or jsonb_typeof(draft) = 'object'),
  add column draft_updated_at timestamptz,
  add column draft_updated_by uuid references users (id) on delete set null,
  add column publish_at timestamptz;

alter table pages
  add column draft jsonb check (draft is null or jsonb_typeof(draft) = 'object'),
  add column draft_updated_at timestamptz,
  add column draft_updated_by uuid references users (id) on delete set null,
  add column publish_at timestamptz;

-- History: an element's or page's content as it was at a publish, or at a
-- save (saves are kept for the retention the tenant chooses). `content` is
-- the same shape as `draft` above; `changed` names the fields that differ
-- from the version before it. Restoring writes a version's content as a new
-- draft. Versions go with their element or page.
create table content_versions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  element_id uuid references content_elements (id) on delete cascade,
  page_id uuid references pages (id) on delete cascade,
  number integer not null check (number > 0),
  reason text not null check (reason in ('publish', 'save', 'restore')),
  content jsonb not null check (jsonb_typeof(content) = 'object'),
  changed text[] not null default '{}',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  constraint content_versions_one_item check ((element_id is null) <> (page_id is null))
);
create unique index content_versions_element_number on content_versions (element_id, number) where element_id is not null;
create unique index content_versions_page_number on content_versions (page_id, number) where page_id is not null;
-- Retention drops old saves by age.
create index content_versions_saves_idx on content_versions (created_at) where reason = 'save';

-- As 0034.
alter table content_versions enable row level security;
create policy tenant_isolation on content_versions
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);

-- Saving a draft changes neither what is live nor its updated_at: public
-- delivery shows updated_at (public_elements' tail, public_page's fields),
-- so a draft saved beside a published row would change the published answer
-- (and its ETag). A write of the draft or the schedule alone (with the
-- version and the editor) keeps updated_at; every other update moves it, as
-- set_updated_at did (a layout change raising only the page's version too).
create function content_live_columns(row_json jsonb) returns jsonb language sql immutable as $$
  select row_json - array['draft', 'draft_updated_at', 'draft_updated_by', 'publish_at', 'version', 'updated_by', 'updated_at']
$$;

create function set_live_updated_at() returns trigger language plpgsql as $$
begin
  if content_live_columns(to_jsonb(new)) is distinct from content_live_columns(to_jsonb(old))
     or (new.draft is not distinct from old.draft and new.draft_updated_at is not distinct from old.draft_updated_at
         and new.publish_at is not distinct from old.publish_at)
  then
    new.updated_at = now();
  end if;
  return new;
end $$;

drop trigger content_elements_updated_at on content_elements;
create trigger content_elements_updated_at before update on content_elements
  for each row execute function set_live_updated_at();
drop trigger pages_updated_at on pages;
create trigger pages_updated_at before update on pages
  for each row execute function set_live_updated_at();

-- Nor is a draft announced on content_changed (0011): public answers show
-- only live columns, so the public cache keeps them while drafts are saved.
-- Updates announce the rows whose live columns changed; inserts and deletes
-- as before. (A page's layout change announces itself: page_elements.)
create or replace function content_elements_changed() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    perform announce_content_tags(array(
      select distinct unnest(array['element:' || coalesce(n.master_id, n.id), 'type:' || n.type_id, 'elements:' || n.site_id,
                                   'element:' || coalesce(o.master_id, o.id), 'type:' || o.type_id, 'elements:' || o.site_id])
      from changed_new n join changed_old o on o.id = n.id
      where content_live_columns(to_jsonb(n)) is distinct from content_live_columns(to_jsonb(o))));
    return null;
  end if;
  if tg_op = 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['element:' || coalesce(r.master_id, r.id), 'type:' || r.type_id, 'elements:' || r.site_id]) from changed_new r));
  else
    perform announce_content_tags(array(select distinct unnest(array['element:' || coalesce(r.master_id, r.id), 'type:' || r.type_id, 'elements:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;

create or replace function pages_changed() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    perform announce_content_tags(array(
      select distinct unnest(array['page:' || coalesce(n.master_id, n.id), 'pages:' || n.site_id,
                                   'page:' || coalesce(o.master_id, o.id), 'pages:' || o.site_id])
      from changed_new n join changed_old o on o.id = n.id
      where content_live_columns(to_jsonb(n)) is distinct from content_live_columns(to_jsonb(o))));
    return null;
  end if;
  if tg_op = 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(r.master_id, r.id), 'pages:' || r.site_id]) from changed_new r));
  else
    perform announce_content_tags(array(select distinct unnest(array['page:' || coalesce(r.master_id, r.id), 'pages:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;
