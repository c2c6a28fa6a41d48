// Whose subscription a /subscription request is about: the caller's tenant,
// or the one `?tenant_id=` names when the caller belongs to several. A
// tenant the caller does not belong to is not found (404), as everywhere.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, forbidden, notFound } from '../errors.ts';
import { activeMemberships, tenantRole, type Role } from '../identity/access.ts';
import { findTenant } from '../tenancy/tenants.ts';

export type Subscriber = { tenantId: string; role: Role | 'service' };

export const subscriberQuery = z.object({
  tenant_id: z.uuid().optional().describe('The tenant, when the caller belongs to several (global admins: any)'),
});

export async function resolveSubscriber(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string | undefined,
): Promise<Subscriber> {
  if (tenantId) {
    // Global admins reach every tenant, but only one that exists.
    const role = (await findTenant(db, tenantId)) ? await tenantRole(db, actor, tenantId) : null;
    if (!role) throw notFound('No such tenant.');
    return { tenantId, role };
  }
  if (actor.kind === 'service') return { tenantId: actor.tenantId, role: 'service' };
  const tenants = await db.any(sql.type(z.object({ tenant_id: z.uuid(), role: z.enum(['admin', 'editor', 'author']) }))`
    select m.tenant_id, m.role from ${activeMemberships} where m.user_id = ${actor.userId} order by m.tenant_id`);
  const [only] = tenants;
  if (tenants.length === 1 && only)
    return { tenantId: only.tenant_id, role: actor.isGlobalAdmin ? 'admin' : only.role };
  if (tenants.length === 0 && !actor.isGlobalAdmin) throw notFound('You belong to no tenant.');
  throw new Problem(422, 'Name the tenant: tenant_id is required when you belong to several tenants, or to none.', {
    errors: [{ path: 'query.tenant_id', message: 'required here' }],
    extensions: { tenant_ids: tenants.map((tenant) => tenant.tenant_id) },
  });
}

/** Changing what a tenant pays for is for its administrators (and global admins). */
export function requireBillingAdmin(subscriber: Subscriber): void {
  if (subscriber.role !== 'admin') throw forbidden('Only the tenant’s administrators may change its subscription.');
}
