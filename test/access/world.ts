// The cast of the access matrix: tenant A (with site A1) and tenant B, and one
// caller of each kind. Every request is built against tenant A's resources,
// so "other tenant admin" is the admin of B looking at A.
import { randomBytes } from 'node:crypto';
import { clientCredentials, createServiceAccount } from '../../core/identity/service-accounts.ts';
import { scopes } from '../../core/identity/access.ts';
import { startSession } from '../../core/identity/sessions.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { Tenant } from '../../core/tenancy/tenants.ts';
import type { TestApp } from '../helpers/app.ts';
import type { FakeStripe } from '../helpers/fake-stripe.ts';
import { withLocales } from '../helpers/content.ts';
import { assignToSite, newSite, newTenant, newUser } from '../helpers/factories.ts';

export const callers = [
  'anonymous',
  'author',
  'editor',
  'tenant_admin',
  'other_tenant_admin',
  'global_admin',
  'service_account',
] as const;
export type CallerName = (typeof callers)[number];

export type World = {
  t: TestApp;
  /** The fake Stripe the app talks to, for requests that need a paid checkout. */
  stripe: FakeStripe;
  tenantA: Tenant;
  tenantB: Tenant;
  siteA: Site;
  userIds: Partial<Record<CallerName, string>>;
  serviceAccount: { id: string; client_id: string; client_secret: string };
  /** Fresh credentials for one request, so a logout or refresh cannot affect the next. */
  credentials(caller: CallerName): Promise<{ access?: string; refresh?: string }>;
  unique(): string;
};

export async function buildWorld(t: TestApp, stripe: FakeStripe): Promise<World> {
  const unique = () => randomBytes(4).toString('hex');
  const tenantA = await newTenant(t, 'Tenant A');
  const tenantB = await newTenant(t, 'Tenant B');
  // A second locale, for the translations routes.
  const siteA = await withLocales(t, await newSite(t, tenantA), ['en', 'de']);
  const userIds: World['userIds'] = {};
  for (const [caller, tenant, role] of [
    ['author', tenantA, 'author'],
    ['editor', tenantA, 'editor'],
    ['tenant_admin', tenantA, 'admin'],
    ['other_tenant_admin', tenantB, 'admin'],
  ] as const) {
    const user = await newUser(t);
    await addMember(t.services.db, tenant.id, user.id, role);
    if (role !== 'admin') await assignToSite(t, siteA, user.id);
    userIds[caller] = user.id;
  }
  userIds.global_admin = (await newUser(t, { is_global_admin: true })).id;
  const serviceAccount = await createServiceAccount(
    t.services.db,
    { kind: 'user', userId: userIds.global_admin, sessionId: 'setup', isGlobalAdmin: true },
    { tenant_id: tenantA.id, name: 'matrix bot', scopes: [...scopes] },
  );
  return {
    t,
    stripe,
    tenantA,
    tenantB,
    siteA,
    userIds,
    serviceAccount,
    unique,
    async credentials(caller) {
      if (caller === 'anonymous') return {};
      if (caller === 'service_account') {
        const token = await clientCredentials(
          t.services.db,
          t.config,
          serviceAccount.client_id,
          serviceAccount.client_secret,
        );
        return { access: token.access_token };
      }
      const pair = await startSession(t.services.db, t.config, userIds[caller]!, {});
      return { access: pair.access_token, refresh: pair.refresh_token };
    },
  };
}
