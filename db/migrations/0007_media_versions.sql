-- Every edit of an image keeps the version it replaced: its file stays under
-- its own key, and the item points at the newest.
alter table media_items add column version integer not null default 1 check (version >= 1);
-- Who made the current version, and when (null and the creation time for an item never edited).
alter table media_items add column version_created_by uuid references users (id) on delete set null;
alter table media_items add column version_created_at timestamptz not null default now();
-- The job (an AI edit) that made the current version, so a rerun of it does not make another.
alter table media_items add column version_job_id uuid;

create table media_versions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  media_id uuid not null references media_items (id) on delete cascade,
  version integer not null check (version >= 1),
  storage_key text not null,
  mime_type text not null,
  size_bytes bigint not null,
  width integer,
  height integer,
  -- Who made this version (the upload or the edit that produced it).
  created_by uuid references users (id) on delete set null,
  -- When this version was made, and when an edit replaced it.
  created_at timestamptz not null,
  replaced_at timestamptz not null default now(),
  unique (media_id, version)
);
