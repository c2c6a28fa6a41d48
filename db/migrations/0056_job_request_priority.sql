-- A job's own priority, asked for in its request (core/jobs/request-priority.ts):
-- -10 to 10, lower runs first, 0 when none was asked for. Its queue entries
-- run at its kind's priority (0053) plus this one, read by the statement
-- that adds each entry (core/jobs/queue.ts), so a retry or a requeue keeps
-- it. Which jobs a worker may take is still decided by the tenant's share of
-- the slots (worker/tenant-slots.ts): a tenant's urgent jobs overtake only
-- within it. A constant default: no table rewrite.
alter table jobs add column priority smallint not null default 0 check (priority between -10 and 10);
