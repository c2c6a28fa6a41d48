// "Who am I": the signed-in user with their tenants, roles and sites.
import { z } from 'zod';
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { activeMemberships, reachesSite, requireUser, roles } from './access.ts';
import { userSchema, userColumns } from './users.ts';

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

export const currentUserSchema = userSchema
  .extend({
    memberships: z.array(membershipView),
    sites: z.array(siteView).describe('Sites the user can reach, with their role there'),
  })
  .meta({ id: 'CurrentUser' });

/** The user with their memberships and sites, in one statement (it is asked on every page load of a client). */
export async function describeCurrentUser(
  db: CommonQueryMethods,
  actor: Actor,
): Promise<z.infer<typeof currentUserSchema>> {
  const caller = requireUser(actor);
  const found = await db.maybeOne(
    prepared(sql.type(currentUserSchema)`
    select ${userColumns},
      coalesce((
        select json_agg(json_build_object(
                 'tenant', json_build_object('id', t.id, 'name', t.name, 'slug', t.slug, 'status', t.status),
                 'role', m.role) order by t.name, t.id)
        from memberships m join tenants t on t.id = m.tenant_id where m.user_id = users.id), '[]') as memberships,
      coalesce((
        select json_agg(json_build_object('id', s.id, 'tenant_id', s.tenant_id, 'slug', s.slug, 'name', s.name, 'role', m.role)
                 order by s.name, s.id)
        from ${activeMemberships} join sites s on s.tenant_id = m.tenant_id
        where m.user_id = users.id and ${reachesSite(sql.identifier(['s', 'id']))}), '[]') as sites
    from users where users.id = ${caller.userId}`),
  );
  if (!found) throw notFound('No such user.');
  return found;
}
