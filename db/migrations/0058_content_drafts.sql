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
