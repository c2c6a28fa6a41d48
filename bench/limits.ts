// The benchmark signs in and asks far more often than a person would: every
// process it starts counts its requests against the limits (so their cost is
// measured) but never reaches them.
export const benchLimits = {
  RATE_LIMIT_AUTH_PER_ACCOUNT: '1000000',
  RATE_LIMIT_AUTH_PER_IP: '1000000',
  RATE_LIMIT_PER_IP: '1000000000',
  RATE_LIMIT_PER_TOKEN: '1000000000',
  RATE_LIMIT_JOBS_PER_TENANT: '1000000000',
  // DATABASE_APP_ROLE=app_user measures the processes as the role row-level security binds (migration 0034).
  ...(process.env.DATABASE_APP_ROLE ? { DATABASE_APP_ROLE: process.env.DATABASE_APP_ROLE } : {}),
};
