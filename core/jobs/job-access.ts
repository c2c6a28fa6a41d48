// Who a job that writes content acts as: its submitter, on its site. The
// route checked at submit what they may change (a translate: the master and
// its translation, an author only their own; an applied SEO text: that item;
// a website: the site's content, editors up), so the job carries that
// permission as an editor's for the writes it makes on their behalf
// (updated_by is theirs).
import type { JobRow } from './model.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { resolveSite, type SiteAccess } from '../tenancy/site-access.ts';
import type { Actor } from '../actor.ts';

export async function jobAccess(db: CommonQueryMethods, job: JobRow): Promise<SiteAccess | null> {
  const site = await resolveSite(db, job.site_id);
  if (!site) return null;
  const actor: Actor = job.user_id
    ? { kind: 'user', userId: job.user_id, sessionId: `job:${job.id}`, isGlobalAdmin: false }
    : {
        kind: 'service',
        serviceAccountId: job.actor_id ?? '',
        tenantId: job.tenant_id,
        scopes: ['content:write', 'media:write'],
      };
  return { actor, site, role: job.user_id ? 'editor' : 'service' };
}
