-- Authentication: sessions with rotating refresh tokens, single-use e-mail
-- tokens, service accounts, OAuth sign-in, the e-mail outbox and the shared
-- rate-limit counters.

alter table tenants add column settings jsonb not null default '{}';
alter table sites add column settings jsonb not null default '{}';

-- A session is one sign-in; its refresh tokens form one rotation family.
-- Revoking the session ends every token of the family, access tokens included
-- (each request checks its session).
create table sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  user_agent text,
  ip text
);
create index sessions_user_id_idx on sessions (user_id);

-- Refresh tokens are random strings; only their SHA-256 is stored.
create table refresh_tokens (
  token_hash bytea primary key,
  session_id uuid not null references sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  -- Set when the token was exchanged; presenting it again after the grace
  -- window is a replay and revokes the session.
  rotated_at timestamptz
);
create index refresh_tokens_session_id_idx on refresh_tokens (session_id);

-- E-mail verification and password reset tokens are JWTs; their ids are
-- recorded here so each is used once.
create table email_tokens (
  jti uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('email_verification', 'password_reset')),
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index email_tokens_user_id_idx on email_tokens (user_id);

create table service_accounts (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  description text not null default '' check (length(description) <= 2000),
  scopes text[] not null default '{}',
  client_id text not null unique,
  -- SHA-256 of a 256-bit random secret: a slow hash adds nothing at that entropy.
  secret_hash bytea not null,
  status text not null default 'active' check (status in ('active', 'disabled')),
  created_by uuid references users (id) on delete set null,
  last_used_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index service_accounts_tenant_id_idx on service_accounts (tenant_id);
create trigger service_accounts_updated_at before update on service_accounts
  for each row execute function set_updated_at();

-- An external identity (OAuth/OpenID provider + subject) linked to a user.
create table user_identities (
  provider text not null,
  subject text not null,
  user_id uuid not null references users (id) on delete cascade,
  email text,
  created_at timestamptz not null default now(),
  primary key (provider, subject)
);
create index user_identities_user_id_idx on user_identities (user_id);

-- An OAuth sign-in in progress: state, PKCE verifier and nonce stay server-side.
create table oauth_states (
  state_hash bytea primary key,
  provider text not null,
  code_verifier text not null,
  nonce text not null,
  redirect_uri text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

-- Every e-mail the service sends; the email__send job delivers it by SMTP
-- when configured, and the row stays as the record (and the local inbox).
create table email_outbox (
  id uuid primary key default gen_random_uuid(),
  to_address text not null,
  subject text not null,
  text_body text not null,
  kind text not null,
  created_at timestamptz not null default now(),
  -- 'smtp', or 'log' where no SMTP server is configured (local use).
  delivered_via text,
  sent_at timestamptz,
  attempts integer not null default 0,
  last_error text
);

-- rate-limiter-flexible's PostgreSQL store (shared by every API process).
create table rate_limits (
  key varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
