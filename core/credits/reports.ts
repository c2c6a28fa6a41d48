// Reading the ledger of a site: its entries, its users' balances, usage per
// month, and totals. Administrators see everyone; other users themselves.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { requireUser } from '../identity/access.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';

export const entryKinds = [
  'grant',
  'purchase',
  'allocation',
  'reservation',
  'release',
  'debit',
  'refund',
  'adjustment',
  'expiry',
  'subscription',
] as const;

export const transactionSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(entryKinds),
    amount: z.number().int().describe('Change to the balance'),
    reserved_change: z.number().int().describe('Change to the reserved credits'),
    user_id: z.uuid().nullable(),
    job_id: z.uuid().nullable(),
    payment_id: z.uuid().nullable(),
    transfer_id: z.uuid().nullable(),
    actor_id: z.uuid().nullable(),
    reason: z.string(),
    expires_at: timestamp.nullable().describe('When the unspent rest of this grant expires; null: never'),
    created_at: timestamp,
  })
  .meta({ id: 'CreditTransaction' });

/** Whose entries the caller may read (null: everyone's): signed-in users only, their own unless they administer the tenant. */
function readable({ actor, role }: SiteAccess, userId?: string): string | null {
  const caller = requireUser(actor);
  if (role === 'admin') return userId ?? null;
  if (userId && userId !== caller.userId)
    throw new Problem(403, 'Only the tenant’s administrators may see other users’ credits.');
  return caller.userId;
}

export type TransactionQuery = PageQuery & {
  user_id?: string | undefined;
  kind?: (typeof entryKinds)[number] | undefined;
};

export async function listTransactions(db: CommonQueryMethods, access: SiteAccess, query: TransactionQuery) {
  const { site } = access;
  const only = readable(access, query.user_id);
  const where = sql.fragment`e.site_id = ${site.id}
    and ${only ? sql.fragment`e.user_id = ${only}` : sql.fragment`true`}
    and ${query.kind ? sql.fragment`e.kind = ${query.kind}` : sql.fragment`true`}`;
  const rows = await db.any(sql.type(transactionSchema)`
    select e.id, e.kind, e.amount, e.reserved_change, e.user_id, e.job_id, e.payment_id, e.transfer_id, e.actor_id, e.reason, e.expires_at, e.created_at
    from credit_entries e where ${where} and ${after(query, 'e')}
    order by e.created_at, e.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from credit_entries e where ${where}`));
}

export const userCreditsSchema = z
  .object({
    user_id: z.uuid(),
    email: z.string(),
    full_name: z.string(),
    balance: z.number().int(),
    reserved: z.number().int(),
    available: z.number().int(),
  })
  .meta({ id: 'UserCredits' });

/** Every member with access to the site, with their credits there (zero when they have none yet). */
export async function siteUserCredits(db: CommonQueryMethods, site: Site) {
  const rows = await db.any(sql.type(userCreditsSchema)`
    select u.id as user_id, u.email, u.full_name,
           coalesce(a.balance, 0)::int8 as balance, coalesce(a.reserved, 0)::int8 as reserved,
           (coalesce(a.balance, 0) - coalesce(a.reserved, 0))::int8 as available
    from memberships m join users u on u.id = m.user_id
    left join credit_accounts a on a.site_id = ${site.id} and a.user_id = u.id
    where m.tenant_id = ${site.tenant_id}
      and (m.role = 'admin' or a.id is not null or exists (select 1 from site_users su where su.site_id = ${site.id} and su.user_id = u.id))
    order by u.email`);
  return { items: [...rows] };
}

/** A calendar month, YYYY-MM: PostgreSQL has no year 0000 (it counts 1 BC, then 1 AD), so 0001-01 to 9999-12. */
export const month = z
  .string()
  .regex(
    /^(?:000[1-9]|00[1-9]\d|0[1-9]\d{2}|[1-9]\d{3})-(?:0[1-9]|1[0-2])$/,
    'a month from 0001-01 to 9999-12, such as 2026-11',
  )
  .describe('A month (UTC), YYYY-MM from 0001-01 to 9999-12; default the current one');

const usageRow = z.object({ key: z.string(), credits: z.number() });

/** Credits spent (debits net of refunds) in a calendar month (UTC), by job kind, by user and by day. */
export async function monthlyUsage(db: CommonQueryMethods, access: SiteAccess, wanted?: string) {
  const { site } = access;
  const only = readable(access);
  const label = wanted ?? new Date().toISOString().slice(0, 7);
  const start = `${label}-01T00:00:00Z`;
  const base = sql.fragment`
    e.site_id = ${site.id} and e.kind in ('debit', 'refund')
    and e.created_at >= ${start}::timestamptz and e.created_at < ${start}::timestamptz + interval '1 month'
    and ${only ? sql.fragment`e.user_id = ${only}` : sql.fragment`true`}`;
  const group = (key: ReturnType<typeof sql.fragment>) =>
    db.any(sql.type(usageRow)`
      select ${key} as key, (-sum(e.amount))::int8 as credits from credit_entries e where ${base} group by 1 order by 1`);
  const [byKind, byUser, byDay] = await Promise.all([
    group(sql.fragment`coalesce(e.operation, 'other')`),
    group(sql.fragment`coalesce(e.user_id::text, 'tenant')`),
    group(sql.fragment`to_char(e.created_at at time zone 'utc', 'YYYY-MM-DD')`),
  ]);
  const total = byDay.reduce((sum, row) => sum + row.credits, 0);
  const toRecord = (rows: readonly z.infer<typeof usageRow>[]) =>
    Object.fromEntries(rows.map((row) => [row.key, row.credits]));
  return { month: label, total, by_kind: toRecord(byKind), by_user: toRecord(byUser), by_day: toRecord(byDay) };
}

const statsRow = z.object({ kind: z.enum(entryKinds), entries: z.number(), amount: z.number() });

/** Totals per entry kind on the site, and what its accounts hold now. */
export async function transactionStats(db: CommonQueryMethods, access: SiteAccess) {
  const { site } = access;
  const only = readable(access);
  const who = only ? sql.fragment`user_id = ${only}` : sql.fragment`true`;
  const rows = await db.any(sql.type(statsRow)`
    select kind, count(*)::int as entries, sum(amount)::int8 as amount from credit_entries
    where site_id = ${site.id} and ${who} group by kind order by kind`);
  const held = await db.one(sql.type(z.object({ balance: z.number(), reserved: z.number(), accounts: z.number() }))`
    select coalesce(sum(balance), 0)::int8 as balance, coalesce(sum(reserved), 0)::int8 as reserved, count(*)::int as accounts
    from credit_accounts where site_id = ${site.id} and ${who}`);
  return {
    by_kind: Object.fromEntries(rows.map((row) => [row.kind, { entries: row.entries, amount: row.amount }])),
    accounts: held.accounts,
    balance: held.balance,
    reserved: held.reserved,
    available: held.balance - held.reserved,
  };
}
