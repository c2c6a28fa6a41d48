// Authentication: password login, token refresh and logout, who-am-I, and the
// OAuth 2.0 client-credentials grant for service accounts.
import { z } from 'zod';
import { timestamp } from '../../core/timestamp.ts';
import { Problem } from '../../core/errors.ts';
import { requireUser } from '../../core/identity/access.ts';
import { bearerToken } from '../../core/identity/authenticate.ts';
import { currentUserSchema, describeCurrentUser } from '../../core/identity/current-user.ts';
import { clientCredentials, clientTokenSchema } from '../../core/identity/service-accounts.ts';
import { revokeSession, rotateRefreshToken, startSession, tokenPairSchema } from '../../core/identity/sessions.ts';
import { checkCredentials } from '../../core/identity/users.ts';
import { noStore as noStoreHeaders, problemResponse, tooManyAttempts } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent } from '../schemas.ts';

const forms = ['application/x-www-form-urlencoded', 'application/json'] as const;
const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const login = z.object({
  username: z.string().min(1).max(320).describe('The user’s e-mail address'),
  password: z.string().min(1).max(1024),
  grant_type: z.literal('password').optional().describe('OAuth 2.0 password grant; "password" when sent'),
});

const tokenRequest = z.object({
  grant_type: z.literal('client_credentials'),
  client_id: z.string().min(1).max(200).optional().describe('Or HTTP Basic authentication'),
  client_secret: z.string().min(1).max(500).optional(),
  scope: z.string().max(1000).optional().describe('Space-separated subset of the account’s scopes'),
});

const tokenInfo = z
  .object({
    token_type: z.literal('access'),
    actor: z.enum(['user', 'service']),
    subject: z.string().describe('User id, or service account id'),
    session_id: z.string().nullable(),
    tenant_id: z.string().nullable().describe('For service accounts and API keys'),
    scopes: z.array(z.string()).nullable().describe('For service accounts and API keys'),
    token_id: z.string(),
    issuer: z.string(),
    audience: z.union([z.string(), z.array(z.string())]),
    issued_at: timestamp,
    expires_at: timestamp,
    expires_in: z.number().int(),
  })
  .meta({ id: 'TokenInfo' });

