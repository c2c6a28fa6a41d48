-- Outbound job webhooks (Standard Webhooks): the URL a job-creating request
-- named and the events it asked for, each tenant's signing secret, and every
-- delivery made with each of its attempts (core/jobs/webhooks.ts,
-- worker/tasks/webhook__deliver.ts).
alter table jobs
  add column webhook text,
  add column webhook_events text[] not null default '{}'
    check (webhook_events <@ array['start', 'progress', 'completed']);

-- One secret per tenant, made on first use. After a rotation the previous one
-- still signs (beside the new one) until previous_expires_at, so receivers
-- can switch without refusing deliveries meanwhile.
create table webhook_secrets (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  secret text not null,
  previous_secret text,
  previous_expires_at timestamptz,
  created_at timestamptz not null default now(),
  rotated_at timestamptz
);

-- One row per message: its id is the webhook-id every attempt sends, and its
-- payload the exact bytes signed, the same for every attempt.
create table job_webhooks (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  job_id uuid not null references jobs (id) on delete cascade,
  event text not null check (event in ('start', 'progress', 'completed')),
  url text not null,
  payload text not null,
  -- When the event happened: the job's start or end, or the progress read.
  occurred_at timestamptz not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index job_webhooks_job_idx on job_webhooks (job_id, created_at, id);
-- A run starts and ends once: the same start announced again (a run claimed
-- again after its worker was lost) adds nothing. A failed job retried by an
-- administrator starts and ends anew, at other times.
create unique index job_webhooks_once on job_webhooks (job_id, event, occurred_at) where event <> 'progress';

create table job_webhook_attempts (
  webhook_id uuid not null references job_webhooks (id) on delete cascade,
  tenant_id uuid not null references tenants (id) on delete cascade,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer not null,
  -- The receiver's answer; null when there was none (refused address, timeout, connection failed).
  response_status integer,
  -- Why it did not count as delivered: {code, message}.
  error jsonb,
  primary key (webhook_id, attempt)
);
