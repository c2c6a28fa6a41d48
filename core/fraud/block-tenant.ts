// Blocking an abusive tenant, all in one transaction: the tenant is blocked
// (its members' memberships grant nothing from the next request on: the
// tenants trigger tells every API process to forget what it cached; a submit
// racing the block is refused by the job insert itself), its service accounts
// are disabled, its unfinished jobs are canceled with their
// reserved credits released (a running one's worker sees the cancel and
// stops), and who did it and why are recorded. A global admin's PATCH of the
// tenant to `blocked` does the same. Unblocking is the tenant's PATCH back to
// active; service accounts stay disabled until re-enabled.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { UserActor } from '../actor.ts';
import { conflict, notFound } from '../errors.ts';
import { finished } from '../jobs/model.ts';
import { cancelJobs } from '../jobs/cancel.ts';
import { timestamp } from '../timestamp.ts';

export const tenantBlockSchema = z
  .object({
    tenant_id: z.uuid(),
    status: z.literal('blocked'),
    blocked_at: timestamp,
    blocked_by: z.uuid(),
    reason: z.string(),
    service_accounts_disabled: z.number().int(),
    jobs_canceled: z
      .number()
      .int()
      .describe('Queued, waiting and running jobs canceled, their reserved credits released'),
  })
  .meta({ id: 'TenantBlock' });

/** The block of a tenant whose row the caller's transaction has locked, and which is not blocked yet. */
export async function blockLockedTenant(tx: CommonQueryMethods, actor: UserActor, tenantId: string, reason: string) {
  const blocked = await tx.one(sql.type(z.object({ blocked_at: timestamp }))`
    update tenants set status = 'blocked', blocked_at = now(), blocked_by = ${actor.userId}, blocked_reason = ${reason}
    where id = ${tenantId} returning blocked_at`);
  const disabled = await tx.oneFirst(sql.type(z.object({ count: z.number() }))`
    with disabled as (
      update service_accounts set status = 'disabled' where tenant_id = ${tenantId} and status = 'active' returning 1
    ) select count(*)::int as count from disabled`);
  // Every open job locked first, in one statement, before any credits move: a worker finishing
  // one of them holds its row and then wants its payer's account, so locking a job after
  // touching an account could deadlock with it.
  const open = await tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from jobs where tenant_id = ${tenantId} and status <> all(${sql.array([...finished], 'text')})
    order by id for update`);
  const canceled = await cancelJobs(tx, open, `Tenant blocked: ${reason}`);
  return {
    tenant_id: tenantId,
    status: 'blocked' as const,
    blocked_at: blocked.blocked_at,
    blocked_by: actor.userId,
    reason,
    service_accounts_disabled: disabled,
    jobs_canceled: canceled,
  };
}

export async function blockTenant(db: CommonQueryMethods, actor: UserActor, tenantId: string, reason: string) {
  return db.transaction(async (tx) => {
    const tenant = await tx.maybeOne(sql.type(z.object({ status: z.string() }))`
      select status from tenants where id = ${tenantId} for no key update`);
    if (!tenant) throw notFound('No such tenant.');
    if (tenant.status === 'blocked') throw conflict('The tenant is blocked already.');
    return blockLockedTenant(tx, actor, tenantId, reason);
  });
}
