// "Who am I": the signed-in user with their tenants, roles and sites.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { activeMemberships, reachesSite, requireUser, roles } from './access.ts';
import { findUser, user } from './users.ts';

const membershipView = z.object({
  tenant: z.object({ id: z.uuid(), name: z.string(), slug: z.string(), status: z.string() }),
  role: z.enum(roles),
});

const siteView = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  role: z.enum(roles),
});

export const currentUser = user
  .extend({
    memberships: z.array(membershipView),
    sites: z.array(siteView).describe('Sites the user can reach, with their role there'),
  })
  .meta({ id: 'CurrentUser' });

export async function describeCurrentUser(db: CommonQueryMethods, actor: Actor): Promise<z.infer<typeof currentUser>> {
  const caller = requireUser(actor);
  const found = await findUser(db, caller.userId);
  if (!found) throw notFound('No such user.');
  const memberships = await db.any(sql.type(membershipView)`
    select json_build_object('id', t.id, 'name', t.name, 'slug', t.slug, 'status', t.status) as tenant, m.role
    from memberships m join tenants t on t.id = m.tenant_id
    where m.user_id = ${caller.userId} order by t.name, t.id`);
  const sites = await db.any(sql.type(siteView)`
    select s.id, s.tenant_id, s.slug, s.name, m.role from ${activeMemberships}
    join sites s on s.tenant_id = m.tenant_id
    where m.user_id = ${caller.userId} and ${reachesSite(sql.identifier(['s', 'id']))}
    order by s.name, s.id`);
  return { ...found, memberships: [...memberships], sites: [...sites] };
}
