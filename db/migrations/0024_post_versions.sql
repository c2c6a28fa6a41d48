-- Earlier bodies of a post, kept when a job replaces the body: a recrawl that
-- found the page changed, or a transform applied to the post. Each row is the
-- post as it was at `version`, before the job raised it. Written by
-- core/posts/versions.ts; a post's versions go with it.
create table post_versions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  post_id uuid not null references posts (id) on delete cascade,
  version integer not null check (version > 0),
  title text not null,
  excerpt text not null,
  body text not null,
  body_format text not null check (body_format in ('markdown', 'html')),
  source jsonb check (source is null or jsonb_typeof(source) = 'object'),
  -- Why it was replaced: recrawl or transform.
  reason text not null check (reason in ('recrawl', 'transform')),
  -- The job that replaced it; kept after the job itself is deleted by retention.
  job_id uuid,
  created_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  -- A job that runs twice keeps the version once.
  unique (post_id, version)
);
