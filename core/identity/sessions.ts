// Sessions and their refresh-token families. A refresh token is exchanged once
// for a successor; presenting it again within a short grace (parallel
// requests, a lost answer) answers that same successor, so the family stays
// one chain. Presenting it later, or after its successor was exchanged in
// turn, means it leaked, and the whole session is revoked.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { digest, newSecret } from './secrets.ts';
import { invalidToken, signToken } from './tokens.ts';

/** Two requests racing with the same refresh token both succeed within this window. */
export const rotationGraceSeconds = 10;

export type TokenPair = { access_token: string; token_type: 'bearer'; expires_in: number; refresh_token: string };

export const tokenPairSchema = z
  .object({
    access_token: z.string().describe('JWT for the Authorization: Bearer header'),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().describe('Seconds until the access token expires'),
    refresh_token: z.string().describe('Opaque; send as the bearer to POST /auth/refresh-token'),
  })
  .meta({ id: 'TokenPair' });

export type SessionMeta = { userAgent?: string | undefined; ip?: string | undefined };

async function storeRefreshToken(db: CommonQueryMethods, sessionId: string, refreshToken: string): Promise<string> {
  await db.query(sql.typeAlias('void')`
    insert into refresh_tokens (token_hash, session_id) values (${sql.binary(digest(refreshToken))}, ${sessionId})`);
  return refreshToken;
}

/**
 * The token a refresh token is exchanged for: derived from it under a key of
 * the server's, so every exchange within the grace names the same successor
 * while only hashes are stored. Keyed, not a plain hash: whoever stole a
 * token could otherwise work out its successors and carry the chain on
 * without ever presenting the stolen one again.
 */
const successorOf = (config: Config, refreshToken: string): string =>
  `rt_${createHmac('sha256', config.auth.jwtSecret).update(`refresh token successor ${refreshToken}`).digest('base64url')}`;

function accessToken(config: Config, userId: string, sessionId: string): Omit<TokenPair, 'refresh_token'> {
  const { token } = signToken(config.auth, 'access', userId, config.auth.accessTokenTtlSeconds, {
    sid: sessionId,
    act: 'user',
  });
  return { access_token: token, token_type: 'bearer', expires_in: config.auth.accessTokenTtlSeconds };
}

/** Signs a user in: a new session and its first token pair. */
export async function startSession(
  db: CommonQueryMethods,
  config: Config,
  userId: string,
  meta: SessionMeta,
): Promise<TokenPair> {
  return db.transaction(async (tx) => {
    const sessionId = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into sessions (user_id, expires_at, user_agent, ip)
      values (${userId}, now() + make_interval(secs => ${config.auth.refreshTokenTtlSeconds}), ${meta.userAgent?.slice(0, 500) ?? null}, ${meta.ip ?? null})
      returning id`);
    return {
      ...accessToken(config, userId, sessionId),
      refresh_token: await storeRefreshToken(tx, sessionId, newSecret('rt_')),
    };
  });
}

const presented = z.object({
  session_id: z.string(),
  user_id: z.string(),
  rotated_seconds_ago: z.number().nullable(),
  usable: z.boolean(),
});

/** Exchanges a refresh token for a new pair; a replayed one revokes its session. */
export async function rotateRefreshToken(
  db: CommonQueryMethods,
  config: Config,
  refreshToken: string,
): Promise<TokenPair> {
  const outcome = await db.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(presented)`
      select s.id as session_id, s.user_id,
             extract(epoch from now() - r.rotated_at)::float8 as rotated_seconds_ago,
             (s.revoked_at is null and s.expires_at > now() and u.status = 'active') as usable
      from refresh_tokens r
      join sessions s on s.id = r.session_id
      join users u on u.id = s.user_id
      where r.token_hash = ${sql.binary(digest(refreshToken))}
      for update of r`);
    if (!row || !row.usable) return null;
    const successor = successorOf(config, refreshToken);
    // Whether the successor was exchanged too (null: not issued yet); locked, so its own exchange waits for this one.
    const successorSpent = await tx.maybeOneFirst(sql.type(z.object({ spent: z.boolean() }))`
      select rotated_at is not null as spent from refresh_tokens
      where token_hash = ${sql.binary(digest(successor))} and session_id = ${row.session_id}
      for update`);
    const late = row.rotated_seconds_ago !== null && row.rotated_seconds_ago > rotationGraceSeconds;
    if (late || successorSpent) {
      await revokeSession(tx, row.session_id, 'refresh token replayed');
      return 'replayed' as const;
    }
    await tx.query(sql.typeAlias('void')`
      update refresh_tokens set rotated_at = coalesce(rotated_at, now()) where token_hash = ${sql.binary(digest(refreshToken))}`);
    if (successorSpent === null) await storeRefreshToken(tx, row.session_id, successor);
    return { ...accessToken(config, row.user_id, row.session_id), refresh_token: successor };
  });
  if (outcome === 'replayed')
    throw invalidToken('This refresh token was already used; the session has been revoked. Sign in again.');
  if (!outcome) throw invalidToken('The refresh token is invalid, expired or revoked.');
  return outcome;
}

export async function revokeSession(db: CommonQueryMethods, sessionId: string, reason: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update sessions set revoked_at = now(), revoked_reason = ${reason} where id = ${sessionId} and revoked_at is null`);
}

/** Ends every session of the user, but `except` (the caller's own, when they changed their password). */
export async function revokeAllSessions(
  db: CommonQueryMethods,
  userId: string,
  reason: string,
  except?: string,
): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update sessions set revoked_at = now(), revoked_reason = ${reason}
    where user_id = ${userId} and revoked_at is null and id is distinct from ${except ?? null}::uuid`);
}
