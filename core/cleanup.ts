// What has expired and can never be used again, removed by the hourly
// maintenance__cleanup task: rate-limit counters, OAuth states, spent e-mail
// links, and sessions that ended more than a week ago (their refresh tokens
// cascade), Idempotency-Keys after a day (clients retry within minutes, not
// days), handled webhook ids older than JOB_RETENTION_DAYS (finished jobs
// themselves go in batches: core/jobs/retention.ts),
// request and view statistics older than STATS_RETENTION_DAYS, and security
// signals, sign-up screenings and contact messages older than
// SECURITY_RETENTION_DAYS, and search documents' removals after a day
// (migration 0037: a process that has not caught up for that long reads the
// site afresh), and preview tokens once expired; elements' and pages' saved
// versions after CONTENT_SAVE_VERSIONS_DAYS (publishes and restores stay),
// and content webhook deliveries that ended more than JOB_RETENTION_DAYS ago,
// with their attempts (a job's deliveries go with the job).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../db/pool.ts';
import type { Config } from './config.ts';
import { pruneSaveSql } from './content/content-versions.ts';

const removedSchema = z.object({
  rate_limits: z.number(),
  oauth_states: z.number(),
  email_tokens: z.number(),
  sessions: z.number(),
  idempotency_keys: z.number(),
  webhook_events: z.number(),
  request_stats: z.number(),
  view_stats: z.number(),
  security_counts: z.number(),
  signup_screenings: z.number(),
  contact_messages: z.number(),
  search_removals: z.number(),
  preview_tokens: z.number(),
  content_versions: z.number(),
  content_deliveries: z.number(),
});

/** Removes it all in one statement and answers how many rows went from each table. */
export async function removeExpiredRows(
  db: CommonQueryMethods,
  config: Pick<Config, 'jobs' | 'retention'>,
): Promise<z.infer<typeof removedSchema>> {
  const retention = config.jobs.retentionDays;
  const { statsDays, securityDays, contentSaveDays } = config.retention;
  return db.one(sql.type(removedSchema)`
    with
      rate_limits as (delete from rate_limits where expire is not null and expire < (extract(epoch from now()) * 1000)::bigint returning 1),
      oauth_states as (delete from oauth_states where expires_at < now() returning 1),
      email_tokens as (delete from email_tokens where expires_at < now() - interval '7 days' returning 1),
      sessions as (delete from sessions where coalesce(revoked_at, expires_at) < now() - interval '7 days' returning 1),
      idempotency_keys as (delete from idempotency_keys where created_at < now() - interval '24 hours' returning 1),
      webhook_events as (delete from webhook_events where received_at < now() - ${retention} * interval '1 day' returning 1),
      request_stats as (delete from request_stats where minute < now() - ${statsDays} * interval '1 day' returning 1),
      view_stats as (delete from view_stats where day < current_date - ${statsDays}::int returning 1),
      security_counts as (delete from security_counts where minute < now() - ${securityDays} * interval '1 day' returning 1),
      signup_screenings as (delete from signup_screenings where created_at < now() - ${securityDays} * interval '1 day' returning 1),
      contact_messages as (delete from contact_messages where created_at < now() - ${securityDays} * interval '1 day' returning 1),
      search_removals as (delete from search_removals where removed_at < now() - interval '1 day' returning 1),
      preview_tokens as (delete from preview_tokens where expires_at < now() returning 1),
      content_versions as (${pruneSaveSql(contentSaveDays)} returning 1),
      content_deliveries as (delete from job_webhooks where subscription_id is not null and status <> 'pending'
                               and finished_at < now() - ${retention} * interval '1 day' returning 1)
    select (select count(*)::int from rate_limits) as rate_limits, (select count(*)::int from oauth_states) as oauth_states,
           (select count(*)::int from email_tokens) as email_tokens, (select count(*)::int from sessions) as sessions,
           (select count(*)::int from idempotency_keys) as idempotency_keys,
           (select count(*)::int from webhook_events) as webhook_events,
           (select count(*)::int from request_stats) as request_stats, (select count(*)::int from view_stats) as view_stats,
           (select count(*)::int from security_counts) as security_counts,
           (select count(*)::int from signup_screenings) as signup_screenings,
           (select count(*)::int from contact_messages) as contact_messages,
           (select count(*)::int from search_removals) as search_removals,
           (select count(*)::int from preview_tokens) as preview_tokens,
           (select count(*)::int from content_versions) as content_versions,
           (select count(*)::int from content_deliveries) as content_deliveries`);
}
