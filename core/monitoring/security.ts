// The security views for global admins, from what really happened: failed
// sign-ins and 401/403 answers counted per minute and client network
// (security_counts, written with the request statistics), the requests of the
// same hours (request_stats), refresh-token replays (sessions revoked for
// one), accounts locked by the credential limiter now (rate_limits), the
// sign-up screening (signup_screenings) and blocked tenants. Threat
// intelligence turns the same counts into the networks behind abuse patterns.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { timestamp } from '../timestamp.ts';

const count = z.number().int();
const rate = z.number().min(0).max(1).nullable().describe('Of all requests in the window; null without requests');
const windowSchema = z.object({ from: timestamp, to: timestamp });

export const securityDashboardSchema = z
  .object({
    window: windowSchema,
    failed_logins: z.object({
      total: count.describe('Failed password and client-credential checks'),
      accounts: count.describe('Distinct accounts tried'),
      networks: count.describe('Distinct client networks (an IPv6 client by its /64)'),
      per_hour: z.array(z.object({ hour: timestamp, count })),
    }),
    responses: z.object({
      requests: count,
      unauthorized: count.describe('401 answers'),
      forbidden: count.describe('403 answers'),
      unauthorized_rate: rate,
      forbidden_rate: rate,
      per_hour: z.array(z.object({ hour: timestamp, requests: count, unauthorized: count, forbidden: count })),
    }),
    refresh_token_replays: z.object({
      sessions_revoked: count.describe('Sessions revoked because a spent refresh token was presented again'),
      recent: z
        .array(z.object({ session_id: z.uuid(), user_id: z.uuid(), email: z.string(), revoked_at: timestamp }))
        .describe('The latest 20'),
    }),
    locked_accounts: z
      .array(
        z.object({
          action: z.string().describe('login or token'),
          account: z.string(),
          failures: count,
          locked_until: timestamp,
        }),
      )
      .describe('Accounts the credential limiter refuses now (RATE_LIMIT_AUTH_PER_ACCOUNT failures in the window)'),
    signups: z.object({ attempts: count, blocked: count, flagged: count }),
    blocked_tenants: z.array(
      z.object({
        tenant_id: z.uuid(),
        name: z.string(),
        blocked_at: timestamp.nullable(),
        blocked_by: z.uuid().nullable(),
        reason: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'SecurityDashboard' });

export type SecurityDashboard = z.infer<typeof securityDashboardSchema>;

async function windowOf(db: CommonQueryMethods, hours: number) {
  return db.one(sql.type(windowSchema)`select now() - make_interval(hours => ${hours}) as from, now() as to`);
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);

export async function securityDashboard(
  db: CommonQueryMethods,
  hours: number,
  accountLimit: number,
): Promise<SecurityDashboard> {
  const window = await windowOf(db, hours);
  const from = sql.fragment`${window.from}::timestamptz`;
  const hourly = await db.any(sql.type(
    z.object({ hour: timestamp, requests: count, unauthorized: count, forbidden: count, failed_logins: count }),
  )`
    with hours as (
      select generate_series(date_trunc('hour', ${from}), date_trunc('hour', now()), interval '1 hour') as hour
    ), signals as (
      select date_trunc('hour', minute) as hour,
        coalesce(sum(count) filter (where kind = 'unauthorized'), 0)::int as unauthorized,
        coalesce(sum(count) filter (where kind = 'forbidden'), 0)::int as forbidden,
        coalesce(sum(count) filter (where kind = 'login_failed'), 0)::int as failed_logins
      from security_counts where minute >= date_trunc('minute', ${from}) group by 1
    ), requests as (
      select date_trunc('hour', minute) as hour, sum(count)::int as requests
      from request_stats where minute >= date_trunc('minute', ${from}) group by 1
    )
    select hours.hour, coalesce(requests.requests, 0) as requests, coalesce(signals.unauthorized, 0) as unauthorized,
      coalesce(signals.forbidden, 0) as forbidden, coalesce(signals.failed_logins, 0) as failed_logins
    from hours left join signals using (hour) left join requests using (hour) order by hours.hour`);
  const failed = await db.one(sql.type(z.object({ accounts: count, networks: count }))`
    select (select count(distinct account) from security_counts, unnest(accounts) as account
            where kind = 'login_failed' and minute >= date_trunc('minute', ${from}))::int as accounts,
      count(distinct network)::int as networks
    from security_counts where kind = 'login_failed' and minute >= date_trunc('minute', ${from})`);
  const replayed = sql.fragment`sessions.revoked_at >= ${from} and sessions.revoked_reason = 'refresh token replayed'`;
  const replays = await db.oneFirst(sql.type(z.object({ count }))`
    select count(*)::int as count from sessions where ${replayed}`);
  const recentReplays = await db.any(sql.type(securityDashboardSchema.shape.refresh_token_replays.shape.recent.element)`
    select sessions.id as session_id, sessions.user_id, users.email, sessions.revoked_at
    from sessions join users on users.id = sessions.user_id
    where ${replayed} order by sessions.revoked_at desc limit 20`);
  const locked = await db.any(sql.type(securityDashboardSchema.shape.locked_accounts.element)`
    select split_part(key, ':', 2) as action, substr(key, length(split_part(key, ':', 2)) + 10) as account,
      points as failures, to_timestamp(expire / 1000.0) as locked_until
    from rate_limits
    where key like 'account:%' and points >= ${accountLimit} and expire > (extract(epoch from now()) * 1000)::bigint
    order by points desc, key limit 100`);
  const signups = await db.one(sql.type(securityDashboardSchema.shape.signups)`
    select count(*)::int as attempts, count(*) filter (where outcome = 'blocked')::int as blocked,
      count(*) filter (where outcome = 'flagged')::int as flagged
    from signup_screenings where created_at >= ${from}`);
  const blockedTenants = await db.any(sql.type(securityDashboardSchema.shape.blocked_tenants.element)`
    select id as tenant_id, name, blocked_at, blocked_by, blocked_reason as reason
    from tenants where status = 'blocked' order by blocked_at desc nulls last, name`);
  const sum = (field: 'requests' | 'unauthorized' | 'forbidden' | 'failed_logins') =>
    hourly.reduce((total, row) => total + row[field], 0);
  const requests = sum('requests');
  return {
    window,
    failed_logins: {
      total: sum('failed_logins'),
      ...failed,
      per_hour: hourly.map((row) => ({ hour: row.hour, count: row.failed_logins })),
    },
    responses: {
      requests,
      unauthorized: sum('unauthorized'),
      forbidden: sum('forbidden'),
      unauthorized_rate: ratio(sum('unauthorized'), requests),
      forbidden_rate: ratio(sum('forbidden'), requests),
      per_hour: hourly.map(({ hour, requests, unauthorized, forbidden }) => ({
        hour,
        requests,
        unauthorized,
        forbidden,
      })),
    },
    refresh_token_replays: { sessions_revoked: replays, recent: [...recentReplays] },
    locked_accounts: [...locked],
    signups,
    blocked_tenants: [...blockedTenants],
  };
}

/** The counts are compared as PostgreSQL integers: a threshold past int4 (?min_unauthorized=2147483648) failed the query. */
const maxThreshold = 2_147_483_647;

export const threatThresholdsSchema = z.object({
  min_accounts: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxThreshold)
    .default(3)
    .describe('Failed sign-ins across at least this many accounts from one network: credential stuffing'),
  min_not_found: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxThreshold)
    .default(20)
    .describe('At least this many 404 and 405 answers to one network: scanning'),
  min_unauthorized: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxThreshold)
    .default(20)
    .describe('At least this many 401 answers to one network: token guessing'),
  min_signups: z.coerce
    .number()
    .int()
    .min(1)
    .max(maxThreshold)
    .default(3)
    .describe('At least this many sign-up attempts from one network: a sign-up burst'),
});

