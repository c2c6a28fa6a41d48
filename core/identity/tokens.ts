// Signed tokens: HS256 pinned, with issuer, audience, expiry, id, subject and
// a `typ` claim, so a token minted for one purpose (an e-mail link, say) is
// never accepted for another.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';

export type TokenType = 'access' | 'email_verification' | 'password_reset';

const claims = z.object({
  typ: z.enum(['access', 'email_verification', 'password_reset']),
  sub: z.string(),
  jti: z.string(),
  iat: z.number(),
  exp: z.number(),
  iss: z.string(),
  aud: z.union([z.string(), z.array(z.string())]),
  sid: z.string().optional(),
  act: z.enum(['user', 'service']).optional(),
  tenant_id: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  /** Service accounts: the secret the token was issued for (secretFingerprint), so rotating it ends the token. */
  secret_fingerprint: z.string().optional(),
});

export type Claims = z.infer<typeof claims>;

type Extra = {
  sid?: string;
  act?: 'user' | 'service';
  tenant_id?: string;
  scopes?: string[];
  secret_fingerprint?: string;
};

const algorithm = 'HS256';

export function signToken(
  auth: Config['auth'],
  typ: TokenType,
  subject: string,
  ttlSeconds: number,
  extra: Extra = {},
) {
  const jti = randomUUID();
  const token = jwt.sign({ typ, ...extra }, auth.jwtSecret, {
    algorithm,
    issuer: auth.issuer,
    audience: auth.audience,
    subject,
    jwtid: jti,
    expiresIn: ttlSeconds,
  });
  return { token, jti, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
}

export const invalidToken = (detail = 'The token is missing, invalid or expired.') =>
  new Problem(401, detail, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });

/** Verifies signature, algorithm, issuer, audience, expiry and type; any failure is the same 401. */
export function verifyToken(auth: Config['auth'], token: string, typ: TokenType): Claims {
  let payload: unknown;
  try {
    payload = jwt.verify(token, auth.jwtSecret, {
      algorithms: [algorithm],
      issuer: auth.issuer,
      audience: auth.audience,
    });
  } catch {
    throw invalidToken();
  }
  const parsed = claims.safeParse(payload);
  if (!parsed.success || parsed.data.typ !== typ) throw invalidToken();
  return parsed.data;
}
