// POST /admin/tenants/{tenant_id}/clone: the tenant, its sites and who may
// use them are made at once (core/tenancy/tenants.ts); their content follows
// as a tenant_clone job (./content-copy.ts, worker/jobs/tenant_clone.ts) on
// the copy's first site, queued in the same transaction, free of credits, its
// progress read like any job's. A tenant without sites has no content: no job.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { jobPath } from '../jobs/model.ts';
import { insertJob } from '../jobs/submit.ts';
import { siteColumns, siteSchema } from '../tenancy/sites.ts';
import { cloneTenant, tenantSchema, type NewTenant } from '../tenancy/tenants.ts';

export const cloneKind = 'tenant_clone';

export const tenantCloneSchema = tenantSchema
  .extend({
    copy_job_id: z
      .uuid()
      .nullable()
      .describe(
        'The tenant_clone job copying the content (content types, elements, pages, posts, media) into the new sites; ' +
          'null when the tenant has no sites',
      ),
    copy_job_url: z
      .string()
      .nullable()
      .describe('Where the job is read, with its progress: /{site_identifier}/jobs/{job_id} on the first new site'),
  })
  .meta({ id: 'TenantClone' });

export type TenantClone = z.infer<typeof tenantCloneSchema>;

/** The job's input: the source tenant and each site with its copy. */
export const cloneInput = z.object({
  source_tenant_id: z.uuid(),
  sites: z.array(z.object({ from: z.uuid(), to: z.uuid() })),
});

export async function cloneTenantWithContent(
  db: CommonQueryMethods,
  config: Config,
  actor: Actor,
  id: string,
  input: NewTenant,
): Promise<TenantClone> {
  return db.transaction(async (tx) => {
    const { tenant, sites } = await cloneTenant(tx, actor, id, input);
    const first = sites[0];
    if (!first) return { ...tenant, copy_job_id: null, copy_job_url: null };
    const site = await tx.one(sql.type(siteSchema)`select ${siteColumns} from sites where id = ${first.to}`);
    const job = await insertJob(tx, config, {
      site,
      actor,
      kind: cloneKind,
      input: { source_tenant_id: id, sites } satisfies z.infer<typeof cloneInput>,
      // A copy is no generation: no credits, whatever the tenant's mode.
      pricing: { accountId: null, cost: 0, unitPrice: 0 },
      testMode: false,
    });
    return { ...tenant, copy_job_id: job.id, copy_job_url: jobPath(site.slug, job.id) };
  });
}
