-- Pauses of the queue, set by global admins (api/admin-queue/router.ts): a
-- kind of job, or one tenant's jobs. Queued jobs of a paused kind or tenant
-- wait; running ones finish. Every worker process reads these rows (at start
-- and whenever core/jobs/pauses.ts notifies `queue_pauses`) and skips their
-- queue entries by flag (graphile-worker's forbiddenFlags; worker/queue-gate.ts).
create table queue_pauses (
  id uuid primary key default gen_random_uuid(),
  kind text unique,
  tenant_id uuid unique references tenants (id) on delete cascade,
  reason text not null default '',
  paused_by uuid references users (id) on delete set null,
  paused_at timestamptz not null default now(),
  constraint queue_pauses_one_target check ((kind is null) <> (tenant_id is null))
);

-- As 0034. A kind's pause (no tenant) is read in every scope: the worker's
-- and the admin's are '*', and a tenant's own jobs wait on it too.
alter table queue_pauses enable row level security;
create policy tenant_isolation on queue_pauses
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id is null
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);

-- Each run of a job is now flagged with its kind beside its tenant
-- (core/jobs/queue.ts), which is how a worker process takes only the kinds
-- of its pool (WORKER_KINDS). Entries queued before carry only the tenant:
-- they are given their kind here, so a pool that does not take it skips them.
-- (An entry without a kind flag, queued by an older API process during a
-- rolling deploy, is taken by any pool whose worker knows its kind.) On a new
-- database graphile-worker's schema comes after this migration, with nothing queued.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    update graphile_worker._private_jobs q
    set flags = coalesce(q.flags, '{}'::jsonb) || jsonb_build_object('kind:' || j.kind, true)
    from jobs j, graphile_worker._private_tasks t
    where t.id = q.task_id and t.identifier = 'job__run' and q.key = 'job:' || j.id
      and q.locked_at is null and not coalesce(q.flags, '{}'::jsonb) ? ('kind:' || j.kind);
  end if;
end $$;
