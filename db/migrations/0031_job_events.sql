-- A job's insert is no longer announced on job_events: nobody can be waiting
-- for a job whose id they have not been given yet, and every notification
-- costs each listening session a wake-up.
create or replace function jobs_notify() returns trigger language plpgsql as $$
begin
  if new.status is distinct from old.status or new.progress is distinct from old.progress
     or new.stage is distinct from old.stage then
    perform pg_notify('job_events', json_build_object('id', new.id, 'status', new.status)::text);
  end if;
  return null;
end $$;
drop trigger jobs_notify on jobs;
create trigger jobs_notify after update on jobs
  for each row execute function jobs_notify();
