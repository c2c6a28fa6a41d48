// A real OpenID Connect provider (oidc-provider) on 127.0.0.1, and a browser
// stand-in that signs in through its development login and consent pages.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export type OidcServer = { issuer: string; clientId: string; clientSecret: string; close(): Promise<void> };

/** Accounts: the login typed is the account id; its e-mail is <id>@example.org, verified unless the id starts with "unverified". */
export async function startOidcProvider(redirectUri: string): Promise<OidcServer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // oidc-provider warns on the console about its development defaults
  // (in-memory store, generated keys), which is exactly what a test wants.
  const warn = console.warn;
  console.warn = () => undefined;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'platform',
        client_secret: 'platform-client-secret',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: `${id}@example.org`,
        email_verified: !id.startsWith('unverified'),
        name: `Person ${id}`,
      }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['test-cookie-key'] },
    // Fixed lifetimes, so the provider does not announce its defaults on the console.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
  });
  console.warn = warn;
  server.on('request', provider.callback());
  return {
    issuer,
    clientId: 'platform',
    clientSecret: 'platform-client-secret',
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Follows the authorization URL as a browser would, logging in as `account`
 * and consenting; returns the parameters the provider sends back.
 */
export async function authorize(authorizationUrl: string, account: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  const send = async (url: string, form?: Record<string, string>) => {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const header of res.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    await res.arrayBuffer();
    return res;
  };
  let url = authorizationUrl;
  for (let step = 0; step < 12; step++) {
    const res = await send(url);
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect from ${url} (${res.status})`);
    const next = new URL(location, url);
    if (!next.href.startsWith(new URL(authorizationUrl).origin)) return next.searchParams; // back at the client
    if (/\/interaction\/[^/]+$/.test(next.pathname)) {
      // The development interaction: first a login, then a consent page.
      const page = await fetch(next, {
        headers: { Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      }).then((r) => r.text());
      const prompt: Record<string, string> = page.includes('name="login"')
        ? { prompt: 'login', login: account, password: 'any' }
        : { prompt: 'consent' };
      const submitted = await send(next.href, prompt);
      url = new URL(submitted.headers.get('location') ?? '', next).href;
      continue;
    }
    url = next.href;
  }
  throw new Error('too many redirects');
}
