-- Credits: an append-only ledger of entries, and per-account balances kept in
-- the same transaction as each entry. The checks on the balances make an
-- overdraft impossible, however many requests race for the same credits.

-- An account is a tenant's pool (site_id and user_id null) or a user's
-- credits on one site.
create table credit_accounts (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid,
  user_id uuid references users (id) on delete cascade,
  -- Credits held, reserved ones included; available = balance - reserved.
  balance bigint not null default 0 check (balance >= 0),
  reserved bigint not null default 0 check (reserved >= 0 and reserved <= balance),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  check ((site_id is null) = (user_id is null))
);
create unique index credit_accounts_pool_key on credit_accounts (tenant_id) where site_id is null;
create unique index credit_accounts_user_key on credit_accounts (site_id, user_id) where site_id is not null;
create trigger credit_accounts_updated_at before update on credit_accounts
  for each row execute function set_updated_at();

create table credit_entries (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  account_id uuid not null references credit_accounts (id) on delete cascade,
  site_id uuid,
  user_id uuid,
  kind text not null check (kind in ('grant', 'purchase', 'allocation', 'reservation', 'release', 'debit', 'refund', 'adjustment')),
  -- Change to the account's balance, and to its reserved credits.
  amount bigint not null,
  reserved_change bigint not null default 0,
  -- Both sides of a transfer (pool → user) share it.
  transfer_id uuid,
  job_id uuid,
  -- The job kind (speech, image, ...) an entry pays for, for usage reports.
  operation text,
  payment_id uuid,
  actor_id uuid,
  reason text not null default '' check (length(reason) <= 500),
  created_at timestamptz not null default now()
);
create index credit_entries_account_idx on credit_entries (account_id, created_at, id);
create index credit_entries_site_idx on credit_entries (site_id, created_at, id);
create index credit_entries_tenant_idx on credit_entries (tenant_id, kind, created_at);
-- A job is debited at most once: a constraint, not a check in code.
create unique index credit_entries_job_debit_key on credit_entries (job_id) where kind = 'debit';

-- Prices: global defaults (site_id null) and per-site overrides, by job kind.
create table cost_settings (
  id uuid primary key default gen_random_uuid(),
  site_id uuid references sites (id) on delete cascade,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]*$'),
  unit text not null check (unit in ('item', 'second', '1k_characters', '1k_tokens', 'page')),
  -- Credits per unit; a job's cost is rounded up to whole credits.
  price numeric(14, 4) not null check (price >= 0),
  description text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique nulls not distinct (site_id, kind)
);
create trigger cost_settings_updated_at before update on cost_settings
  for each row execute function set_updated_at();

insert into cost_settings (kind, unit, price, description) values
  ('speech', 'second', 1, 'Text to speech, per second of audio'),
  ('image', 'item', 10, 'Image generation, per image'),
  ('image_edit', 'item', 10, 'AI image edit, per image'),
  ('video', 'second', 5, 'Video generation, per second of video'),
  ('text', '1k_tokens', 2, 'Text generation, per 1,000 tokens'),
  ('translation', '1k_characters', 2, 'Translation, per 1,000 characters'),
  ('media_metadata', 'item', 1, 'Media metadata generation, per item'),
  ('website', 'item', 100, 'Website generation, per website'),
  ('pdf_import', 'page', 1, 'PDF import, per page'),
  ('url_import', 'item', 2, 'Import from a URL, per page fetched'),
  ('rag_index', '1k_characters', 1, 'Knowledge-base indexing, per 1,000 characters');

-- Idempotency-Key: the first answer to a (caller, route, key), replayed for a
-- repeat with the same body.
create table idempotency_keys (
  actor_id text not null,
  route text not null,
  key text not null,
  request_hash bytea not null,
  status integer,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (actor_id, route, key)
);
