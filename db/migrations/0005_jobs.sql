-- Jobs: the record users and admins see of every expensive operation.
-- graphile-worker's own rows are the queue and vanish when a run ends; these
-- stay until the retention period passes.
create table jobs (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  -- Who asked: a user, or a service account (user_id null).
  user_id uuid references users (id) on delete set null,
  actor_id uuid,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]*$'),
  status text not null default 'queued'
    check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled')),
  progress real not null default 0 check (progress between 0 and 1),
  stage text not null default '',
  input jsonb not null,
  output jsonb,
  -- {code, message} once the job failed (or the last transient error while it retries).
  error jsonb,
  attempts integer not null default 0,
  max_attempts integer not null default 5 check (max_attempts between 1 and 25),
  -- The account credits are reserved on and debited from.
  account_id uuid references credit_accounts (id) on delete set null,
  credits_reserved bigint not null default 0 check (credits_reserved >= 0),
  credits_charged bigint not null default 0 check (credits_charged >= 0),
  provider text,
  provider_ref text,
  -- What an asynchronous provider delivered by webhook, for the worker to finish with.
  provider_result jsonb,
  idempotency_key text,
  media_id uuid,
  media_ids uuid[] not null default '{}',
  -- The worker running it, while it runs.
  locked_by text,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  waiting_at timestamptz,
  finished_at timestamptz,
  canceled_at timestamptz,
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index jobs_site_idx on jobs (site_id, created_at, id);
create index jobs_list_idx on jobs (created_at, id);
create index jobs_tenant_idx on jobs (tenant_id, created_at, id);
create index jobs_user_idx on jobs (user_id) where user_id is not null;
create index jobs_account_idx on jobs (account_id) where account_id is not null;
create index jobs_status_idx on jobs (status, kind) where status in ('queued', 'running', 'waiting');
create index jobs_finished_idx on jobs (finished_at) where finished_at is not null;
create unique index jobs_provider_ref_key on jobs (provider, provider_ref) where provider_ref is not null;
create trigger jobs_updated_at before update on jobs
  for each row execute function set_updated_at();

-- Every change users can watch (state, progress) is announced, so waiting
-- requests and event streams are woken rather than polling. The payload is
-- small on purpose: listeners re-read the row.
create function jobs_notify() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status or new.progress is distinct from old.progress
     or new.stage is distinct from old.stage then
    perform pg_notify('job_events', json_build_object('id', new.id, 'status', new.status)::text);
  end if;
  return null;
end $$;
create trigger jobs_notify after insert or update on jobs
  for each row execute function jobs_notify();

-- One row per run of a job: which worker, how it ended, and why.
create table job_attempts (
  job_id uuid not null references jobs (id) on delete cascade,
  attempt integer not null,
  worker_id text not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  outcome text check (outcome in ('succeeded', 'failed', 'retrying', 'waiting', 'lost', 'canceled')),
  error jsonb,
  primary key (job_id, attempt)
);

-- Worker processes say they are alive every few seconds. The ids a process's
-- graphile-worker pool locks runs with (worker_ids) are unlocked by the others
-- once its beat stops.
create table worker_processes (
  id text primary key,
  worker_ids text[] not null default '{}',
  hostname text not null,
  pid integer not null,
  concurrency integer not null,
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);

-- Media items; the media library issue adds folders, variants and versions.
create table media_items (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  folder_id uuid,
  kind text not null check (kind in ('image', 'video', 'audio', 'document')),
  mime_type text not null,
  size_bytes bigint not null default 0 check (size_bytes >= 0),
  width integer,
  height integer,
  duration_seconds double precision,
  status text not null default 'processing' check (status in ('processing', 'ready', 'failed')),
  storage_key text not null,
  file_name text not null default '',
  alt text not null default '',
  title text not null default '',
  caption text not null default '',
  tags text[] not null default '{}',
  job_id uuid references jobs (id) on delete set null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index media_items_site_idx on media_items (site_id, created_at, id);
-- A job makes its media once, however often it is retried.
create unique index media_items_job_key on media_items (job_id, storage_key);
create trigger media_items_updated_at before update on media_items
  for each row execute function set_updated_at();

-- Inbound webhook deliveries already handled, by the sender's event id.
create table webhook_events (
  source text not null,
  event_id text not null,
  received_at timestamptz not null default now(),
  primary key (source, event_id)
);
