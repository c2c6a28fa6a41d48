// A job's own priority, asked for by the request that submits it (`priority`
// beside `webhook` on every job-creating route: api/jobs/webhook-fields.ts).
// It is added to its kind's priority (./priorities.ts) in each of its queue
// entries (./queue.ts): lower runs first, as graphile-worker orders them.
//
// Anyone who may submit may ask for a later turn (0 to 10). An earlier one
// (below 0) goes before other members' work, so it takes the tenant's
// administrators (global admins act as one) or a service account given the
// jobs:priority scope. Whatever the priority, a tenant starts no more jobs than
// its share of the slots (worker/tenant-slots.ts): an urgent job goes ahead of
// the jobs queued before it, but only into a slot its tenant's share allows,
// never one the share keeps for the other tenants.
import { z } from 'zod';
import { Problem } from '../errors.ts';
import type { Scope } from '../identity/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';

export const requestPriorityRange = { min: -10, max: 10 } as const;

/** The scope that lets a service account ask for an earlier turn. */
export const priorityScope: Scope = 'jobs:priority';

export const requestPriorityField = z
  .number()
  .int()
  .min(requestPriorityRange.min)
  .max(requestPriorityRange.max)
  .describe(
    `This job's priority, ${requestPriorityRange.min} to ${requestPriorityRange.max}, added to its kind's ` +
      '(`GET /admin/queue/kinds`): lower runs first, 0 by default. Anyone may ask for a later turn (above 0); ' +
      'an earlier one (below 0) takes a tenant administrator or a service account with the `jobs:priority` ' +
      'scope (403 otherwise). It orders the jobs of the tenant’s share of the workers and never widens that share.',
  );

/** The same as a multipart form's field: digits, with a minus sign for an earlier turn. */
export const requestPriorityFormField = z
  .string()
  .regex(/^-?\d{1,3}$/, 'must be a whole number from -10 to 10')
  .transform(Number)
  .pipe(requestPriorityField)
  .describe(requestPriorityField.description ?? '');

/** The priority the job is submitted at: the one asked for, if the caller may ask for it (403 otherwise); 0 when none. */
export function allowedPriority(access: Pick<SiteAccess, 'actor' | 'role'>, asked: number | undefined): number {
  const priority = asked ?? 0;
  if (priority >= 0) return priority;
  if (access.role === 'admin') return priority;
  if (access.actor.kind === 'service' && access.actor.scopes.includes(priorityScope)) return priority;
  throw new Problem(
    403,
    access.actor.kind === 'service'
      ? `A priority below 0 needs the ${priorityScope} scope.`
      : 'A priority below 0 takes an administrator of the tenant.',
  );
}
