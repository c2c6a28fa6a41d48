-- Media folders: a tree per site. A folder's name is unique among its
-- siblings; the tree never has a cycle (moves are checked in code under a
-- per-site lock, and a folder cannot be its own parent).
create table media_folders (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  -- NO ACTION (checked at the end of the statement), so a subtree or a whole site can go in one statement.
  parent_id uuid references media_folders (id),
  name text not null check (length(name) between 1 and 200),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  check (parent_id is distinct from id),
  unique nulls not distinct (site_id, parent_id, name)
);
create index media_folders_site_idx on media_folders (site_id, created_at, id);
create index media_folders_parent_idx on media_folders (parent_id);
create trigger media_folders_updated_at before update on media_folders
  for each row execute function set_updated_at();

alter table media_items add constraint media_items_folder_fkey
  foreign key (folder_id) references media_folders (id) on delete set null;
create index media_items_folder_idx on media_items (folder_id) where folder_id is not null;

-- Where the subject of an image is (0–1 from the left and the top), for crops.
alter table media_items add column focal_point jsonb
  check (focal_point is null or (jsonb_typeof(focal_point->'x') = 'number' and jsonb_typeof(focal_point->'y') = 'number'));
create index media_items_tags_idx on media_items using gin (tags);

-- What processing after upload found: the dominant colour, and the variants
-- made (responsive sizes, a video's poster), each with its own storage key.
alter table media_items add column dominant_color text check (dominant_color is null or dominant_color ~ '^#[0-9a-f]{6}$');
alter table media_items add column variants jsonb not null default '[]';
alter table media_items add column processing_error text;

-- Processing an upload is part of the upload: it costs nothing.
insert into cost_settings (kind, unit, price, description) values ('media_process', 'item', 0, 'Metadata and variants of an upload');
