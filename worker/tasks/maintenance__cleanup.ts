// Hourly (see the worker's crontab): removes what has expired and can never
// be used again — rate-limit counters, OAuth states, spent e-mail links, and
// sessions that ended more than a week ago (their refresh tokens cascade),
// Idempotency-Keys after a day (clients retry within minutes, not days), and
// finished jobs and handled webhook ids older than JOB_RETENTION_DAYS.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({}).loose(),
  async run(_payload, { db, logger, config }) {
    const retention = config.jobs.retentionDays;
    const removed = await db.one(sql.type(
      z.object({
        rate_limits: z.number(),
        oauth_states: z.number(),
        email_tokens: z.number(),
        sessions: z.number(),
        idempotency_keys: z.number(),
        jobs: z.number(),
        webhook_events: z.number(),
      }),
    )`
      with
        rate_limits as (delete from rate_limits where expire is not null and expire < (extract(epoch from now()) * 1000)::bigint returning 1),
        oauth_states as (delete from oauth_states where expires_at < now() returning 1),
        email_tokens as (delete from email_tokens where expires_at < now() - interval '7 days' returning 1),
        sessions as (delete from sessions where coalesce(revoked_at, expires_at) < now() - interval '7 days' returning 1),
        idempotency_keys as (delete from idempotency_keys where created_at < now() - interval '24 hours' returning 1),
        jobs as (delete from jobs where finished_at < now() - ${retention} * interval '1 day' returning 1),
        webhook_events as (delete from webhook_events where received_at < now() - ${retention} * interval '1 day' returning 1)
      select (select count(*)::int from rate_limits) as rate_limits, (select count(*)::int from oauth_states) as oauth_states,
             (select count(*)::int from email_tokens) as email_tokens, (select count(*)::int from sessions) as sessions,
             (select count(*)::int from idempotency_keys) as idempotency_keys, (select count(*)::int from jobs) as jobs,
             (select count(*)::int from webhook_events) as webhook_events`);
    logger.info(removed, 'expired rows removed');
  },
});
