// What global admins read of the credits across tenants: the period's flows,
// every tenant's pool, a site's users and spend, every user's balances. All
// of it is summed from the ledger and the accounts it keeps.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { after, toPage, type PageQuery } from '../pagination.ts';
import { afterSorted, sortedCursor, type SortKey } from '../sorting.ts';
import { timestamp } from '../timestamp.ts';
import { userCreditsSchema } from './reports.ts';

export type Period = { from?: string | undefined; to?: string | undefined };

/** The period asked for, by default this calendar month (UTC). */
export function periodOf({ from, to }: Period): { from: string; to: string } {
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { from: from ?? start.toISOString(), to: to ?? end.toISOString() };
}

const flows = {
  granted: z.number().int().describe('Grants from outside the system (global admins)'),
  bought: z.number().int().describe('Credits of paid credit packages'),
  subscribed: z.number().int().describe('Monthly credits of subscription plans'),
  spent: z.number().int().describe('Debits for finished jobs'),
  reserved: z.number().int().describe('Reserved at job submission in the period'),
  expired: z.number().int().describe('Taken away when their grant expired'),
  taken_back: z.number().int().describe('Taken back after a payment was refunded'),
};
const flowsRow = z.object(flows);

const flowSums = sql.fragment`
  coalesce(sum(amount) filter (where kind = 'grant' and amount > 0), 0)::int8 as granted,
  coalesce(sum(amount) filter (where kind = 'purchase'), 0)::int8 as bought,
  coalesce(sum(amount) filter (where kind = 'subscription'), 0)::int8 as subscribed,
  coalesce(-sum(amount) filter (where kind = 'debit'), 0)::int8 as spent,
  coalesce(sum(reserved_change) filter (where kind = 'reservation'), 0)::int8 as reserved,
  coalesce(-sum(amount) filter (where kind = 'expiry'), 0)::int8 as expired,
  coalesce(-sum(amount) filter (where kind = 'adjustment' and payment_id is not null and amount < 0), 0)::int8 as taken_back`;

export const creditOverviewSchema = z
  .object({
    from: timestamp,
    to: timestamp,
    totals: flowsRow.extend({ reserved_now: z.number().int().describe('Held for jobs still running, now') }),
    top_tenants: z
      .array(flowsRow.extend({ tenant_id: z.uuid(), name: z.string() }))
      .describe('By credits spent, then bought'),
    by_kind: z.array(z.object({ kind: z.string(), spent: z.number().int(), jobs: z.number().int() })),
  })
  .meta({ id: 'CreditOverview' });

export async function creditOverview(db: CommonQueryMethods, period: Period, top: number) {
  const { from, to } = periodOf(period);
  const within = sql.fragment`created_at >= ${from}::timestamptz and created_at < ${to}::timestamptz`;
  const totals = await db.one(sql.type(flowsRow.extend({ reserved_now: z.number() }))`
    select ${flowSums}, (select coalesce(sum(reserved), 0)::int8 from credit_accounts) as reserved_now
    from credit_entries where ${within}`);
  const tenants = await db.any(sql.type(flowsRow.extend({ tenant_id: z.uuid(), name: z.string() }))`
    select e.tenant_id, t.name, e.granted, e.bought, e.subscribed, e.spent, e.reserved, e.expired, e.taken_back
    from (select tenant_id, ${flowSums} from credit_entries where ${within} group by tenant_id) e
    join tenants t on t.id = e.tenant_id
    order by e.spent desc, e.bought desc, t.name limit ${top}`);
  const kinds = await db.any(sql.type(z.object({ kind: z.string(), spent: z.number(), jobs: z.number() }))`
    select coalesce(operation, 'other') as kind, (-sum(amount))::int8 as spent, count(distinct job_id)::int as jobs
    from credit_entries where kind = 'debit' and ${within} group by 1 order by 2 desc, 1`);
  return { from, to, totals, top_tenants: [...tenants], by_kind: [...kinds] };
}

export const tenantCreditRowSchema = z
  .object({
    id: z.uuid().describe('The tenant'),
    name: z.string(),
    slug: z.string(),
    status: z.string(),
    balance: z.number().int().describe('The pool’s credits, reserved ones included'),
    reserved: z.number().int(),
    available: z.number().int(),
    monthly_limit: z.number().int().nullable(),
    allocated_this_month: z.number().int().describe('Moved from the pool to users this month'),
    spent_this_month: z.number().int().describe('Debited for the tenant’s jobs this month'),
    created_at: timestamp,
  })
  .meta({ id: 'TenantCreditRow' });

export const tenantSorts = {
  name: { column: 'name', cast: 'text' },
  created_at: { column: 'created_at', cast: 'timestamptz' },
  balance: { column: 'balance', cast: 'int8' },
  spent_this_month: { column: 'spent_this_month', cast: 'int8' },
} as const satisfies Record<string, SortKey>;

export type TenantCreditQuery = PageQuery & { sort: keyof typeof tenantSorts; order: 'asc' | 'desc' };