/** HTTP Basic credentials (RFC 6749 §2.3.1: each part form-encoded). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
  } catch {
    return undefined; // malformed percent-encoding: no usable credentials
  }
}

export const routes = [
  defineRoute({
    key: 'POST /auth/login',
    access: 'public',
    description:
      'Password sign-in (OAuth 2.0 password grant), as a form or JSON. A wrong address and a wrong password get the same 401. ' +
      'An unverified or blocked account gets 403 with type /problems/email-not-verified or /problems/account-blocked. Rate limited: all attempts per IP, failed ones per account (a success clears them).',
    request: { body: login, bodyTypes: [...forms] },
    responses: {
      200: { description: 'Signed in', schema: tokenPairSchema, headers: noStoreHeaders },
      401: problemResponse('The e-mail address or password is wrong'),
      403: problemResponse(
        'The account is not verified (/problems/email-not-verified) or blocked (/problems/account-blocked)',
      ),
      429: tooManyAttempts,
    },
    async handler({ body }, { db, services, ip }, { req }) {
      const userId = await services.rateLimits.attempt('login', ip, body.username, () =>
        checkCredentials(db, body.username, body.password),
      );
      const tokens = await startSession(db, services.config, userId, { ip, userAgent: req.get('user-agent') });
      return { headers: noStore, body: tokens };
    },
  }),

  defineRoute({
    key: 'POST /auth/refresh-token',
    access: 'own-credentials',
    description:
      'Send the refresh token as the bearer. Answers a new pair; the old refresh token is spent. Presenting a spent one again ' +
      'within a 10-second grace (parallel requests, a lost answer) answers the same successor it was exchanged for; later, or ' +
      'once that successor has been exchanged too, it revokes the whole session.',
    responses: {
      200: { description: 'A new token pair', schema: tokenPairSchema, headers: noStoreHeaders },
      401: problemResponse(
        'The refresh token is missing, invalid, expired or spent (a spent one revokes the session)',
        {
          'WWW-Authenticate': { description: 'Bearer error="invalid_token"', required: true },
        },
      ),
    },
    async handler(_input, { db, services }, { req }) {
      const tokens = await rotateRefreshToken(db, services.config, bearerToken(req.get('authorization')));
      return { headers: noStore, body: tokens };
    },
  }),

  defineRoute({
    key: 'POST /auth/logout',
    access: 'user',
    description: 'Ends the session: its refresh token stops working and its access tokens are refused from now on.',
    responses: noContent('Signed out'),
    async handler(_input, { db, actor }) {
      const user = requireUser(actor);
      await revokeSession(db, user.sessionId, 'logout');
      return {};
    },
  }),

  defineRoute({
    key: 'GET /auth/currentuser',
    access: 'user',
    description: 'The signed-in user with their tenant memberships (and roles) and the sites they can reach.',
    responses: { 200: { description: 'The current user', schema: currentUserSchema } },
    async handler(_input, { db, actor }) {
      return { body: await describeCurrentUser(db, actor) };
    },
  }),

  defineRoute({
    key: 'GET /auth/token-info',
    access: 'signed-in',
    description: 'The verified claims of the presented access token.',
    responses: { 200: { description: 'Token details', schema: tokenInfo } },
    async handler(_input, { claims, actor }) {
      if (!claims) throw new Problem(401);
      return {
        body: {
          token_type: 'access',
          actor: actor.kind,
          subject: claims.sub,
          session_id: claims.sid ?? null,
          tenant_id: actor.kind === 'service' ? actor.tenantId : (actor.apiKey?.tenantId ?? null),
          scopes: actor.kind === 'service' ? actor.scopes : (actor.apiKey?.scopes ?? null),
          token_id: claims.jti,
          issuer: claims.iss,
          audience: claims.aud,
          issued_at: new Date(claims.iat * 1000).toISOString(),
          expires_at: new Date(claims.exp * 1000).toISOString(),
          expires_in: Math.max(0, claims.exp - Math.floor(Date.now() / 1000)),
        },
      };
    },
  }),

  defineRoute({
    key: 'POST /auth/token',
    access: 'public',
    description:
      'OAuth 2.0 client-credentials grant for service accounts: client_id and client_secret in the body (form or JSON) or as HTTP Basic. ' +
      'The token is limited to the account’s tenant and scopes. Rate limited per IP and per client.',
    request: { body: tokenRequest, bodyTypes: [...forms] },
    responses: {
      200: { description: 'An access token', schema: clientTokenSchema, headers: noStoreHeaders },
      400: problemResponse('A scope the account does not have was asked for'),
      401: problemResponse('The client credentials are missing or wrong, or the account is disabled', {
        'WWW-Authenticate': { description: 'Basic realm="token" when no credentials were sent' },
      }),
      429: tooManyAttempts,
    },
    async handler({ body }, { db, services, ip }, { req }) {
      const basic = basicCredentials(req.get('authorization'));
      const id = basic?.id ?? body.client_id;
      const secret = basic?.secret ?? body.client_secret;
      if (!id || !secret) {
        throw new Problem(401, 'Send client_id and client_secret, in the body or as HTTP Basic.', {
          extensions: { error: 'invalid_client' },
          headers: { 'WWW-Authenticate': 'Basic realm="token"' },
        });
      }
      const requested = body.scope?.split(/\s+/).filter(Boolean);
      const token = await services.rateLimits.attempt('token', ip, id, () =>
        clientCredentials(db, services.config, id, secret, requested),
      );
      return { headers: noStore, body: token };
    },
  }),
];
