// A job webhook's `data` is the job as GET /{site}/jobs/{job_id} answers it,
// and so carries the URLs of the media it made (media_url, media_urls,
// media_urls_expire_at, core/media/urls.ts). They are added as each attempt
// is sent, not when the delivery is recorded: the events are recorded where
// no configuration is at hand (a job's settling, its cancel), and a signed
// URL recorded then could have expired by a retry hours later. The worker
// has no request to read a host from: the URLs are at PUBLIC_URL, else at
// the API's port on localhost (configuredBase).
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { configuredLinks, withJobFileUrls } from '../media/urls.ts';
import { resolveSite } from '../tenancy/site-access.ts';

type JobEvent = { data?: { site_id?: string; media_id?: string | null; media_ids?: string[] } };

/** The payload with its job's file URLs beside the media ids; a payload that carries no job is sent as recorded. */
export async function withFileUrls(db: CommonQueryMethods, config: Config, payload: string): Promise<string> {
  const event = JSON.parse(payload) as JobEvent;
  const job = event.data;
  if (!job?.site_id || job.media_id === undefined || !Array.isArray(job.media_ids)) return payload;
  const media = { media_id: job.media_id, media_ids: job.media_ids };
  // Most jobs make no media: theirs need no site read to say so.
  if (media.media_id === null && media.media_ids.length === 0) {
    return JSON.stringify({ ...event, data: { ...job, media_url: null, media_urls: [], media_urls_expire_at: null } });
  }
  // The job goes with its site: a delivery whose site is gone is gone too, and has nothing to link to.
  const site = await resolveSite(db, job.site_id);
  if (!site) return payload;
  return JSON.stringify({ ...event, data: withJobFileUrls(configuredLinks(config), site, { ...job, ...media }) });
}
