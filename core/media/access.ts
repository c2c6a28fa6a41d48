// Who may change what in a site's media library, stated once. Reading needs
// only to reach the site (service accounts: media:read), and changing
// media:write for service accounts; routes declare both. Beyond that,
// authors change only what they made.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';

/** Why the caller may not change something `createdBy` made, or null when they may. */
export function changeRefusal(access: SiteAccess, createdBy: string | null): 'missing_scope' | 'not_yours' | null {
  const { actor } = access;
  if (actor.kind === 'service' && !actor.scopes.includes('media:write')) return 'missing_scope';
  if (access.role === 'author' && actor.kind === 'user' && createdBy !== actor.userId) return 'not_yours';
  return null;
}

/** Authors change only what they made: 403, since they can see it. `what` names it: "the folders they made". */
export function requireOwnChange(access: SiteAccess, createdBy: string | null, what: string): void {
  if (changeRefusal(access, createdBy) === 'not_yours') throw new Problem(403, `Authors may change only ${what}.`);
}

/** A folder named in a request body: 422 at that field (not 404, since it is input) when it is not a folder of the site. */
export async function requireSiteFolder(
  db: CommonQueryMethods,
  siteId: string,
  folderId: string,
  field: 'folder_id' | 'parent_id',
): Promise<void> {
  const exists = await db.exists(
    sql.type(z.object({}))`select 1 from media_folders where site_id = ${siteId} and id = ${folderId}`,
  );
  if (!exists) {
    const detail =
      field === 'parent_id'
        ? 'The parent folder is not a folder of this site.'
        : 'The folder is not a folder of this site.';
    throw new Problem(422, detail, { errors: [{ path: `body.${field}`, message: 'no such folder in this site' }] });
  }
}
