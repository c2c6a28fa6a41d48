// Sign-up and sign-in through an external identity provider: authorization
// code flow with PKCE (openid-client). `google` is any OpenID Connect issuer
// (Google by default); `github` is GitHub's OAuth 2.0 plus its API for the
// verified e-mail. State, PKCE verifier and nonce are kept server-side and
// used once, and the state is bound to the browser that started the flow: the
// start hands that browser a random value (a cookie, api/auth/oauth.ts) and
// keeps its hash, and the callback finds the state only with that value. So
// nobody can start a sign-in into their own account and have someone else's
// browser finish it (login CSRF, RFC 9700 §4.7). Which account an identity
// signs into is ./oauth-accounts.ts.
import * as client from 'openid-client';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { screenSignup, screenedUser } from '../fraud/screening.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { isNewAccount, linkIdentity, providers, type ExternalIdentity, type ProviderName } from './oauth-accounts.ts';
import { digest, newSecret } from '../identity/secrets.ts';
import { startSession, type SessionMeta, type TokenPair } from '../identity/sessions.ts';

export const stateLifetimeSeconds = 600;

/** A browser's value from an earlier start is kept (another tab, a second start), so sign-ins begun side by side all finish. */
const browserValue = /^[A-Za-z0-9_-]{43}$/;

const configurations = new Map<string, Promise<client.Configuration>>();

/** Plain-http providers are for local tests only. */
function insecureAllowed(config: Config, url: string): boolean {
  return !config.production && new URL(url).protocol === 'http:';
}

function configuration(config: Config, name: ProviderName): Promise<client.Configuration> {
  const settings = config.oauth[name];
  if (!settings) {
    const variable = name === 'google' ? 'OAUTH_GOOGLE_CLIENT_ID' : 'OAUTH_GITHUB_CLIENT_ID';
    throw notFound(`Sign-in with ${name} is not configured (set ${variable}).`);
  }
  const key = `${name}:${settings.clientId}`;
  let pending = configurations.get(key);
  if (!pending) {
    if ('issuer' in settings) {
      const execute = insecureAllowed(config, settings.issuer) ? [client.allowInsecureRequests] : [];
      pending = client.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
        execute,
      });
    } else {
      const github = new client.Configuration(
        {
          issuer: settings.baseUrl,
          authorization_endpoint: `${settings.baseUrl}/login/oauth/authorize`,
          token_endpoint: `${settings.baseUrl}/login/oauth/access_token`,
        },
        settings.clientId,
        settings.clientSecret,
      );
      if (insecureAllowed(config, settings.baseUrl)) client.allowInsecureRequests(github);
      pending = Promise.resolve(github);
    }
    // A failed discovery is retried next time rather than remembered.
    pending.catch(() => configurations.delete(key));
    configurations.set(key, pending);
  }
  return pending.catch((error: Error) => {
    throw new Problem(503, `The ${name} identity provider does not answer: ${error.message}`);
  });
}

export const redirectUri = (config: Config) =>
  config.oauth.redirectUri ?? `${config.publicUrl ?? `http://localhost:${config.port}`}/auth/signup/oauth/callback`;

/** Starts a sign-in for the browser holding `browser` (the value it already has, if any); answers the value it must hold. */
export async function startOAuth(
  db: CommonQueryMethods,
  config: Config,
  name: ProviderName,
  browser: string | undefined,
) {
  const provider = await configuration(config, name);
  const state = newSecret();
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const redirect = redirectUri(config);
  const binding = browser && browserValue.test(browser) ? browser : newSecret();
  await db.query(sql.typeAlias('void')`
    insert into oauth_states (state_hash, browser_hash, provider, code_verifier, nonce, redirect_uri, expires_at)
    values (${sql.binary(digest(state))}, ${sql.binary(digest(binding))}, ${name}, ${verifier}, ${nonce}, ${redirect},
            now() + make_interval(secs => ${stateLifetimeSeconds}))`);
  const url = client.buildAuthorizationUrl(provider, {
    redirect_uri: redirect,
    scope: name === 'github' ? 'read:user user:email' : 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(name === 'github' ? {} : { nonce }),
  });
  return { provider: name, authorization_url: url.href, state, expires_in: stateLifetimeSeconds, browser: binding };
}

const pending = z.object({
  provider: z.enum(providers),
  code_verifier: z.string(),
  nonce: z.string(),
  redirect_uri: z.string(),
  live: z.boolean(),
});

const badState = (
  detail = 'The sign-in state is unknown, used, expired or was started in another browser; start again.',
) => new Problem(400, detail, { type: problemType('invalid-oauth-state'), title: 'Invalid OAuth state' });

export type Callback = { provider?: ProviderName | undefined; code: string; state: string; iss?: string | undefined };

