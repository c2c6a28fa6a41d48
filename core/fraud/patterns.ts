// Abuse patterns over a window, for global admins: what the sign-up screening
// saw (attempts by outcome and reason, the networks behind many of them, one
// mailbox behind several accounts), and tenants whose jobs fail or whose
// payments are refunded far more often than everyone's.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { timestamp } from '../timestamp.ts';

const rate = z.number().min(0).max(1);

export const abusePatternsSchema = z
  .object({
    window: z.object({ from: timestamp, to: timestamp }),
    signups: z.object({
      attempts: z.number().int(),
      allowed: z.number().int(),
      flagged: z.number().int(),
      blocked: z.number().int(),
      blocked_by_reason: z.array(z.object({ reason: z.string(), count: z.number().int() })),
    }),
    busy_networks: z
      .array(
        z.object({
          network: z.string(),
          attempts: z.number().int(),
          blocked: z.number().int(),
          accounts: z.number().int().describe('Accounts made from it'),
          addresses: z.number().int().describe('Distinct canonical addresses tried'),
          first_seen: timestamp,
          last_seen: timestamp,
        }),
      )
      .describe('Networks with at least 3 sign-up attempts, most first'),
    shared_mailboxes: z
      .array(z.object({ email_canonical: z.string(), accounts: z.number().int(), emails: z.array(z.string()) }))
      .describe('Canonical addresses behind more than one account, among accounts made in the window'),
    tenants: z
      .array(
        z.object({
          tenant_id: z.uuid(),
          name: z.string(),
          status: z.string(),
          jobs: z.number().int(),
          failed_jobs: z.number().int(),
          failure_rate: rate,
          payments: z.number().int(),
          refunded_payments: z.number().int(),
          refund_rate: rate,
          reasons: z.array(z.enum(['job_failures', 'refunds'])),
        }),
      )
      .describe(
        'Tenants whose job failure rate is at least 50% and three times everyone else’s (5 jobs or more), or whose refund rate is ' +
          'at least 50% (2 paid payments or more)',
      ),
    overall: z.object({ job_failure_rate: rate, refund_rate: rate }),
  })
  .meta({ id: 'AbusePatterns' });

export type AbusePatterns = z.infer<typeof abusePatternsSchema>;

export async function abusePatterns(db: CommonQueryMethods, hours: number): Promise<AbusePatterns> {
  const window = await db.one(sql.type(z.object({ from: timestamp, to: timestamp }))`
    select now() - make_interval(hours => ${hours}) as from, now() as to`);
  const since = sql.fragment`${window.from}::timestamptz`;
  const signups = await db.one(sql.type(
    z.object({ attempts: z.number(), allowed: z.number(), flagged: z.number(), blocked: z.number() }),
  )`
    select count(*)::int as attempts, count(*) filter (where outcome = 'allowed')::int as allowed,
      count(*) filter (where outcome = 'flagged')::int as flagged, count(*) filter (where outcome = 'blocked')::int as blocked
    from signup_screenings where created_at >= ${since}`);
  const byReason = await db.any(sql.type(z.object({ reason: z.string(), count: z.number() }))`
    select reason, count(*)::int as count from signup_screenings, unnest(reasons) as reason
    where outcome = 'blocked' and created_at >= ${since} group by reason order by count desc, reason`);
  const networks = await db.any(sql.type(abusePatternsSchema.shape.busy_networks.element)`
    select network, count(*)::int as attempts, count(*) filter (where outcome = 'blocked')::int as blocked,
      count(user_id)::int as accounts, count(distinct email_canonical)::int as addresses,
      min(created_at) as first_seen, max(created_at) as last_seen
    from signup_screenings where created_at >= ${since} and network is not null
    group by network having count(*) >= 3 order by attempts desc, network limit 20`);
  const mailboxes = await db.any(sql.type(abusePatternsSchema.shape.shared_mailboxes.element)`
    select email_canonical, count(*)::int as accounts, array_agg(email order by created_at) as emails
    from users
    where email_canonical in (select email_canonical from users where created_at >= ${since})
    group by email_canonical having count(*) > 1 order by accounts desc, email_canonical limit 20`);
  const overall = await db.one(sql.type(z.object({ job_failure_rate: z.number(), refund_rate: z.number() }))`
    select
      coalesce((select avg((status = 'failed')::int)::float8 from jobs
                where created_at >= ${since} and status in ('succeeded', 'failed')), 0) as job_failure_rate,
      coalesce((select avg((status in ('refunded', 'partially_refunded'))::int)::float8 from payments
                where created_at >= ${since} and status in ('paid', 'refunded', 'partially_refunded')), 0) as refund_rate`);
  const tenants = await db.any(sql.type(
    abusePatternsSchema.shape.tenants.element
      .omit({ reasons: true })
      .extend({ job_failures: z.boolean(), refunds: z.boolean() }),
  )`
    with j as (
      select tenant_id, count(*)::int as jobs, count(*) filter (where status = 'failed')::int as failed_jobs
      from jobs where created_at >= ${since} and status in ('succeeded', 'failed') group by tenant_id
    ), everyone as (
      select coalesce(sum(jobs), 0)::int as jobs, coalesce(sum(failed_jobs), 0)::int as failed_jobs from j
    ), p as (
      select tenant_id, count(*)::int as payments,
        count(*) filter (where status in ('refunded', 'partially_refunded'))::int as refunded_payments
      from payments where created_at >= ${since} and status in ('paid', 'refunded', 'partially_refunded') group by tenant_id
    ), rated as (
      select t.id as tenant_id, t.name, t.status, coalesce(j.jobs, 0) as jobs, coalesce(j.failed_jobs, 0) as failed_jobs,
        coalesce(j.failed_jobs::float8 / nullif(j.jobs, 0), 0) as failure_rate,
        -- Everyone else's failure rate: the tenant's own jobs would otherwise raise the bar it is measured against.
        coalesce((e.failed_jobs - j.failed_jobs)::float8 / nullif(e.jobs - j.jobs, 0), 0) as others_rate,
        coalesce(p.payments, 0) as payments, coalesce(p.refunded_payments, 0) as refunded_payments,
        coalesce(p.refunded_payments::float8 / nullif(p.payments, 0), 0) as refund_rate
      from tenants t cross join everyone e left join j on j.tenant_id = t.id left join p on p.tenant_id = t.id
      where j.tenant_id is not null or p.tenant_id is not null
    )
    select * from (
      select tenant_id, name, status, jobs, failed_jobs, failure_rate, payments, refunded_payments, refund_rate,
        jobs >= 5 and failure_rate >= greatest(0.5, 3 * others_rate) as job_failures,
        payments >= 2 and refund_rate >= 0.5 as refunds
      from rated
    ) judged
    where job_failures or refunds
    order by failure_rate + refund_rate desc, tenant_id limit 50`);
  return {
    window,
    signups: { ...signups, blocked_by_reason: [...byReason] },
    busy_networks: [...networks],
    shared_mailboxes: [...mailboxes],
    tenants: tenants.map(({ job_failures, refunds, ...tenant }) => ({
      ...tenant,
      reasons: [...(job_failures ? (['job_failures'] as const) : []), ...(refunds ? (['refunds'] as const) : [])],
    })),
    overall,
  };
}
