-- API keys: long-lived bearer credentials an app can keep (core/identity/api-keys.ts),
-- made by a tenant's admins for one of the tenant's service accounts or one
-- of its members. A key acts as its holder, narrowed to its scopes and sites,
-- and never with more than the holder has now. Only the key's SHA-256 is
-- kept: the key is 240 random bits, so a slow hash would add nothing, and a
-- fast one lets every request find its key by an index lookup.
create table api_keys (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  service_account_id uuid references service_accounts (id) on delete cascade,
  user_id uuid references users (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  -- `cap_live_` or `cap_test_` and the key's last four characters, to tell keys apart in a list.
  prefix text not null,
  last_four text not null,
  secret_hash bytea not null unique,
  scopes text[] not null default '{}',
  -- null: every site of the tenant the holder reaches.
  site_ids uuid[],
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  expires_at timestamptz,
  constraint api_keys_one_holder check ((service_account_id is null) <> (user_id is null))
);
create index api_keys_tenant_id_idx on api_keys (tenant_id, created_at, id);
create index api_keys_service_account_id_idx on api_keys (service_account_id);
create index api_keys_user_id_idx on api_keys (user_id);

-- As 0034.
alter table api_keys enable row level security;
create policy tenant_isolation on api_keys
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);

-- As 0009: every API process keeps keys it has checked, and forgets them when
-- one is revoked (deleted) or narrowed. The last use changes often and takes
-- nothing away, so it is not watched.
create trigger api_keys_access_changed after update of expires_at, scopes, site_ids on api_keys
  for each statement execute function access_all_changed();
create trigger api_keys_access_deleted after delete on api_keys
  for each statement execute function access_all_changed();