/** Finishes the sign-in `callback` names, in the browser holding `browser` (the value its start handed out). */
export async function finishOAuth(
  db: CommonQueryMethods,
  config: Config,
  callback: Callback,
  browser: string | undefined,
  meta: SessionMeta,
): Promise<TokenPair & { created: boolean }> {
  if (!browser)
    throw badState('This browser did not start the sign-in (the cookie its start set was not sent); start again.');
  // The state is spent whatever happens next; a state sent from another browser is left for its own.
  const flow = await db.maybeOne(sql.type(pending)`
    delete from oauth_states
    where state_hash = ${sql.binary(digest(callback.state))} and browser_hash = ${sql.binary(digest(browser))}
    returning provider, code_verifier, nonce, redirect_uri, expires_at > now() as live`);
  if (!flow || !flow.live || (callback.provider && callback.provider !== flow.provider)) throw badState();
  const provider = await configuration(config, flow.provider);
  const current = new URL(flow.redirect_uri);
  current.searchParams.set('code', callback.code);
  current.searchParams.set('state', callback.state);
  if (callback.iss) current.searchParams.set('iss', callback.iss);
  let identity: ExternalIdentity;
  try {
    const tokens = await client.authorizationCodeGrant(provider, current, {
      pkceCodeVerifier: flow.code_verifier,
      expectedState: callback.state,
      ...(flow.provider === 'github' ? {} : { expectedNonce: flow.nonce, idTokenExpected: true }),
    });
    identity =
      flow.provider === 'github'
        ? await githubIdentity(config, tokens.access_token)
        : await oidcIdentity(provider, tokens);
  } catch (error) {
    if (error instanceof Problem) throw error;
    throw new Problem(400, `The identity provider refused the sign-in: ${(error as Error).message}`, {
      type: problemType('oauth-failed'),
      title: 'OAuth sign-in failed',
    });
  }
  // A first sign-in that would make an account is a sign-up: screened like one, before anything is created.
  const screening = (await isNewAccount(db, flow.provider, identity))
    ? await screenSignup(db, config, { email: identity.email, ip: meta.ip, via: flow.provider })
    : null;
  const { userId, created } = await db.transaction(async (tx) => {
    const linked = await linkIdentity(tx, config, flow.provider, identity);
    if (screening && linked.created) await screenedUser(tx, screening.id, linked.userId);
    return linked;
  });
  const blocked = await db.exists(
    sql.type(z.object({}))`select 1 from users where id = ${userId} and status = 'blocked'`,
  );
  if (blocked)
    throw new Problem(403, 'This account is blocked.', {
      type: problemType('account-blocked'),
      title: 'Account blocked',
    });
  return { ...(await startSession(db, config, userId, meta)), created };
}

/**
 * The ID token's claims; providers that keep e-mail out of the ID token (the
 * OpenID default) are asked at their userinfo endpoint, for the same subject.
 */
async function oidcIdentity(
  provider: client.Configuration,
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
): Promise<ExternalIdentity> {
  const idToken = tokens.claims();
  if (!idToken?.sub) throw new Problem(400, 'The identity provider sent no subject.');
  const claims: Record<string, unknown> =
    typeof idToken.email === 'string'
      ? idToken
      : await client.fetchUserInfo(provider, tokens.access_token, idToken.sub);
  if (typeof claims.email !== 'string' || claims.email_verified !== true) {
    throw new Problem(400, 'The identity provider did not vouch for an e-mail address.', {
      type: problemType('oauth-unverified-email'),
    });
  }
  return {
    subject: idToken.sub,
    email: claims.email,
    name: typeof claims.name === 'string' ? claims.name : claims.email,
  };
}

const githubUser = z.object({ id: z.number(), login: z.string(), name: z.string().nullable().optional() });
const githubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

async function githubIdentity(config: Config, accessToken: string): Promise<ExternalIdentity> {
  const api = config.oauth.github?.apiUrl ?? 'https://api.github.com';
  const get = async (path: string) => {
    const res = await fetch(`${api}${path}`, {
      headers: {
        Authorization: `Bearer ${accessToken}`,
        Accept: 'application/vnd.github+json',
        'User-Agent': 'content-platform',
      },
    });
    if (!res.ok) throw new Error(`GitHub ${path} answered ${res.status}`);
    return res.json();
  };
  const profile = githubUser.parse(await get('/user'));
  const primary = githubEmails.parse(await get('/user/emails')).find((entry) => entry.primary && entry.verified);
  if (!primary)
    throw new Problem(400, 'The GitHub account has no verified primary e-mail address.', {
      type: problemType('oauth-unverified-email'),
    });
  return { subject: String(profile.id), email: primary.email, name: profile.name ?? profile.login };
}