export type ThreatThresholds = z.infer<typeof threatThresholdsSchema>;

const patterns = ['credential_stuffing', 'scanning', 'token_guessing', 'signup_burst'] as const;

export const threatIntelligenceSchema = z
  .object({
    window: windowSchema,
    thresholds: z.object({
      min_accounts: count,
      min_not_found: count,
      min_unauthorized: count,
      min_signups: count,
    }),
    networks: z
      .array(
        z.object({
          network: z.string().describe('An IPv4 address, or an IPv6 /64'),
          patterns: z.array(z.enum(patterns)),
          evidence: z.object({
            failed_logins: count,
            accounts_tried: count,
            not_found: count.describe('404 answers'),
            method_not_allowed: count.describe('405 answers'),
            unauthorized: count.describe('401 answers'),
            forbidden: count.describe('403 answers'),
            signups: count.describe('Sign-up attempts screened'),
            blocked_signups: count,
          }),
          first_seen: timestamp,
          last_seen: timestamp,
        }),
      )
      .describe('Networks behind at least one pattern, the most evidence first (at most 100)'),
  })
  .meta({ id: 'ThreatIntelligence' });

export type ThreatIntelligence = z.infer<typeof threatIntelligenceSchema>;

const evidenceRow = threatIntelligenceSchema.shape.networks.element.shape.evidence.extend({
  network: z.string(),
  first_seen: timestamp,
  last_seen: timestamp,
});

