// The cast of the media test files: tenants A and B (staffed), a global admin,
// two authors assigned to A's site, and service accounts of A that read media,
// write media, or have no media scope at all.
import type { TestApp } from './app.ts';
import { serviceAccount, signedIn, type Caller } from './factories.ts';
import { globalAdmin, staffedTenant, type Auth, type Staffed } from './identity.ts';

export type MediaCast = { a: Staffed; b: Staffed; admin: Caller; author: Caller; otherAuthor: Caller; reader: Auth; writer: Auth; noMediaScope: Auth };

export async function mediaCast(t: TestApp): Promise<MediaCast> {
  const a = await staffedTenant(t);
  const b = await staffedTenant(t);
  return {
    a,
    b,
    admin: await globalAdmin(t),
    author: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    otherAuthor: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    reader: (await serviceAccount(t, a.tenant, ['sites:read', 'media:read'], a.admin)).auth,
    writer: (await serviceAccount(t, a.tenant, ['sites:read', 'media:read', 'media:write'], a.admin)).auth,
    noMediaScope: (await serviceAccount(t, a.tenant, ['sites:read'], a.admin)).auth,
  };
}
