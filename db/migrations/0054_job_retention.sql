-- Finished jobs are deleted in batches past JOB_RETENTION_DAYS
-- (core/jobs/retention.ts). agent_messages.job_id is set to null on a job's
-- delete, and its only index was the partial one on assistant messages: each
-- deleted job read the whole table to find its user message. This one finds
-- them at once.
create index agent_messages_job_idx on agent_messages (job_id) where job_id is not null;
