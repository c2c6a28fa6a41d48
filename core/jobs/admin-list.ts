// Every tenant's jobs for global admins, with the filters an operator reaches
// for when something is stuck: kind, state, tenant (by id, or by a part of
// its name or slug, as people remember it), site, user, age and error code.
// Each row carries its tenant's name and site's slug, so no UUID needs looking up.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { containing } from '../like-pattern.ts';
import { instantAs } from '../timestamp.ts';
import { adminJobSchema, toAdminJob } from './admin.ts';
import { orderedJobPage } from './list-order.ts';
import { jobColumns, jobRow } from './model.ts';
import { filters, jobListQuery } from './queries.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const adminJobQuery = jobListQuery.extend({
  tenant_id: z.uuid().optional(),
  tenant: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('A tenant’s id, or a part of its name or slug (case does not matter)'),
  site_id: z.uuid().optional(),
  site: z.string().trim().min(1).max(63).optional().describe('A site’s id or its slug'),
  user_id: z.uuid().optional(),
  max_age_hours: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 366)
    .optional()
    .describe('Only jobs created in the last N hours'),
  created_after: instantAs('Only jobs created at or after this instant').optional(),
  created_before: instantAs('Only jobs created before this instant').optional(),
  error_code: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/)
    .max(100)
    .optional()
    .describe('Only jobs whose error has this code (provider_rejected, invalid_input, ...)'),
});

export type AdminJobQuery = z.output<typeof adminJobQuery>;

/** The filters beside state and kind, which the bulk actions (core/jobs/bulk.ts) take too. */
export type AdminJobFilter = Pick<
  AdminJobQuery,
  'tenant_id' | 'site_id' | 'site' | 'user_id' | 'max_age_hours' | 'created_after' | 'created_before' | 'error_code'
>;

export const adminJobListItemSchema = adminJobSchema
  .extend({
    tenant_name: z.string().describe('The tenant’s name, for people'),
    site_slug: z.string().describe('The site’s slug, as in /{site_identifier}/'),
  })
  .meta({ id: 'AdminJobListItem' });

const listRow = jobRow.extend({ tenant_name: z.string(), site_slug: z.string() });

/**
 * The tenants `tenant` names: its id, or those whose name or slug holds it.
 * Read first, so the list's query has ids to match (one id walks that
 * tenant's own index) rather than a join the planner guesses badly.
 */
export async function tenantIds(db: CommonQueryMethods, tenant: string): Promise<readonly string[]> {
  if (uuidPattern.test(tenant)) return [tenant];
  return db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select id from tenants where name ilike ${containing(tenant)} or slug ilike ${containing(tenant)}`);
}

/** Each filter given, as one condition on jobs (`true` for none). */
export function adminFilters(query: AdminJobFilter, tenants: readonly string[] | null) {
  const conditions = [
    ...(query.tenant_id ? [sql.fragment`jobs.tenant_id = ${query.tenant_id}`] : []),
    ...(tenants
      ? [
          tenants.length === 1
            ? sql.fragment`jobs.tenant_id = ${tenants[0]!}`
            : sql.fragment`jobs.tenant_id = any(${sql.array(tenants, 'uuid')})`,
        ]
      : []),
    ...(query.site_id ? [sql.fragment`jobs.site_id = ${query.site_id}`] : []),
    ...(query.site
      ? [
          uuidPattern.test(query.site)
            ? sql.fragment`jobs.site_id = ${query.site}`
            : sql.fragment`jobs.site_id = (select id from sites where slug = ${query.site.toLowerCase()})`,
        ]
      : []),
    ...(query.user_id ? [sql.fragment`jobs.user_id = ${query.user_id}`] : []),
    ...(query.max_age_hours
      ? [sql.fragment`jobs.created_at > now() - make_interval(hours => ${query.max_age_hours})`]
      : []),
    ...(query.created_after ? [sql.fragment`jobs.created_at >= ${query.created_after}::timestamptz`] : []),
    ...(query.created_before ? [sql.fragment`jobs.created_at < ${query.created_before}::timestamptz`] : []),
    ...(query.error_code ? [sql.fragment`jobs.error->>'code' = ${query.error_code}`] : []),
  ];
  return sql.join([sql.fragment`true`, ...conditions], sql.fragment` and `);
}

export async function listAllJobs(db: CommonQueryMethods, actor: Actor, query: AdminJobQuery) {
  requireGlobalAdmin(actor);
  const tenants = query.tenant ? await tenantIds(db, query.tenant) : null;
  // Left joins on unique keys (a job's tenant and site always exist): the total's count(*) leaves them out.
  const matching = sql.fragment`
    select ${jobColumns}, tenants.name as tenant_name, sites.slug as site_slug
    from jobs left join tenants on tenants.id = jobs.tenant_id left join sites on sites.id = jobs.site_id
    where ${adminFilters(query, tenants)} ${filters(query)}`;
  const page = await orderedJobPage(db, listRow, matching, query);
  return {
    ...page,
    items: page.items.map((row) => ({ ...toAdminJob(row), tenant_name: row.tenant_name, site_slug: row.site_slug })),
  };
}
