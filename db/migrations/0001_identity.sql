-- Identity and tenancy: the tables every later area hangs off.
-- Every tenant-owned row carries tenant_id, so the schema can be sharded by tenant.

create function set_updated_at() returns trigger
language plpgsql as $$
begin
  new.updated_at = now();
  return new;
end;
$$;

create table tenants (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 63),
  status text not null default 'active' check (status in ('active', 'suspended', 'blocked')),
  monthly_credit_limit bigint check (monthly_credit_limit >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create trigger tenants_updated_at before update on tenants
  for each row execute function set_updated_at();

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null check (position('@' in email) > 1 and length(email) <= 320),
  -- argon2id PHC string; null for accounts that only sign in through OAuth.
  password_hash text,
  full_name text not null default '' check (length(full_name) <= 200),
  is_global_admin boolean not null default false,
  email_verified boolean not null default false,
  status text not null default 'active' check (status in ('active', 'blocked')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- E-mail addresses are compared case-insensitively.
create unique index users_email_key on users (lower(email));
create trigger users_updated_at before update on users
  for each row execute function set_updated_at();

create table memberships (
  tenant_id uuid not null references tenants (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('admin', 'editor', 'author')),
  created_at timestamptz not null default now(),
  primary key (tenant_id, user_id)
);
create index memberships_user_id_idx on memberships (user_id);

create table sites (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  -- Slugs are global: /{site_identifier}/... addresses a site without its tenant.
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 63),
  name text not null check (length(name) between 1 and 200),
  default_locale text not null default 'en',
  locales text[] not null default '{en}',
  domain text unique,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (default_locale = any (locales)),
  -- Lets tenant-owned children reference (site_id, tenant_id) and so never
  -- point at another tenant's site.
  unique (id, tenant_id)
);
create index sites_tenant_id_idx on sites (tenant_id);
create trigger sites_updated_at before update on sites
  for each row execute function set_updated_at();

create table site_users (
  tenant_id uuid not null,
  site_id uuid not null,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (site_id, user_id),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index site_users_user_id_idx on site_users (user_id);
