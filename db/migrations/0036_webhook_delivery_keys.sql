-- A job webhook delivery's queue entry is keyed by the delivery
-- (webhook:<id>, core/webhooks/announce.ts), so the workers' heartbeat can
-- find pending deliveries no entry can send any more — their task failed
-- each run and graphile-worker gave it up — instead of leaving them pending
-- for ever (core/webhooks/stranded.ts).
--
-- Entries queued before this change get their key here, one per delivery
-- (the newest, should a delivery have two). graphile-worker's schema exists
-- only after this project's migrations on a new database, which has none.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    update graphile_worker._private_jobs set key = 'webhook:' || (payload->>'webhook_id')
    where id in (
      select distinct on (j.payload->>'webhook_id') j.id
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'webhook__deliver' and j.key is null and j.payload->>'webhook_id' is not null
        and not exists (select 1 from graphile_worker._private_jobs k where k.key = 'webhook:' || (j.payload->>'webhook_id'))
      order by j.payload->>'webhook_id', j.id desc);
  end if;
end $$;

-- The sweep's look, on every heartbeat: only the pending deliveries, by when they are due.
create index job_webhooks_pending_idx on job_webhooks ((coalesce(next_attempt_at, created_at))) where status = 'pending';
