// Moving credits: grants from outside (global admins), allocation from a
// tenant's pool to its users on a site (tenant admins, within the tenant's
// monthly limit), and what each account holds.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorId, type Actor, type UserActor } from '../actor.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { requireUser, tenantRole } from '../identity/access.ts';
import { resolveSite, type SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { findTenant } from '../tenancy/tenants.ts';
import { applyEntry, poolAccount, readBalance, userAccount, type Balance } from './accounts.ts';
import { priceOf } from './prices.ts';

/** Credits go to members of the site's tenant; anyone else is, from here, unknown. */
async function requireMember(db: CommonQueryMethods, site: Site, userId: string): Promise<void> {
  const member = await db.exists(sql.type(z.object({}))`
    select 1 from memberships where tenant_id = ${site.tenant_id} and user_id = ${userId}`);
  if (!member) throw notFound('No such user in this site’s tenant.');
}

export type Movement = { user_id: string; amount: number; reason?: string | undefined };

/** A grant from outside may expire: its unspent rest leaves then (./expiry.ts). */
export type Grant = Movement & { expires_at?: string | undefined };

/** Global admins (the route lets only them in, and they reach every site) add credits to a user's account on a site, from outside the system. */
export async function grantToUser(
  db: CommonQueryMethods,
  actor: UserActor,
  siteIdentifier: string,
  movement: Grant,
): Promise<Balance> {
  return db.transaction(async (tx) => {
    const site = await resolveSite(tx, siteIdentifier);
    if (!site) throw notFound('No such site.');
    await requireMember(tx, site, movement.user_id);
    const account = await userAccount(tx, site, movement.user_id);
    return applyEntry(tx, {
      accountId: account,
      tenantId: site.tenant_id,
      siteId: site.id,
      userId: movement.user_id,
      kind: 'grant',
      amount: movement.amount,
      actorId: actorId(actor),
      reason: movement.reason ?? '',
      expiresAt: movement.expires_at ?? null,
    });
  });
}

const allocatedRow = z.object({ allocated: z.number(), limit: z.number().nullable() });

/** Credits moved out of the tenant's pool this calendar month (UTC), and the monthly limit. */
export async function monthlyAllocation(db: CommonQueryMethods, tenantId: string) {
  return db.one(sql.type(allocatedRow)`
    select coalesce((select -sum(e.amount) from credit_entries e join credit_accounts a on a.id = e.account_id
              where a.tenant_id = ${tenantId} and a.site_id is null and e.kind = 'allocation' and e.amount < 0
                and e.created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'), 0)::int8 as allocated,
           (select monthly_credit_limit from tenants where id = ${tenantId}) as limit`);
}

/** Tenant admins (the route lets only them in) move credits from the tenant's pool to a member's account on a site. */
export async function allocateFromTenant(db: CommonQueryMethods, { actor, site }: SiteAccess, movement: Movement) {
  requireUser(actor);
  return db.transaction(async (tx) => {
    await requireMember(tx, site, movement.user_id);
    // One allocation at a time per tenant, so two cannot both fit under the monthly limit.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext('credits:' || ${site.tenant_id}))`);
    const month = await monthlyAllocation(tx, site.tenant_id);
    if (month.limit !== null && month.allocated + movement.amount > month.limit) {
      throw new Problem(
        402,
        `The tenant's monthly limit of ${month.limit} credits would be exceeded (${month.allocated} allocated this month).`,
        {
          type: problemType('monthly-limit-exceeded'),
          title: 'Monthly limit exceeded',
          extensions: { monthly_limit: month.limit, allocated_this_month: month.allocated, requested: movement.amount },
        },
      );
    }
    const transferId = randomUUID();
    const common = {
      tenantId: site.tenant_id,
      kind: 'allocation' as const,
      transferId,
      actorId: actorId(actor),
      reason: movement.reason ?? '',
    };
    const pool = await applyEntry(tx, {
      ...common,
      accountId: await poolAccount(tx, site.tenant_id),
      amount: -movement.amount,
    });
    const user = await applyEntry(tx, {
      ...common,
      accountId: await userAccount(tx, site, movement.user_id),
      siteId: site.id,
      userId: movement.user_id,
      amount: movement.amount,
    });
    return { user, tenant_pool: pool };
  });
}

/** Global admins put credits into a tenant's pool, from outside the system. */
export async function allocateToTenant(
  db: CommonQueryMethods,
  actor: UserActor,
  grant: { tenantId: string; amount: number; reason: string; expiresAt?: string | undefined },
) {
  const { tenantId, amount, reason, expiresAt } = grant;
  return db.transaction(async (tx) => {
    if (!(await findTenant(tx, tenantId))) throw notFound('No such tenant.');
    const account = await poolAccount(tx, tenantId);
    await applyEntry(tx, {
      accountId: account,
      tenantId,
      kind: 'grant',
      amount,
      actorId: actorId(actor),
      reason,
      expiresAt: expiresAt ?? null,
    });
    return tenantCredits(tx, actor, tenantId);
  });
}

/** Global admins set (or, with null, lift) how much a tenant's admins may move to users per month. */
export async function setMonthlyLimit(
  db: CommonQueryMethods,
  actor: UserActor,
  tenantId: string,
  limit: number | null,
) {
  return db.transaction(async (tx) => {
    const updated = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      update tenants set monthly_credit_limit = ${limit} where id = ${tenantId} returning id`);
    if (!updated) throw notFound('No such tenant.');
    return tenantCredits(tx, actor, tenantId);
  });
}

export const tenantCreditsSchema = z
  .object({
    tenant_id: z.uuid(),
    pool: z.object({ balance: z.number().int(), reserved: z.number().int(), available: z.number().int() }),
    monthly_limit: z.number().int().nullable(),
    allocated_this_month: z.number().int(),
    remaining_this_month: z.number().int().nullable().describe('null: no monthly limit'),
  })
  .meta({ id: 'TenantCredits' });

/** A tenant's pool and monthly allocation: global admins, and the tenant's own admins. */
export async function tenantCredits(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
): Promise<z.infer<typeof tenantCreditsSchema>> {
  const role = await tenantRole(db, actor, tenantId);
  if (!role || !(await findTenant(db, tenantId))) throw notFound('No such tenant.');
  if (role !== 'admin') throw new Problem(403, 'Only the tenant’s administrators may see its credits.');
  const account = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    select id from credit_accounts where tenant_id = ${tenantId} and site_id is null`);
  const month = await monthlyAllocation(db, tenantId);
  return {
    tenant_id: tenantId,
    pool: await readBalance(db, account),
    monthly_limit: month.limit,
    allocated_this_month: month.allocated,
    remaining_this_month: month.limit === null ? null : Math.max(0, month.limit - month.allocated),
  };
}

/** A user's credits on a site: your own, or a member's when you administer the site. */
export async function userBalance(db: CommonQueryMethods, access: SiteAccess, userId?: string) {
  const { site, role } = access;
  const caller = requireUser(access.actor);
  const target = userId ?? caller.userId;
  if (target !== caller.userId) {
    if (role !== 'admin') throw new Problem(403, 'Only the tenant’s administrators may see other users’ credits.');
    await requireMember(db, site, target);
  }
  const account = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    select id from credit_accounts where site_id = ${site.id} and user_id = ${target}`);
  return { site, role, userId: target, balance: await readBalance(db, account) };
}

/** Your credits on the site with the tenant's monthly allocation; the pool itself only for tenant admins. */
export async function balanceWithTenant(db: CommonQueryMethods, access: SiteAccess, userId?: string) {
  const found = await userBalance(db, access, userId);
  const tenant = await findTenant(db, found.site.tenant_id);
  const month = await monthlyAllocation(db, found.site.tenant_id);
  const pool =
    found.role === 'admin'
      ? await readBalance(
          db,
          await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
          select id from credit_accounts where tenant_id = ${found.site.tenant_id} and site_id is null`),
        )
      : null;
  return {
    user_id: found.userId,
    user: found.balance,
    tenant: {
      id: found.site.tenant_id,
      name: tenant?.name ?? '',
      monthly_limit: month.limit,
      allocated_this_month: month.allocated,
      pool,
    },
  };
}

/** Whether the caller (or, for tenant admins, `userId`) can afford `units` of a kind of job on the site, and its quote. */
export async function affordability(
  db: CommonQueryMethods,
  access: SiteAccess,
  request: { kind: string; units: number; user_id?: string | undefined },
) {
  const found = await userBalance(db, access, request.user_id);
  const quote = await priceOf(db, access.site.id, request.kind, request.units);
  return { affordable: found.balance.available >= quote.cost, available: found.balance.available, quote };
}
