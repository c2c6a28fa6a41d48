-- Fraud detection at sign-up, and blocking a tenant.

-- An address in its canonical form: lower case, without a +tag, and for
-- Gmail without dots (and googlemail.com as gmail.com), so the many spellings
-- of one mailbox are seen as one.
create function canonical_email(address text) returns text language sql immutable parallel safe as $$
  select case
    when domain in ('gmail.com', 'googlemail.com') then replace(split_part(local, '+', 1), '.', '') || '@gmail.com'
    else split_part(local, '+', 1) || '@' || domain
  end
  from (select lower(split_part(address, '@', 1)) as local, lower(split_part(address, '@', 2)) as domain) parts
$$;

alter table users add column email_canonical text generated always as (canonical_email(email)) stored;
create index users_email_canonical_idx on users (email_canonical);

-- Every sign-up attempt the screening saw (password and OAuth), what it
-- decided and why: the refused ones (blocked-signups), the allowed but
-- doubtful ones (suspicious-signups), and the rest, which the burst and
-- per-network limits count.
create table signup_screenings (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  email_canonical text not null,
  ip text,
  -- The client's network: the address itself for IPv4, its /64 for IPv6.
  network text,
  via text not null check (via in ('password', 'google', 'github')),
  outcome text not null check (outcome in ('allowed', 'flagged', 'blocked')),
  reasons text[] not null default '{}',
  score integer not null default 0,
  user_id uuid references users (id) on delete set null,
  created_at timestamptz not null default now()
);
create index signup_screenings_network_idx on signup_screenings (network, created_at);
create index signup_screenings_ip_idx on signup_screenings (ip, created_at);
create index signup_screenings_outcome_idx on signup_screenings (outcome, created_at, id);

-- Who blocked a tenant, when and why (unblocking is the tenant's PATCH back to active).
alter table tenants add column blocked_at timestamptz;
alter table tenants add column blocked_by uuid references users (id) on delete set null;
alter table tenants add column blocked_reason text;
