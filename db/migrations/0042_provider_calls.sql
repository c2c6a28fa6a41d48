-- Each call a job made to an AI provider: which vendor and model, when, for
-- how long, and how it ended. A chain that passes a job on (a 429, a 5xx, a
-- timeout) leaves one row per provider tried, so an admin sees who answered
-- what (GET /admin/jobs/{job_id}), and GET /admin/providers reads each
-- provider's recent errors and latency from the same rows.
create table provider_calls (
  id bigint generated always as identity primary key,
  job_id uuid not null references jobs (id) on delete cascade,
  tenant_id uuid not null,
  capability text not null,
  vendor text not null,
  model text not null,
  started_at timestamptz not null,
  duration_ms integer not null check (duration_ms >= 0),
  -- succeeded: it answered the work; pending: it took the work and will call back (its webhook);
  -- passed_on: it failed in a way that passes the job to the next provider (429, 5xx, timeout);
  -- failed: it failed the job; canceled: the job was canceled during the call.
  outcome text not null check (outcome in ('succeeded', 'pending', 'passed_on', 'failed', 'canceled')),
  error_code text,
  http_status integer
);

create index provider_calls_job_idx on provider_calls (job_id, id);
-- GET /admin/providers: a vendor's recent calls, newest first.
create index provider_calls_recent_idx on provider_calls (vendor, started_at desc);

alter table provider_calls enable row level security;
create policy tenant_isolation on provider_calls
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);
