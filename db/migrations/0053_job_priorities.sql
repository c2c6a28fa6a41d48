-- Priorities of the kinds of job, set by global admins
-- (api/admin-queue/router.ts): graphile-worker's priority, lower runs first,
-- 0 for a kind with no row. Each queue entry of a job reads its kind's row in
-- the statement that adds it (core/jobs/queue.ts), so a retry or a requeue
-- runs at the priority of the moment. Priority orders the jobs a worker may
-- take; which it may take is still decided by the tenant's share of the slots
-- (worker/tenant-slots.ts), so a tenant's high-priority kind cannot crowd out
-- another tenant. One row per kind rather than a column of cost_settings,
-- whose rows are per kind, unit and site.
create table job_kind_settings (
  kind text primary key,
  priority smallint not null default 0 check (priority between -100 and 100),
  updated_by uuid references users (id) on delete set null,
  updated_at timestamptz not null default now()
);
