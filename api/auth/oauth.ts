// OAuth sign-up/sign-in: step one hands out the provider's authorization URL
// (or redirects to it); step two, called by the front end with the code the
// provider returned, finishes the flow and answers tokens.
import { z } from 'zod';
import { finishOAuth, providers, startOAuth } from '../../core/identity/oauth.ts';
import { tokenPairSchema } from '../../core/identity/sessions.ts';
import { notFound } from '../../core/errors.ts';
import { locationHeader, noStore, problemResponse, tooManyAttempts } from '../responses.ts';
import { defineRoute, type Reply } from '../route.ts';

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
      'or with ?redirect=true redirects to it. An unknown or unconfigured provider is a 404.',
    request: {
      params: z.object({ provider: z.string().max(50) }),
      query: z.object({ redirect: z.enum(['true', 'false']).optional() }),
    },
    responses: {
      200: { description: 'Where to send the user', schema: started, headers: noStore },
      302: {
        description: 'Redirect to the provider (with ?redirect=true)',
        headers: { ...noStore, Location: { ...locationHeader, description: 'The provider’s authorization URL' } },
      },
      404: problemResponse('No such provider, or it is not configured'),
      503: problemResponse('The identity provider does not answer'),
    },
    async handler({ params, query }, { db, services }): Promise<Reply> {
      const name = providers.find((candidate) => candidate === params.provider);
      if (!name) throw notFound(`No such provider; use one of ${providers.join(', ')}.`);
      const start = await startOAuth(db, services.config, name);
      if (query.redirect === 'true')
        return { status: 302, headers: { Location: start.authorization_url, 'Cache-Control': 'no-store' } };
      return { headers: { 'Cache-Control': 'no-store' }, body: start };
    },
  }),

  defineRoute({
    key: 'POST /auth/signup/oauth/callback',
    access: 'public',
    description:
      'Finishes the sign-in with the code and state the provider returned (and `iss`, when it sent one). Links the identity to the user with ' +
      'that verified e-mail address, or creates one with a tenant of their own. An unknown, used or expired state is a 400.',
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
      400: problemResponse('The state is unknown, used or expired, or the provider refused or vouched for no address'),
      403: problemResponse('The account is blocked, or a new account was refused by the sign-up screening'),
      404: problemResponse('Sign-in with that provider is not configured'),
      429: tooManyAttempts,
      503: problemResponse('The identity provider does not answer'),
    },
    async handler({ body }, { db, services, ip }, { req }) {
      await services.rateLimits.hit('oauth', ip);
      return {
        headers: { 'Cache-Control': 'no-store' },
        body: await finishOAuth(db, services.config, body, { ip, userAgent: req.get('user-agent') }),
      };
    },
  }),
];
