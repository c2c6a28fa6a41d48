-- Security signals per minute and client network (an IPv6 client by its /64),
-- counted in each API process and written with the request statistics once a
-- minute, never a write per request: failed sign-ins (with the accounts they
-- tried), and answers of 401, 403, 404 and 405 (bad tokens, probing, scanning).
create table security_counts (
  minute timestamptz not null,
  kind text not null check (kind in ('login_failed', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed')),
  network text not null,
  count integer not null,
  -- Distinct accounts tried (failed sign-ins only), at most 50 per row.
  accounts text[] not null default '{}',
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  constraint security_counts_key primary key (minute, kind, network)
);
create index security_counts_network_idx on security_counts (network, minute);

-- Refresh-token replays are found by when their session was revoked.
create index sessions_revoked_idx on sessions (revoked_at) where revoked_at is not null;
