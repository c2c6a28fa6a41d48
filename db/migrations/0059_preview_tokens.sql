-- Preview tokens (issue 41): a front end sends one as `Preview-Token` to the
-- public delivery endpoints of its site and reads drafts there, in the same
-- shape, never cached. Scoped to one site, short-lived (expires_at is
-- required), revoked by deletion. Only the SHA-256 of the token is kept.
create table preview_tokens (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  last_four text not null,
  secret_hash bytea not null unique,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index preview_tokens_site_idx on preview_tokens (site_id, created_at, id);
-- Expired tokens are removed by the maintenance cleanup (core/cleanup.ts).
create index preview_tokens_expires_idx on preview_tokens (expires_at);

-- As 0034.
alter table preview_tokens enable row level security;
create policy tenant_isolation on preview_tokens
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);
