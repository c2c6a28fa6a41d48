// Who may call an operation, in words and as `x-access`, for the OpenAPI
// document: read from the access the route declares (./route.ts), the same
// declaration the request path checks (./handle.ts, core/tenancy/site-access.ts),
// so the document cannot say otherwise than the server does.
import type { Scope } from '../core/identity/access.ts';
import type { SiteNeed } from '../core/tenancy/site-access.ts';
import type { Access } from './route.ts';

export type AccessDoc = {
  /** The route's declaration: its kind, or `site` with the role it needs there. */
  declared: Exclude<Access, SiteNeed> | 'site';
  site_role?: SiteNeed['site'];
  /** Whether a service account (with the scopes below) may call it. */
  service_accounts: boolean;
  /** The permissions (scopes) a service account, or an API key, needs: all of them. */
  scopes: Scope[];
};

const siteRoles: Record<SiteNeed['site'], string> = {
  read: 'administrators of the site’s tenant, and its editors and authors assigned to the site',
  write: 'administrators of the site’s tenant, and its editors and authors assigned to the site',
  manage: 'administrators of the site’s tenant, and its editors assigned to the site',
  admin: 'administrators of the site’s tenant, with their own token (not an API key)',
};

export function accessDoc(access: Access): AccessDoc {
  if (typeof access === 'object') {
    // Every site need asks sites:read of a service account first (requireSiteNeed); an admin need takes none.
    const service = access.site !== 'admin';
    return {
      declared: 'site',
      site_role: access.site,
      service_accounts: service,
      scopes: service ? ['sites:read', ...[access.scope ?? []].flat()] : [],
    };
  }
  return { declared: access, service_accounts: access === 'signed-in', scopes: [] };
}

/** `a`, `b` and `c`. */
const code = (scopes: Scope[]) =>
  scopes
    .map((scope) => `\`${scope}\``)
    .join(', ')
    .replace(/, ([^,]*)$/, ' and $1');

/** One line for the operation's description: who may call it, and what a service account needs. */
export function accessLine(access: Access): string {
  const doc = accessDoc(access);
  const who = (() => {
    switch (doc.declared) {
      case 'public':
        return 'anyone, without a token.';
      case 'public-site':
        return 'anyone, without a token, on a public site of a tenant in good standing.';
      case 'own-credentials':
        return 'the holder of the credentials this operation reads itself (see above).';
      case 'user':
        return 'any signed-in user, with their own token; not service accounts or API keys.';
      case 'global-admin':
        return 'global administrators only, with their own token.';
      case 'signed-in':
        return 'any signed-in user or service account; what it reaches is checked by the operation.';
      case 'site':
        return (
          `${siteRoles[doc.site_role!]}; global administrators; ` +
          (doc.service_accounts
            ? `service accounts of that tenant with ${code(doc.scopes)}; an API key needs the same scopes.`
            : 'not service accounts.')
        );
    }
  })();
  return `Who may call: ${who}`;
}
