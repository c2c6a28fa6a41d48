// How a job handler says what went wrong. A transient error (a provider timed
// out, answered 5xx or 429, broke off its answer) is retried with backoff
// while attempts remain — no sooner than the provider's Retry-After, when it
// sent one; a permanent one (the provider refused the input or answered
// garbage, nothing is configured) fails the job at once. A database that
// cannot be reached is transient too. Anything else thrown is a bug of ours:
// retried, then failed as internal_error, and logged.
import { isDatabaseUnavailable } from '../errors.ts';

export class JobError extends Error {
  override name = 'JobError';
  readonly code: string;
  readonly transient: boolean;
  /** How long the provider asked us to wait before trying again (its Retry-After). */
  readonly retryAfterMs: number | undefined;
  /** The provider's HTTP status, when it answered one (429: its limit, which the platform learns from). */
  readonly status: number | undefined;

  constructor(
    code: string,
    message: string,
    options: {
      transient: boolean;
      cause?: unknown;
      retryAfterMs?: number | undefined;
      status?: number | undefined;
    },
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.transient = options.transient;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }
}

export const permanent = (code: string, message: string, cause?: unknown) =>
  new JobError(code, message, { transient: false, cause });
export const transient = (code: string, message: string, cause?: unknown) =>
  new JobError(code, message, { transient: true, cause });

export function describe(error: unknown): JobError {
  if (error instanceof JobError) return error;
  if (isDatabaseUnavailable(error))
    return transient('database_unavailable', 'The database could not be reached; the job is retried.', error);
  return transient(
    'internal_error',
    'The job hit an unexpected error; it is retried, and the operators are told.',
    error,
  );
}

/**
 * Not a failure: the job's provider has no free slot (its limit, or the wait
 * its own 429 asked for). The run goes back to the queue, to run again after
 * `waitMs`, without counting as an attempt; `stage` says whom it waits for.
 */
export class Deferred extends Error {
  override name = 'Deferred';
  readonly waitMs: number;
  readonly stage: string;

  constructor(waitMs: number, stage: string) {
    super(`Waiting ${waitMs} ms: ${stage}`);
    this.waitMs = waitMs;
    this.stage = stage;
  }
}
