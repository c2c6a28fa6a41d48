// Sign-up and sign-in through an external identity provider: authorization
// code flow with PKCE (openid-client). `google` is any OpenID Connect issuer
// (Google by default); `github` is GitHub's OAuth 2.0 plus its API for the
// verified e-mail. State, PKCE verifier and nonce are kept server-side and
// used once.
import * as client from 'openid-client';
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { screenSignup, screenedUser } from '../fraud/screening.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { addMember } from '../tenancy/memberships.ts';
import { insertTenant } from '../tenancy/tenants.ts';
import { digest, newSecret } from './secrets.ts';
import { startSession, type SessionMeta, type TokenPair } from './sessions.ts';
import { insertUser } from './users.ts';

export const providers = ['google', 'github'] as const;
export type ProviderName = (typeof providers)[number];

const stateLifetimeSeconds = 600;

type ExternalIdentity = { subject: string; email: string; name: string };

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

export async function startOAuth(db: CommonQueryMethods, config: Config, name: ProviderName) {
  const provider = await configuration(config, name);
  const state = newSecret();
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const redirect = redirectUri(config);
  await db.query(sql.typeAlias('void')`
    insert into oauth_states (state_hash, provider, code_verifier, nonce, redirect_uri, expires_at)
    values (${sql.binary(digest(state))}, ${name}, ${verifier}, ${nonce}, ${redirect}, now() + make_interval(secs => ${stateLifetimeSeconds}))`);
  const url = client.buildAuthorizationUrl(provider, {
    redirect_uri: redirect,
    scope: name === 'github' ? 'read:user user:email' : 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(name === 'github' ? {} : { nonce }),
  });
  return { provider: name, authorization_url: url.href, state, expires_in: stateLifetimeSeconds };
}

const pending = z.object({
  provider: z.enum(providers),
  code_verifier: z.string(),
  nonce: z.string(),
  redirect_uri: z.string(),
  live: z.boolean(),
});

const badState = () =>
  new Problem(400, 'The sign-in state is unknown, used or expired; start again.', {
    type: problemType('invalid-oauth-state'),
    title: 'Invalid OAuth state',
  });

export type Callback = { provider?: ProviderName | undefined; code: string; state: string; iss?: string | undefined };

export async function finishOAuth(
  db: CommonQueryMethods,
  config: Config,
  callback: Callback,
  meta: SessionMeta,
): Promise<TokenPair & { created: boolean }> {
  // The state is spent whatever happens next.
  const flow = await db.maybeOne(sql.type(pending)`
    delete from oauth_states where state_hash = ${sql.binary(digest(callback.state))}
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
    const linked = await linkIdentity(tx, flow.provider, identity);
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

/** Neither linked before nor an address with an account: signing in makes one. */
async function isNewAccount(db: CommonQueryMethods, provider: ProviderName, identity: ExternalIdentity) {
  return !(await db.exists(sql.type(z.object({}))`
    select 1 from user_identities where provider = ${provider} and subject = ${identity.subject}
    union all select 1 from users where lower(email) = lower(${identity.email})`));
}

/** The user behind an external identity: linked before, found by verified e-mail, or new (with a tenant of their own). */
async function linkIdentity(tx: DatabaseTransactionConnection, provider: ProviderName, identity: ExternalIdentity) {
  const linked = await tx.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`
    select user_id from user_identities where provider = ${provider} and subject = ${identity.subject}`);
  if (linked) return { userId: linked, created: false };
  const existing = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    select id from users where lower(email) = lower(${identity.email})`);
  let userId = existing;
  if (existing) {
    // The provider vouched for the address, so the account's address is verified now.
    await tx.query(sql.typeAlias('void')`update users set email_verified = true where id = ${existing}`);
  } else {
    const user = await insertUser(tx, {
      email: identity.email,
      password: '',
      password_hash: null,
      full_name: identity.name.slice(0, 200),
      email_verified: true,
    });
    const tenant = await insertTenant(tx, { name: `${user.full_name}'s workspace` });
    await addMember(tx, tenant.id, user.id, 'admin');
    userId = user.id;
  }
  await tx.query(sql.typeAlias('void')`
    insert into user_identities (provider, subject, user_id, email) values (${provider}, ${identity.subject}, ${userId}, ${identity.email})`);
  return { userId: userId as string, created: !existing };
}