/** Every tenant's pool and this month's movements, a page at a time in the order asked. */
export async function allTenantCredits(db: CommonQueryMethods, query: TenantCreditQuery) {
  const sort = tenantSorts[query.sort];
  const descending = query.order === 'desc';
  const column = sql.identifier(['tc', sort.column]);
  const direction = descending ? sql.fragment`desc nulls last, tc.id desc` : sql.fragment`asc nulls first, tc.id`;
  const rows = await db.any(sql.type(tenantCreditRowSchema)`
    with month as (select date_trunc('month', now() at time zone 'utc') at time zone 'utc' as start)
    select * from (
      select t.id, t.name, t.slug, t.status, coalesce(a.balance, 0)::int8 as balance, coalesce(a.reserved, 0)::int8 as reserved,
             (coalesce(a.balance, 0) - coalesce(a.reserved, 0))::int8 as available, t.monthly_credit_limit as monthly_limit,
             coalesce((select -sum(e.amount) from credit_entries e, month
                       where e.account_id = a.id and e.kind = 'allocation' and e.amount < 0 and e.created_at >= month.start), 0)::int8
               as allocated_this_month,
             coalesce((select -sum(e.amount) from credit_entries e, month
                       where e.tenant_id = t.id and e.kind = 'debit' and e.created_at >= month.start), 0)::int8 as spent_this_month,
             t.created_at
      from tenants t left join credit_accounts a on a.tenant_id = t.id and a.site_id is null
    ) tc
    where ${afterSorted(query.cursor, 'tc', sort, descending)}
    order by ${column} ${direction} limit ${query.limit + 1}`);
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > query.limit && last ? sortedCursor(last, sort) : null };
}

export const siteCreditsSchema = z
  .object({
    site: z.object({ id: z.uuid(), tenant_id: z.uuid(), slug: z.string(), name: z.string() }),
    from: timestamp,
    to: timestamp,
    users: z.array(userCreditsSchema.extend({ spent: z.number().int().describe('In the period') })),
    spend_by_kind: z.array(z.object({ kind: z.string(), spent: z.number().int() })),
    totals: z.object({ balance: z.number().int(), reserved: z.number().int(), spent: z.number().int() }),
  })
  .meta({ id: 'SiteCreditDetails' });

/** A site's users with credits there, and what was spent on it in the period. */
export async function siteCreditDetails(db: CommonQueryMethods, siteId: string, period: Period) {
  const site = await db.maybeOne(sql.type(siteCreditsSchema.shape.site)`
    select id, tenant_id, slug, name from sites where id = ${siteId}`);
  if (!site) throw notFound('No such site.');
  const { from, to } = periodOf(period);
  const within = sql.fragment`e.created_at >= ${from}::timestamptz and e.created_at < ${to}::timestamptz`;
  const users = await db.any(sql.type(siteCreditsSchema.shape.users.element)`
    select u.id as user_id, u.email, u.full_name, a.balance, a.reserved, (a.balance - a.reserved)::int8 as available,
           coalesce((select -sum(e.amount) from credit_entries e where e.account_id = a.id and e.kind = 'debit' and ${within}), 0)::int8 as spent
    from credit_accounts a join users u on u.id = a.user_id
    where a.site_id = ${siteId} order by u.email`);
  const kinds = await db.any(sql.type(z.object({ kind: z.string(), spent: z.number() }))`
    select coalesce(e.operation, 'other') as kind, (-sum(e.amount))::int8 as spent
    from credit_entries e where e.site_id = ${siteId} and e.kind = 'debit' and ${within} group by 1 order by 2 desc, 1`);
  const sum = (pick: (row: (typeof users)[number]) => number) => users.reduce((total, row) => total + pick(row), 0);
  return {
    site,
    from,
    to,
    users: [...users],
    spend_by_kind: [...kinds],
    totals: {
      balance: sum((row) => row.balance),
      reserved: sum((row) => row.reserved),
      spent: sum((row) => row.spent),
    },
  };
}

export const userCreditSummarySchema = z
  .object({
    id: z.uuid().describe('The user'),
    email: z.string(),
    full_name: z.string(),
    balance: z.number().int().describe('Across every site'),
    reserved: z.number().int(),
    available: z.number().int(),
    sites: z.array(
      z.object({ site_id: z.uuid(), tenant_id: z.uuid(), balance: z.number().int(), reserved: z.number().int() }),
    ),
    created_at: timestamp,
  })
  .meta({ id: 'UserCreditSummary' });

/** Every user holding credits somewhere (or asked for by ?email), with their balance on each site. */
export async function allUserCredits(db: CommonQueryMethods, query: PageQuery & { email?: string | undefined }) {
  const rows = await db.any(sql.type(userCreditSummarySchema)`
    select u.id, u.email, u.full_name, coalesce(sum(a.balance), 0)::int8 as balance, coalesce(sum(a.reserved), 0)::int8 as reserved,
           coalesce(sum(a.balance - a.reserved), 0)::int8 as available,
           coalesce(json_agg(json_build_object('site_id', a.site_id, 'tenant_id', a.tenant_id, 'balance', a.balance, 'reserved', a.reserved)
                             order by a.created_at) filter (where a.id is not null), '[]') as sites,
           u.created_at
    from users u left join credit_accounts a on a.user_id = u.id
    where ${after(query, 'u')} and ${query.email ? sql.fragment`lower(u.email) = ${query.email.toLowerCase()}` : sql.fragment`exists (select 1 from credit_accounts x where x.user_id = u.id)`}
    group by u.id order by u.created_at, u.id limit ${query.limit + 1}`);
  return toPage([...rows], query);
}
