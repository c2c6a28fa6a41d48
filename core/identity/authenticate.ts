// Turns an Authorization header into an Actor. The token's signature and
// claims are checked first, then the database: a revoked session, a blocked
// user, a disabled service account or one whose secret was rotated since the
// token was issued stops working at once, not at expiry:
// the access cache (../access-cache.ts) keeps these answers only until a change
// is announced.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { secretFingerprint } from './secrets.ts';
import { invalidToken, verifyToken, type Claims } from './tokens.ts';

export type Authenticated = { actor: Actor; claims: Claims };

export function bearerToken(header: string | undefined): string {
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) throw invalidToken('Send a token in the Authorization header: Bearer <token>.');
  return match[1];
}

/** The verified claims of the bearer access token in the header: 401 for anything else. */
export const accessClaims = (config: Config, header: string | undefined): Claims =>
  verifyToken(config.auth, bearerToken(header), 'access');

const liveSession = z.object({ is_global_admin: z.boolean(), expires_at: timestamp });
const activeAccount = z.object({
  tenant_id: z.string(),
  scopes: z.array(z.string()),
  secret_hash: z.instanceof(Buffer),
  test_mode: z.boolean(),
});

export type LiveSession = z.infer<typeof liveSession>;
export type ActiveAccount = { tenant_id: string; scopes: string[]; secret_fingerprint: string; test_mode: boolean };

/** The session, if it is live and its user active. */
export function findLiveSession(db: CommonQueryMethods, sessionId: string, userId: string) {
  return db.maybeOne(sql.type(liveSession)`
    select u.is_global_admin, s.expires_at from sessions s join users u on u.id = s.user_id
    where s.id = ${sessionId} and s.user_id = ${userId}
      and s.revoked_at is null and s.expires_at > now() and u.status = 'active'`);
}

/** The service account, if it and its tenant are active, with its current secret's fingerprint (never the secret's hash). */
export async function findActiveAccount(
  db: CommonQueryMethods,
  serviceAccountId: string,
): Promise<ActiveAccount | null> {
  const found = await db.maybeOne(sql.type(activeAccount)`
    select a.tenant_id, a.scopes, a.secret_hash, a.test_mode from service_accounts a join tenants t on t.id = a.tenant_id
    where a.id = ${serviceAccountId} and a.status = 'active' and t.status = 'active'`);
  return (
    found && {
      tenant_id: found.tenant_id,
      scopes: found.scopes,
      secret_fingerprint: secretFingerprint(found.secret_hash),
      test_mode: found.test_mode,
    }
  );
}

/** The caller the claims name, from what the database says of their session or account. */
export function actorOf(
  claims: Claims,
  found: { session?: LiveSession | null; account?: ActiveAccount | null },
): Authenticated {
  if (claims.act === 'service') {
    if (!found.account) throw invalidToken('The service account is disabled or gone.');
    if (claims.secret_fingerprint !== found.account.secret_fingerprint)
      throw invalidToken('The service account’s secret was rotated after this token was issued; ask for a new one.');
    // The token's scopes were granted at issue; scopes removed since then no longer apply.
    const scopes = (claims.scopes ?? []).filter((scope) => found.account!.scopes.includes(scope));
    return {
      actor: {
        kind: 'service',
        serviceAccountId: claims.sub,
        tenantId: found.account.tenant_id,
        scopes,
        testMode: found.account.test_mode,
      },
      claims,
    };
  }
  if (!claims.sid || !found.session) throw invalidToken('The session has ended; sign in again.');
  return {
    actor: { kind: 'user', userId: claims.sub, sessionId: claims.sid, isGlobalAdmin: found.session.is_global_admin },
    claims,
  };
}
