-- Where a worker process's pid means that process: the kernel's boot id and
-- the process's pid namespace (a container has its own), and when it started
-- (clock ticks since boot, so a pid reused by a later process is told apart).
-- A process sharing the scope sees at once whether its predecessor is gone,
-- and releases that one's runs without waiting WORKER_LOST_AFTER_MS.
alter table worker_processes
  add column pid_scope text,
  add column pid_started bigint;
