// OAuth sign-up/sign-in: step one hands out the provider's authorization URL
// (or redirects to it) and sets the cookie that binds the sign-in to this
// browser; step two, called by the front end with the code the provider
// returned and that cookie, finishes the flow and answers tokens.
import type { Request } from 'express';
import { z } from 'zod';
import { finishOAuth, startOAuth, stateLifetimeSeconds } from '../../core/signup/oauth.ts';
import { providers } from '../../core/signup/oauth-accounts.ts';
import { tokenPairSchema } from '../../core/identity/sessions.ts';
import { notFound } from '../../core/errors.ts';
import { locationHeader, noStore, problemResponse, tooManyAttempts } from '../responses.ts';
import { defineRoute, type HeaderSpec, type Reply } from '../route.ts';

/** Sent only to the two sign-in routes, and never readable by scripts: it is the browser's proof that it started the sign-in. */
const cookieName = 'oauth_browser';
const cookiePath = '/auth/signup/oauth';

/** The sign-in cookie the request carries, if any. */
function browserCookie(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === cookieName) return part.slice(eq + 1).trim();
  }
  return undefined;
}

// Lax: sent when the front end (same site) posts the callback, not when another site does.
const setBrowserCookie = (value: string, secure: boolean) =>
  `${cookieName}=${value}; Path=${cookiePath}; Max-Age=${stateLifetimeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

const setCookieHeader: HeaderSpec = {
  description:
    `\`${cookieName}=<random>; Path=${cookiePath}; Max-Age=${stateLifetimeSeconds}; HttpOnly; SameSite=Lax\` (and \`Secure\` over https): ` +
    'binds the sign-in to this browser; POST /auth/signup/oauth/callback needs it back.',
  required: true,
};

const started = z
  .object({
    provider: z.enum(providers),
    authorization_url: z.url(),
    state: z.string(),
    expires_in: z.number().int().describe('Seconds the state stays valid'),
  })
  .meta({ id: 'OAuthStart' });

export const routes = [
  defineRoute({
    key: 'GET /auth/signup/oauth/{provider}',
    access: 'public',
    description:
      'Starts sign-in with `google` (any OpenID Connect issuer) or `github`: answers the authorization URL (PKCE, state and nonce kept server-side), ' +
      'or with ?redirect=true redirects to it. Sets the `oauth_browser` cookie that binds the sign-in to the browser that asked ' +
      '(a browser that has one from an earlier start keeps it, so sign-ins started side by side all finish); the callback needs it. ' +
      'An unknown or unconfigured provider is a 404.',
    request: {
      params: z.object({ provider: z.string().max(50) }),
      query: z.object({ redirect: z.enum(['true', 'false']).optional() }),
    },
    responses: {
      200: {
        description: 'Where to send the user',
        schema: started,
        headers: { ...noStore, 'Set-Cookie': setCookieHeader },
      },
      302: {
        description: 'Redirect to the provider (with ?redirect=true)',
        headers: {
          ...noStore,
          'Set-Cookie': setCookieHeader,
          Location: { ...locationHeader, description: 'The provider’s authorization URL' },
        },
      },
      404: problemResponse('No such provider, or it is not configured'),
      503: problemResponse('The identity provider does not answer'),
    },
    async handler({ params, query }, { db, services }, { req }): Promise<Reply> {
      const name = providers.find((candidate) => candidate === params.provider);
      if (!name) throw notFound(`No such provider; use one of ${providers.join(', ')}.`);
      const { browser, ...start } = await startOAuth(db, services.config, name, browserCookie(req));
      const headers = { 'Cache-Control': 'no-store', 'Set-Cookie': setBrowserCookie(browser, req.secure) };
      if (query.redirect === 'true') return { status: 302, headers: { ...headers, Location: start.authorization_url } };
      return { headers, body: start };
    },
  }),

  defineRoute({
    key: 'POST /auth/signup/oauth/callback',
    access: 'public',
    description:
      'Finishes the sign-in with the code and state the provider returned (and `iss`, when it sent one). The request must carry the ' +
      '`oauth_browser` cookie that GET /auth/signup/oauth/{provider} set: a browser sends it by itself from a page of the same site ' +
      '(from another origin, with `credentials: "include"` and that origin in CORS_ORIGINS); any other client keeps it from the start ' +
      'and sends it back, as a cookie jar does. Without it, or with another browser’s, the state is refused (400): nobody can ' +
      'finish their own sign-in in someone else’s browser. Links the identity to the user with that e-mail address, or creates ' +
      'one with a tenant of their own. An account whose address was never confirmed loses its password and sessions when linked ' +
      '(whoever registered it never proved the address), and the address is told by e-mail. An unknown, used or expired state is a 400.',
    request: {
      body: z.strictObject({
        provider: z.enum(providers).optional(),
        code: z.string().min(1).max(2000),
        state: z.string().min(1).max(200),
        iss: z.string().max(500).optional(),
      }),
      bodyTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
    responses: {
      200: {
        description: 'Signed in',
        schema: tokenPairSchema.extend({ created: z.boolean().describe('A new account was made') }),
        headers: noStore,
      },
      400: problemResponse(
        'The state is unknown, used, expired or not this browser’s (no or another `oauth_browser` cookie), or the provider refused or vouched for no address',
      ),
      403: problemResponse('The account is blocked, or a new account was refused by the sign-up screening'),
      404: problemResponse('Sign-in with that provider is not configured'),
      429: tooManyAttempts,
      503: problemResponse('The identity provider does not answer'),
    },
    async handler({ body }, { db, services, ip }, { req }) {
      await services.rateLimits.hit('oauth', ip);
      return {
        headers: { 'Cache-Control': 'no-store' },
        body: await finishOAuth(db, services.config, body, browserCookie(req), {
          ip,
          userAgent: req.get('user-agent'),
        }),
      };
    },
  }),
];
