// OAuth sign-in end to end: against a real OpenID provider (oidc-provider) on
// 127.0.0.1 for `google`, and a small GitHub stand-in for `github`.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { login, newUser } from '../../helpers/factories.ts';
import { startFakeGitHub, type FakeGitHub } from '../../helpers/fake-github.ts';
import { authorize, startOidcProvider, type OidcServer } from '../../helpers/oidc.ts';

const redirectUri = 'http://localhost:5173/oauth/callback';
let t: TestApp;
let oidc: OidcServer;
let github: FakeGitHub;
beforeAll(async () => {
  oidc = await startOidcProvider(redirectUri);
  github = await startFakeGitHub('gh-client', 'gh-secret');
  t = await startTestApp({
    env: {
      OAUTH_REDIRECT_URI: redirectUri,
      OAUTH_GOOGLE_ISSUER: oidc.issuer,
      OAUTH_GOOGLE_CLIENT_ID: oidc.clientId,
      OAUTH_GOOGLE_CLIENT_SECRET: oidc.clientSecret,
      OAUTH_GITHUB_CLIENT_ID: 'gh-client',
      OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      OAUTH_GITHUB_BASE_URL: github.url,
      OAUTH_GITHUB_API_URL: github.url,
    },
  });
});
afterAll(async () => {
  await stopTestApp(t);
  await oidc.close();
  await github.close();
});

async function signInWithOidc(account: string) {
  const start = await request(t.app).get('/auth/signup/oauth/google').expect(200);
  const returned = await authorize(start.body.authorization_url, account);
  return request(t.app)
    .post('/auth/signup/oauth/callback')
    .send({
      code: returned.get('code'),
      state: returned.get('state'),
      ...(returned.get('iss') ? { iss: returned.get('iss') } : {}),
    });
}

describe('GET /auth/signup/oauth/{provider}', () => {
  it('answers the authorization URL with PKCE and state', async () => {
    const res = await request(t.app).get('/auth/signup/oauth/google').expect(200);
    const url = new URL(res.body.authorization_url);
    expect(url.origin).toBe(oidc.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBe(res.body.state);
    expect(url.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(url.searchParams.get('nonce')).toBeTruthy();
  });

  it('redirects with ?redirect=true', async () => {
    const res = await request(t.app).get('/auth/signup/oauth/github?redirect=true').expect(302);
    expect(res.headers.location).toMatch(new RegExp(`^${github.url}/login/oauth/authorize\\?`));
  });

  it('is 404 for an unknown provider', async () => {
    const res = await request(t.app).get('/auth/signup/oauth/myspace').expect(404);
    expect(res.body.detail).toMatch(/google, github/);
  });
});

describe('POST /auth/signup/oauth/callback with an OpenID provider', () => {
  it('creates a verified user with a tenant, then signs the same person in again', async () => {
    const first = await signInWithOidc('alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'bearer', created: true, refresh_token: expect.any(String) });
    const me = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${first.body.access_token}` })
      .expect(200);
    expect(me.body).toMatchObject({
      email: 'alice@example.org',
      email_verified: true,
      memberships: [{ role: 'admin' }],
    });
    const again = await signInWithOidc('alice');
    expect(again.body.created).toBe(false);
    const me2 = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${again.body.access_token}` })
      .expect(200);
    expect(me2.body.id).toBe(me.body.id);
  });

  it('links to the existing account with that e-mail address', async () => {
    const existing = await newUser(t, { email: 'bob@example.org', email_verified: false });
    const res = await signInWithOidc('bob');
    expect(res.body.created).toBe(false);
    const me = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${res.body.access_token}` })
      .expect(200);
    expect(me.body).toMatchObject({ id: existing.id, email_verified: true });
    // The password still works too.
    await login(t, existing.email);
  });

  it('refuses an identity without a verified e-mail address', async () => {
    const res = await signInWithOidc('unverified-carol');
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('/problems/oauth-unverified-email');
  });

  it('refuses an unknown state, and a state used twice', async () => {
    const unknown = await request(t.app)
      .post('/auth/signup/oauth/callback')
      .send({ code: 'x', state: 'never-issued' })
      .expect(400);
    expect(unknown.body.type).toBe('/problems/invalid-oauth-state');
    const start = await request(t.app).get('/auth/signup/oauth/google').expect(200);
    const returned = await authorize(start.body.authorization_url, 'dave');
    const body = { code: returned.get('code'), state: returned.get('state'), iss: returned.get('iss') };
    await request(t.app).post('/auth/signup/oauth/callback').send(body).expect(200);
    await request(t.app).post('/auth/signup/oauth/callback').send(body).expect(400);
  });

  it('refuses a code that does not belong to the state', async () => {
    const start = await request(t.app).get('/auth/signup/oauth/google').expect(200);
    const res = await request(t.app)
      .post('/auth/signup/oauth/callback')
      .send({ code: 'forged-code', state: start.body.state, iss: oidc.issuer });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('/problems/oauth-failed');
  });

  it('rejects a body without a code with 422', async () => {
    await request(t.app).post('/auth/signup/oauth/callback').send({ state: 'x' }).expect(422);
  });
});

describe('POST /auth/signup/oauth/callback with GitHub', () => {
  it('uses the verified primary address from the GitHub API', async () => {
    const start = await request(t.app).get('/auth/signup/oauth/github').expect(200);
    const code = github.issueCode({
      id: 4242,
      login: 'erin',
      name: 'Erin',
      emails: [
        { email: 'erin-old@example.org', primary: false, verified: true },
        { email: 'erin@example.org', primary: true, verified: true },
      ],
    });
    const res = await request(t.app)
      .post('/auth/signup/oauth/callback')
      .send({ provider: 'github', code, state: start.body.state })
      .expect(200);
    const me = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${res.body.access_token}` })
      .expect(200);
    expect(me.body).toMatchObject({ email: 'erin@example.org', full_name: 'Erin' });
  });

  it('screens a first sign-in like a sign-up: a throwaway address makes no account', async () => {
    const start = await request(t.app).get('/auth/signup/oauth/github').expect(200);
    const code = github.issueCode({
      id: 4444,
      login: 'grace',
      name: 'Grace',
      emails: [{ email: 'grace@mailinator.com', primary: true, verified: true }],
    });
    const res = await request(t.app)
      .post('/auth/signup/oauth/callback')
      .send({ provider: 'github', code, state: start.body.state })
      .expect(403);
    expect(res.body.type).toBe('/problems/signup-refused');
    const screening = await t.services.db.one(sql.type(
      z.object({ via: z.string(), outcome: z.string(), users: z.number() }),
    )`
      select via, outcome, (select count(*)::int from users where email = 'grace@mailinator.com') as users
      from signup_screenings where email = 'grace@mailinator.com'`);
    expect(screening).toEqual({ via: 'github', outcome: 'blocked', users: 0 });
  });

  it('refuses a GitHub account without a verified primary address', async () => {
    const start = await request(t.app).get('/auth/signup/oauth/github').expect(200);
    const code = github.issueCode({
      id: 4343,
      login: 'frank',
      name: 'Frank',
      emails: [{ email: 'frank@example.org', primary: true, verified: false }],
    });
    const res = await request(t.app).post('/auth/signup/oauth/callback').send({ code, state: start.body.state });
    expect(res.status).toBe(400);
  });

  it('refuses a state issued for another provider', async () => {
    const start = await request(t.app).get('/auth/signup/oauth/google').expect(200);
    await request(t.app)
      .post('/auth/signup/oauth/callback')
      .send({ provider: 'github', code: 'x', state: start.body.state })
      .expect(400);
  });
});
