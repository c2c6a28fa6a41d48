// Links sent by e-mail (verify the address, reset the password): signed tokens
// of their own type, each recorded by id so it works once and until it expires.
// A reset link also works only while the password it was sent for is the
// account's (its row keeps a digest of that password's hash, migration 0038):
// a password changed any other way leaves the link behind.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, problemType } from '../errors.ts';
import { signToken, verifyToken } from './tokens.ts';

export type EmailPurpose = 'email_verification' | 'password_reset';

export const lifetimes: Record<EmailPurpose, number> = { email_verification: 24 * 3600, password_reset: 3600 };

export async function issueEmailToken(
  db: CommonQueryMethods,
  config: Config,
  userId: string,
  purpose: EmailPurpose,
): Promise<string> {
  // A new link replaces the old ones of the same purpose.
  await db.query(sql.typeAlias('void')`
    update email_tokens set used_at = now() where user_id = ${userId} and purpose = ${purpose} and used_at is null`);
  const { token, jti, expiresAt } = signToken(config.auth, purpose, userId, lifetimes[purpose]);
  await db.query(sql.typeAlias('void')`
    insert into email_tokens (jti, user_id, purpose, expires_at, password_digest)
    select ${jti}, id, ${purpose}, ${expiresAt.toISOString()},
           case when ${purpose} = 'password_reset' then password_hash_digest(password_hash) end
    from users where id = ${userId}`);
  return token;
}

const invalidLink = () =>
  new Problem(400, 'The link is invalid, expired or already used; ask for a new one.', {
    type: problemType('invalid-link'),
    title: 'Invalid link',
  });

/** The user the token was issued to; the token is spent. */
export async function consumeEmailToken(
  db: CommonQueryMethods,
  config: Config,
  token: string,
  purpose: EmailPurpose,
): Promise<string> {
  let claims;
  try {
    claims = verifyToken(config.auth, token, purpose);
  } catch {
    throw invalidLink();
  }
  const userId = await db.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`
    update email_tokens e set used_at = now()
    from users u
    where e.jti = ${claims.jti} and e.purpose = ${purpose} and e.user_id = ${claims.sub} and u.id = e.user_id
      and e.used_at is null and e.expires_at > now()
      and (e.purpose <> 'password_reset' or e.password_digest = password_hash_digest(u.password_hash))
    returning e.user_id`);
  if (!userId) throw invalidLink();
  return userId;
}
