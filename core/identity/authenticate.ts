// Turns an Authorization header into an Actor. The token's signature and
// claims are checked first, then the database: a revoked session, a blocked
// user or a disabled service account stops working at once, not at expiry.
import { z } from 'zod';
import { sql, type DatabasePool } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { invalidToken, verifyToken, type Claims } from './tokens.ts';

export function bearerToken(header: string | undefined): string {
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) throw invalidToken('Send a token in the Authorization header: Bearer <token>.');
  return match[1];
}

const userSession = z.object({ is_global_admin: z.boolean() });
const serviceAccount = z.object({ tenant_id: z.string(), scopes: z.array(z.string()) });

export async function authenticate(
  db: DatabasePool,
  config: Config,
  header: string | undefined,
): Promise<{ actor: Actor; claims: Claims }> {
  const claims = verifyToken(config.auth, bearerToken(header), 'access');
  if (claims.act === 'service') {
    const account = await db.maybeOne(sql.type(serviceAccount)`
      select a.tenant_id, a.scopes from service_accounts a join tenants t on t.id = a.tenant_id
      where a.id = ${claims.sub} and a.status = 'active' and t.status = 'active'`);
    if (!account) throw invalidToken('The service account is disabled or gone.');
    // The token's scopes were granted at issue; scopes removed since then no longer apply.
    const scopes = (claims.scopes ?? []).filter((scope) => account.scopes.includes(scope));
    return { actor: { kind: 'service', serviceAccountId: claims.sub, tenantId: account.tenant_id, scopes }, claims };
  }
  if (!claims.sid) throw invalidToken();
  const user = await db.maybeOne(sql.type(userSession)`
    select u.is_global_admin from sessions s join users u on u.id = s.user_id
    where s.id = ${claims.sid} and s.user_id = ${claims.sub}
      and s.revoked_at is null and s.expires_at > now() and u.status = 'active'`);
  if (!user) throw invalidToken('The session has ended; sign in again.');
  return {
    actor: { kind: 'user', userId: claims.sub, sessionId: claims.sid, isGlobalAdmin: user.is_global_admin },
    claims,
  };
}
