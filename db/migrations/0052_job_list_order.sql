-- Job lists are read newest first as well as oldest first
-- (core/jobs/list-order.ts): the (…, created_at, id) indexes of 0005 serve
-- both, read backwards for newest first. What they did not serve is the
-- admin list filtered by state across every tenant, "failed, newest first":
-- it walked every job from the newest until it had a page of failures,
-- however rare they are. This index goes straight to them, and a cursor
-- within a state is a range of it. Progress reports do not touch its
-- columns, so they stay heap-only updates.
create index jobs_status_list_idx on jobs (status, created_at, id);
