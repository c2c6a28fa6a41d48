-- Limits per AI provider, shared by every worker process: the requests sent
-- to a vendor in the current minute, the calls it has in flight, and how long
-- it asked everyone to wait (its last 429's Retry-After). A worker takes a
-- slot before each call (core/providers/limits.ts) and gives it back after;
-- a slot left by a worker that died is taken back once it is older than a
-- call can last. Not tenant data: no tenant_id, no row-level security.
create table provider_requests (
  vendor text not null,
  sent_at timestamptz not null default now()
);
create index provider_requests_vendor_idx on provider_requests (vendor, sent_at);

create table provider_slots (
  id bigint generated always as identity primary key,
  vendor text not null,
  job_id uuid,
  taken_at timestamptz not null default now()
);
create index provider_slots_vendor_idx on provider_slots (vendor, taken_at);

create table provider_blocks (
  vendor text primary key,
  until timestamptz not null
);

-- A run that found no free slot for its provider goes back to the queue
-- without counting as an attempt: its attempt row says it was deferred.
alter table job_attempts drop constraint job_attempts_outcome_check;
alter table job_attempts add constraint job_attempts_outcome_check
  check (outcome in ('succeeded', 'failed', 'retrying', 'waiting', 'lost', 'canceled', 'deferred'));
