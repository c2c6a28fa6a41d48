// OAuth sign-in end to end: against a real OpenID provider (oidc-provider) on
// 127.0.0.1 for `google`, and a small GitHub stand-in for `github`. Each
// browser is a supertest agent, which keeps the cookie the start sets.
import request from 'supertest';
import { z } from 'zod';
import { startSession } from '../../../core/identity/sessions.ts';
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
      CORS_ORIGINS: 'http://localhost:5173',
    },
  });
});
afterAll(async () => {
  await stopTestApp(t);
  await oidc.close();
  await github.close();
});

/** A browser: keeps the cookies the API sets, and sends them back. */
const browser = () => request.agent(t.app);

async function signInWithOidc(account: string) {
  const agent = browser();
  const start = await agent.get('/auth/signup/oauth/google').expect(200);
  const returned = await authorize(start.body.authorization_url, account);
  return agent.post('/auth/signup/oauth/callback').send({
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

  it('links to the existing account with that confirmed address, which keeps its password, and tells its owner', async () => {
    const existing = await newUser(t, { email: 'bob@example.org' });
    const res = await signInWithOidc('bob');
    expect(res.body.created).toBe(false);
    const me = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${res.body.access_token}` })
      .expect(200);
    expect(me.body).toMatchObject({ id: existing.id, email_verified: true });
    // The owner proved the address when they confirmed it: their password still works.
    await login(t, existing.email);
    expect(await mailsTo('bob@example.org')).toEqual([{ kind: 'oauth_linked', subject: 'Signed in with Google' }]);
  });

  it('refuses an identity without a verified e-mail address', async () => {
    const res = await signInWithOidc('unverified-carol');
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('/problems/oauth-unverified-email');
  });

  it('refuses an unknown state, and a state used twice', async () => {
    const agent = browser();
    const unknown = await agent
      .post('/auth/signup/oauth/callback')
      .send({ code: 'x', state: 'never-issued' })
      .expect(400);
    expect(unknown.body.type).toBe('/problems/invalid-oauth-state');
    const start = await agent.get('/auth/signup/oauth/google').expect(200);
    const returned = await authorize(start.body.authorization_url, 'dave');
    const body = { code: returned.get('code'), state: returned.get('state'), iss: returned.get('iss') };
    await agent.post('/auth/signup/oauth/callback').send(body).expect(200);
    await agent.post('/auth/signup/oauth/callback').send(body).expect(400);
  });

  it('refuses a code that does not belong to the state', async () => {
    const agent = browser();
    const start = await agent.get('/auth/signup/oauth/google').expect(200);
    const res = await agent
      .post('/auth/signup/oauth/callback')
      .send({ code: 'forged-code', state: start.body.state, iss: oidc.issuer });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('/problems/oauth-failed');
  });

  it('rejects a body without a code with 422', async () => {
    await request(t.app).post('/auth/signup/oauth/callback').send({ state: 'x' }).expect(422);
  });
});

describe('the sign-in belongs to the browser that started it', () => {
  it('the start sets an HttpOnly, SameSite=Lax cookie for the sign-in routes only', async () => {
    for (const path of ['/auth/signup/oauth/google', '/auth/signup/oauth/github?redirect=true']) {
      const res = await request(t.app).get(path);
      const [cookie] = res.get('set-cookie') ?? [];
      expect(cookie).toMatch(
        /^oauth_browser=[\w-]{43}; Path=\/auth\/signup\/oauth; Max-Age=600; HttpOnly; SameSite=Lax$/,
      );
    }
  });

  it('refuses a code and state brought to another browser, and leaves them to their own', async () => {
    const attacker = browser();
    const start = await attacker.get('/auth/signup/oauth/google').expect(200);
    const returned = await authorize(start.body.authorization_url, 'mallory');
    const body = { code: returned.get('code'), state: returned.get('state'), iss: returned.get('iss') };
    // A browser that started nothing, and one that started a sign-in of its own.
    const bare = await request(t.app).post('/auth/signup/oauth/callback').send(body).expect(400);
    expect(bare.body).toMatchObject({ type: '/problems/invalid-oauth-state', detail: expect.stringMatching(/cookie/) });
    const victim = browser();
    await victim.get('/auth/signup/oauth/google').expect(200);
    const other = await victim.post('/auth/signup/oauth/callback').send(body).expect(400);
    expect(other.body.type).toBe('/problems/invalid-oauth-state');
    // The browser that started it still can.
    await attacker.post('/auth/signup/oauth/callback').send(body).expect(200);
  });

  it('keeps the browser’s cookie across starts, so sign-ins started side by side both finish', async () => {
    const agent = browser();
    const first = await agent.get('/auth/signup/oauth/google').expect(200);
    const second = await agent.get('/auth/signup/oauth/google').expect(200);
    expect(second.get('set-cookie')).toEqual(first.get('set-cookie'));
    for (const start of [first, second]) {
      const returned = await authorize(start.body.authorization_url, 'peggy');
      await agent
        .post('/auth/signup/oauth/callback')
        .send({ code: returned.get('code'), state: returned.get('state'), iss: returned.get('iss') })
        .expect(200);
    }
  });

  it('lets a front end on an allowed origin send the cookie, on the sign-in routes only', async () => {
    const preflight = (path: string) =>
      request(t.app)
        .options(path)
        .set('Origin', 'http://localhost:5173')
        .set('Access-Control-Request-Method', 'POST')
        .expect(204);
    const callback = await preflight('/auth/signup/oauth/callback');
    expect(callback.headers['access-control-allow-credentials']).toBe('true');
    const login = await preflight('/auth/login');
    expect(login.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

/** What the outbox holds for an address. */
const mailsTo = (address: string) =>
  t.services.db.any(sql.type(z.object({ kind: z.string(), subject: z.string() }))`
    select kind, subject from email_outbox where to_address = ${address} order by created_at`);

/** A GitHub sign-in, start to finish, in a browser of its own. */
async function signInWithGitHub(account: Parameters<FakeGitHub['issueCode']>[0]) {
  const agent = browser();
  const start = await agent.get('/auth/signup/oauth/github').expect(200);
  return agent
    .post('/auth/signup/oauth/callback')
    .send({ provider: 'github', code: github.issueCode(account), state: start.body.state });
}

describe('POST /auth/signup/oauth/callback with GitHub', () => {
  it('uses the verified primary address from the GitHub API', async () => {
    const res = await signInWithGitHub({
      id: 4242,
      login: 'erin',
      name: 'Erin',
      emails: [
        { email: 'erin-old@example.org', primary: false, verified: true },
        { email: 'erin@example.org', primary: true, verified: true },
      ],
    });
    expect(res.status).toBe(200);
    const me = await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${res.body.access_token}` })
      .expect(200);
    expect(me.body).toMatchObject({ email: 'erin@example.org', full_name: 'Erin' });
  });

  it('takes from an account registered in advance, never confirmed, its password and sessions, and tells the owner', async () => {
    const victim = 'heidi@example.org';
    // Someone registers the victim's address with a password of their own; the address is never confirmed.
    const signup = await request(t.app)
      .post('/auth/signup/')
      .send({ email: victim, password: 'the registrant’s own password', full_name: 'Not Heidi' })
      .expect(201);
    // A session the account held (an account an administrator marked unconfirmed keeps the ones it had).
    const earlier = await startSession(t.services.db, t.config, signup.body.user.id, {});
    const res = await signInWithGitHub({
      id: 4545,
      login: 'heidi',
      name: 'Heidi',
      emails: [{ email: victim, primary: true, verified: true }],
    });
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(false);
    await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${res.body.access_token}` })
      .expect(200);
    const login = await request(t.app)
      .post('/auth/login')
      .send({ username: victim, password: 'the registrant’s own password' })
      .expect(401);
    expect(login.body.type).toBe('/problems/invalid-credentials');
    await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${earlier.access_token}` })
      .expect(401);
    await request(t.app)
      .post('/auth/refresh-token')
      .set({ Authorization: `Bearer ${earlier.refresh_token}` })
      .expect(401);
    // The confirmation link mailed at registration is spent too.
    const pending = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from email_tokens where user_id = ${signup.body.user.id} and used_at is null`);
    expect(pending).toBe(0);
    expect(await mailsTo(victim)).toEqual([
      { kind: 'email_verification', subject: 'Confirm your e-mail address' },
      { kind: 'oauth_linked', subject: 'Signed in with GitHub' },
    ]);
  });

  it('screens a first sign-in like a sign-up: a throwaway address makes no account', async () => {
    const res = await signInWithGitHub({
      id: 4444,
      login: 'grace',
      name: 'Grace',
      emails: [{ email: 'grace@mailinator.com', primary: true, verified: true }],
    });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe('/problems/signup-refused');
    const screening = await t.services.db.one(sql.type(
      z.object({ via: z.string(), outcome: z.string(), users: z.number() }),
    )`
      select via, outcome, (select count(*)::int from users where email = 'grace@mailinator.com') as users
      from signup_screenings where email = 'grace@mailinator.com'`);
    expect(screening).toEqual({ via: 'github', outcome: 'blocked', users: 0 });
  });

  it('refuses a GitHub account without a verified primary address', async () => {
    const res = await signInWithGitHub({
      id: 4343,
      login: 'frank',
      name: 'Frank',
      emails: [{ email: 'frank@example.org', primary: true, verified: false }],
    });
    expect(res.status).toBe(400);
  });

  it('refuses a state issued for another provider', async () => {
    const agent = browser();
    const start = await agent.get('/auth/signup/oauth/google').expect(200);
    await agent
      .post('/auth/signup/oauth/callback')
      .send({ provider: 'github', code: 'x', state: start.body.state })
      .expect(400);
  });
});
