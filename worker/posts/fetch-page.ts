// Fetching a user-given URL for a job, through the one SSRF-safe fetcher, with
// its refusals turned into job error codes: what can never succeed (a refused
// address, a URL that is not http(s), too many redirects, too large, a 4xx) is
// permanent; what may pass (a timeout, a failed connection, a 5xx or 429) is
// transient and retried with backoff.
import { safeFetch, SafeFetchError, type SafeFetchResult } from '../../core/net/safe-fetch.ts';
import { permanent, transient, type JobError } from '../../core/jobs/errors.ts';
import type { JobContext } from '../job.ts';

const transientCodes = new Set(['fetch-timeout', 'fetch-failed']);

function asJobError(error: SafeFetchError): JobError {
  const code = error.code.replaceAll('-', '_');
  return transientCodes.has(error.code) ? transient(code, error.message, error) : permanent(code, error.message, error);
}

export type PageRequest = {
  /** Conditional request headers (If-None-Match, If-Modified-Since) and Accept. */
  headers?: Record<string, string>;
  maxBytes?: number;
};

/** GET the URL under the job's fetch rules; 2xx and 304 are answered, any other status fails the job. */
export async function fetchForJob(
  url: string,
  context: JobContext,
  request: PageRequest = {},
): Promise<SafeFetchResult> {
  let result: SafeFetchResult;
  try {
    result = await safeFetch(url, {
      allowLoopback: context.config.fetch.allowLoopback,
      signal: context.signal,
      ...(context.resolve ? { resolve: context.resolve } : {}),
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.maxBytes ? { maxBytes: request.maxBytes } : {}),
    });
  } catch (error) {
    if (error instanceof SafeFetchError) throw asJobError(error);
    throw error;
  }
  const { status } = result;
  if ((status >= 200 && status < 300) || status === 304) return result;
  if (status === 429 || status >= 500) throw transient('fetch_failed', `The URL answered ${status}.`);
  throw permanent(
    status === 404 || status === 410 ? 'page_not_found' : 'fetch_rejected',
    `The URL answered ${status}.`,
  );
}