export async function threatIntelligence(
  db: CommonQueryMethods,
  hours: number,
  thresholds: ThreatThresholds,
): Promise<ThreatIntelligence> {
  const window = await windowOf(db, hours);
  const from = sql.fragment`${window.from}::timestamptz`;
  const { min_accounts, min_not_found, min_unauthorized, min_signups } = thresholds;
  const rows = await db.any(sql.type(evidenceRow)`
    with signals as (
      select network,
        coalesce(sum(count) filter (where kind = 'login_failed'), 0)::int as failed_logins,
        coalesce(sum(count) filter (where kind = 'not_found'), 0)::int as not_found,
        coalesce(sum(count) filter (where kind = 'method_not_allowed'), 0)::int as method_not_allowed,
        coalesce(sum(count) filter (where kind = 'unauthorized'), 0)::int as unauthorized,
        coalesce(sum(count) filter (where kind = 'forbidden'), 0)::int as forbidden,
        min(first_seen) as first_seen, max(last_seen) as last_seen
      from security_counts where minute >= date_trunc('minute', ${from}) group by network
    ), accounts as (
      select network, count(distinct account)::int as accounts_tried
      from security_counts, unnest(accounts) as account
      where kind = 'login_failed' and minute >= date_trunc('minute', ${from}) group by network
    ), signups as (
      select network, count(*)::int as signups, count(*) filter (where outcome = 'blocked')::int as blocked_signups,
        min(created_at) as first_seen, max(created_at) as last_seen
      from signup_screenings where created_at >= ${from} and network is not null group by network
    )
    select network,
      coalesce(signals.failed_logins, 0) as failed_logins, coalesce(accounts.accounts_tried, 0) as accounts_tried,
      coalesce(signals.not_found, 0) as not_found, coalesce(signals.method_not_allowed, 0) as method_not_allowed,
      coalesce(signals.unauthorized, 0) as unauthorized, coalesce(signals.forbidden, 0) as forbidden,
      coalesce(signups.signups, 0) as signups, coalesce(signups.blocked_signups, 0) as blocked_signups,
      least(signals.first_seen, signups.first_seen) as first_seen, greatest(signals.last_seen, signups.last_seen) as last_seen
    from signals full join signups using (network) left join accounts using (network)
    where coalesce(accounts.accounts_tried, 0) >= ${min_accounts}
      or coalesce(signals.not_found, 0) + coalesce(signals.method_not_allowed, 0) >= ${min_not_found}
      or coalesce(signals.unauthorized, 0) >= ${min_unauthorized}
      or coalesce(signups.signups, 0) >= ${min_signups}`);
  const networks = rows.map(({ network, first_seen, last_seen, ...evidence }) => {
    const found: (typeof patterns)[number][] = [];
    if (evidence.accounts_tried >= min_accounts) found.push('credential_stuffing');
    if (evidence.not_found + evidence.method_not_allowed >= min_not_found) found.push('scanning');
    if (evidence.unauthorized >= min_unauthorized) found.push('token_guessing');
    if (evidence.signups >= min_signups) found.push('signup_burst');
    return { network, patterns: found, evidence, first_seen, last_seen };
  });
  const weight = (entry: (typeof networks)[number]) => Object.values(entry.evidence).reduce((sum, n) => sum + n, 0);
  networks.sort((a, b) => weight(b) - weight(a) || a.network.localeCompare(b.network));
  return {
    window,
    thresholds: { min_accounts, min_not_found, min_unauthorized, min_signups },
    networks: networks.slice(0, 100),
  };
}
