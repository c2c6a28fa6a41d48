-- The content model: content types (a versioned schema of fields per site)
-- and content elements (entries of a type). A translation of an element is an
-- element of its own with `master_id` set and its own locale; the translations
-- issue fills them. What an element's data refers to (other elements, media
-- items) is kept beside it, so "what uses this" is an index lookup and a
-- deletion can be refused, or carried through, without scanning JSON.
create table content_types (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  api_id text not null check (api_id ~ '^[a-z][a-z0-9_]{0,62}$'),
  description text not null default '' check (length(description) <= 2000),
  fields jsonb not null default '[]' check (jsonb_typeof(fields) = 'array'),
  version integer not null default 1 check (version > 0),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  unique (site_id, api_id),
  -- For the elements' composite key: an element's type is always of its own site.
  unique (id, site_id)
);
create index content_types_site_idx on content_types (site_id, created_at, id);
create trigger content_types_updated_at before update on content_types
  for each row execute function set_updated_at();

create table content_elements (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  type_id uuid not null,
  -- The type's version the data was last validated against.
  schema_version integer not null check (schema_version > 0),
  name text not null check (length(name) between 1 and 300),
  locale text not null check (length(locale) between 2 and 35),
  master_id uuid references content_elements (id) on delete cascade,
  data jsonb not null default '{}' check (jsonb_typeof(data) = 'object'),
  status text not null default 'draft' check (status in ('draft', 'published', 'archived')),
  published_at timestamptz,
  version integer not null default 1 check (version > 0),
  created_by uuid references users (id) on delete set null,
  updated_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  -- RESTRICT: a type with elements cannot go (the API answers 409 with counts first).
  foreign key (type_id, site_id) references content_types (id, site_id) on delete restrict,
  check (master_id is distinct from id),
  check ((status = 'published') = (published_at is not null) or status = 'archived'),
  unique nulls distinct (master_id, locale)
);
create index content_elements_site_idx on content_elements (site_id, created_at, id);
create index content_elements_type_idx on content_elements (type_id, created_at, id);
create index content_elements_master_idx on content_elements (master_id) where master_id is not null;
-- Field filters of public lists (`data @> {"field": value}`), whichever field.
create index content_elements_data_idx on content_elements using gin (data jsonb_path_ops);
create trigger content_elements_updated_at before update on content_elements
  for each row execute function set_updated_at();

-- Where an element's data points at another element, by the path of the
-- value (`author`, `gallery.2.link`). RESTRICT on the target: deleting a
-- referenced element is refused unless forced, and a forced delete removes
-- the values and these rows first, in the same transaction.
create table content_element_links (
  element_id uuid not null references content_elements (id) on delete cascade,
  path text not null,
  target_id uuid not null references content_elements (id) on delete restrict,
  site_id uuid not null references sites (id) on delete cascade,
  primary key (element_id, path)
);
create index content_element_links_target_idx on content_element_links (target_id);

-- Where an element's data points at a media item. A media item deleted with
-- force leaves the value in place; reads resolve it to nothing.
create table content_element_media (
  element_id uuid not null references content_elements (id) on delete cascade,
  path text not null,
  media_id uuid not null references media_items (id) on delete cascade,
  site_id uuid not null references sites (id) on delete cascade,
  primary key (element_id, path)
);
create index content_element_media_media_idx on content_element_media (media_id);

-- Pages: one tree per site. `path` is the slugs from the top, kept current by
-- the code that moves and renames (the whole subtree in the same
-- transaction); a slug is unique among its siblings in one locale, so a path
-- is unique per locale. Positions among siblings are unique, checked at
-- commit so that a reorder can pass through duplicates.
create table pages (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  -- NO ACTION (checked at the end of the statement), so a subtree goes in one statement.
  parent_id uuid references pages (id),
  position integer not null check (position >= 0),
  slug text not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 200),
  path text not null check (length(path) <= 4000),
  title text not null check (length(title) between 1 and 300),
  locale text not null check (length(locale) between 2 and 35),
  -- SET NULL: a translation outlives its master as a page of its own (it may have children).
  master_id uuid references pages (id) on delete set null,
  status text not null default 'draft' check (status in ('draft', 'published', 'archived')),
  published_at timestamptz,
  seo jsonb not null default '{}' check (jsonb_typeof(seo) = 'object'),
  template text check (length(template) <= 100),
  version integer not null default 1 check (version > 0),
  created_by uuid references users (id) on delete set null,
  updated_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  check (parent_id is distinct from id),
  check (master_id is distinct from id),
  unique (site_id, locale, path),
  unique nulls distinct (master_id, locale),
  constraint pages_position_key unique nulls not distinct (site_id, parent_id, position) deferrable initially deferred
);
create index pages_site_idx on pages (site_id, created_at, id);
create index pages_parent_idx on pages (parent_id);
create index pages_master_idx on pages (master_id) where master_id is not null;
create trigger pages_updated_at before update on pages
  for each row execute function set_updated_at();

-- The elements on a page, in ordered slots per area (main, sidebar...). An
-- element sits on a page at most once; positions in an area are unique at
-- commit, so a whole new layout can be written in one transaction.
create table page_elements (
  page_id uuid not null references pages (id) on delete cascade,
  element_id uuid not null references content_elements (id) on delete restrict,
  site_id uuid not null references sites (id) on delete cascade,
  area text not null default 'main' check (area ~ '^[a-z][a-z0-9_-]{0,49}$'),
  position integer not null check (position >= 0),
  settings jsonb not null default '{}' check (jsonb_typeof(settings) = 'object'),
  created_at timestamptz not null default now(),
  primary key (page_id, element_id),
  constraint page_elements_position_key unique (page_id, area, position) deferrable initially deferred
);
create index page_elements_element_idx on page_elements (element_id);
