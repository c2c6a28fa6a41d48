-- The last time each kind of periodic worker job ran: /health reads it to tell
-- operators whether any worker is taking jobs at all.
create table worker_heartbeats (
  name text primary key,
  worker_id text not null,
  ran_at timestamptz not null default now()
);
