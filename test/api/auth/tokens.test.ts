// Login, access tokens, refresh rotation, logout, who-am-I.
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { z } from 'zod';
import { signToken } from '../../../core/identity/tokens.ts';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp, accessChangeHeard } from '../../helpers/app.ts';
import { login, newSite, newTenant, newUser, password, signedIn } from '../../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('POST /auth/login', () => {
  it('signs in with the form and answers a token pair', async () => {
    const user = await newUser(t);
    const res = await request(t.app)
      .post('/auth/login')
      .type('form')
      .send({ username: user.email, password, grant_type: 'password' })
      .expect(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 900,
      refresh_token: expect.stringMatching(/^rt_/),
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const claims = jwt.decode(res.body.access_token) as Record<string, unknown>;
    expect(claims).toMatchObject({
      typ: 'access',
      sub: user.id,
      iss: 'content-platform',
      aud: 'content-platform-api',
      sid: expect.any(String),
      jti: expect.any(String),
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
  });

  it('signs in with JSON, the address in any case', async () => {
    const user = await newUser(t);
    await request(t.app).post('/auth/login').send({ username: user.email.toUpperCase(), password }).expect(200);
  });

  it('gives the same 401 for an unknown address and a wrong password', async () => {
    const user = await newUser(t);
    const wrong = await request(t.app)
      .post('/auth/login')
      .send({ username: user.email, password: 'not the password' })
      .expect(401);
    const unknown = await request(t.app)
      .post('/auth/login')
      .send({ username: 'nobody@example.com', password: 'not the password' })
      .expect(401);
    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
    expect(strip(wrong.body)).toEqual(strip(unknown.body));
    expect(wrong.body.type).toBe('/problems/invalid-credentials');
  });

  it('refuses an unverified account with 403 and a clear type', async () => {
    const user = await newUser(t, { email_verified: false });
    const res = await request(t.app).post('/auth/login').send({ username: user.email, password }).expect(403);
    expect(res.body.type).toBe('/problems/email-not-verified');
  });

  it('refuses a blocked account with 403 and a clear type', async () => {
    const user = await newUser(t);
    await t.services.db.query(sql.typeAlias('void')`update users set status = 'blocked' where id = ${user.id}`);
    const res = await request(t.app).post('/auth/login').send({ username: user.email, password }).expect(403);
    expect(res.body.type).toBe('/problems/account-blocked');
  });

  it('rejects a body without a password, and another grant type, with 422', async () => {
    await request(t.app).post('/auth/login').send({ username: 'a@example.com' }).expect(422);
    await request(t.app)
      .post('/auth/login')
      .send({ username: 'a@example.com', password: 'x', grant_type: 'client_credentials' })
      .expect(422);
  });

  it('never returns or stores the password in clear', async () => {
    const user = await newUser(t);
    const hash = await t.services.db.oneFirst(
      sql.type(
        await import('zod').then(({ z }) => z.object({ password_hash: z.string() })),
      )`select password_hash from users where id = ${user.id}`,
    );
    expect(hash).toMatch(/^\$argon2id\$/);
    const res = await request(t.app)
      .get(`/users/${user.id}`)
      .set(bearer((await login(t, user.email)).access_token))
      .expect(200);
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
  });
});

describe('access tokens', () => {
  it('are refused without a token, with WWW-Authenticate', async () => {
    const res = await request(t.app).get('/auth/currentuser').expect(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });

  it.each([
    [
      'alg none',
      (token: string) => {
        const [, payload] = token.split('.');
        return `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
      },
    ],
    [
      'another algorithm',
      (token: string) => jwt.sign(jwt.decode(token) as object, t.config.auth.jwtSecret, { algorithm: 'HS512' }),
    ],
    [
      'another key',
      (token: string) => jwt.sign(jwt.decode(token) as object, 'another-secret-of-at-least-32-characters!!'),
    ],
    [
      'a changed claim',
      (token: string) => {
        const [head, payload, signature] = token.split('.');
        const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
        claims.sub = '00000000-0000-4000-8000-000000000000';
        return `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      },
    ],
    ['garbage', () => 'not-a-jwt'],
  ])('are refused when forged: %s', async (_name, forge) => {
    const user = await newUser(t);
    const { access_token } = await login(t, user.email);
    await request(t.app).get('/auth/currentuser').set(bearer(access_token)).expect(200);
    await request(t.app)
      .get('/auth/currentuser')
      .set(bearer(forge(access_token)))
      .expect(401);
  });

  it('are refused once expired', async () => {
    const user = await newUser(t);
    const { access_token } = await login(t, user.email);
    const claims = jwt.decode(access_token) as { sid: string };
    const expired = jwt.sign(
      { typ: 'access', sid: claims.sid, act: 'user', exp: Math.floor(Date.now() / 1000) - 10 },
      t.config.auth.jwtSecret,
      {
        algorithm: 'HS256',
        issuer: t.config.auth.issuer,
        audience: t.config.auth.audience,
        subject: user.id,
        jwtid: 'x',
      },
    );
    await request(t.app).get('/auth/currentuser').set(bearer(expired)).expect(401);
  });

  it.each(['email_verification', 'password_reset'] as const)(
    'refuse a %s token used as an access token',
    async (typ) => {
      const user = await newUser(t);
      const { access_token } = await login(t, user.email);
      const { sid } = jwt.decode(access_token) as { sid: string };
      const other = signToken(t.config.auth, typ, user.id, 600, { sid, act: 'user' }).token;
      await request(t.app).get('/auth/currentuser').set(bearer(other)).expect(401);
    },
  );

  it('refuse a refresh token used as an access token', async () => {
    const user = await newUser(t);
    const { refresh_token } = await login(t, user.email);
    await request(t.app).get('/auth/currentuser').set(bearer(refresh_token)).expect(401);
  });

  it('are refused when their session belongs to another user, even once that session is known', async () => {
    const owner = await newUser(t);
    const other = await newUser(t);
    const { access_token } = await login(t, owner.email);
    const { sid } = jwt.decode(access_token) as { sid: string };
    // The owner's request makes the session known to the process.
    await request(t.app).get('/auth/currentuser').set(bearer(access_token)).expect(200);
    const mismatched = signToken(t.config.auth, 'access', other.id, 600, { sid, act: 'user' }).token;
    await request(t.app).get('/auth/currentuser').set(bearer(mismatched)).expect(401);
  });

  it('stop working when the user is blocked', async () => {
    const user = await newUser(t);
    const { access_token } = await login(t, user.email);
    await t.services.db.query(sql.typeAlias('void')`update users set status = 'blocked' where id = ${user.id}`);
    await accessChangeHeard(t);
    await request(t.app).get('/auth/currentuser').set(bearer(access_token)).expect(401);
  });
});

describe('POST /auth/refresh-token', () => {
  it('rotates: a new pair, and the old refresh token is spent', async () => {
    const user = await newUser(t);
    const first = await login(t, user.email);
    const res = await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(200);
    expect(res.body.refresh_token).not.toBe(first.refresh_token);
    await request(t.app).get('/auth/currentuser').set(bearer(res.body.access_token)).expect(200);
    // The next rotation continues the chain.
    await request(t.app).post('/auth/refresh-token').set(bearer(res.body.refresh_token)).expect(200);
  });

  it('lets parallel requests with the same token through within the grace window', async () => {
    const user = await newUser(t);
    const first = await login(t, user.email);
    const [a, b] = await Promise.all([
      request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)),
      request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // Both end on the same successor: the session stays one chain.
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
  });

  it('answers a token presented again within the grace with the successor it was exchanged for', async () => {
    const user = await newUser(t);
    const first = await login(t, user.email);
    const refresh = () => request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(200);
    const successor = (await refresh()).body.refresh_token;
    expect((await refresh()).body.refresh_token).toBe(successor);
    expect((await refresh()).body.refresh_token).toBe(successor);
    const live = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from refresh_tokens r join sessions s on s.id = r.session_id
      where s.user_id = ${user.id} and r.rotated_at is null`);
    expect(live).toBe(1);
    await request(t.app).post('/auth/refresh-token').set(bearer(successor)).expect(200);
  });

  it('revokes the whole session when a token is presented after its successor was exchanged too', async () => {
    const user = await newUser(t);
    const first = await login(t, user.email);
    const second = (await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(200)).body;
    const third = (await request(t.app).post('/auth/refresh-token').set(bearer(second.refresh_token)).expect(200)).body;
    // Still within the grace, but a grandparent: whoever holds it is not racing the holder of the chain.
    const replay = await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(401);
    expect(replay.body.detail).toMatch(/already used/);
    await request(t.app).post('/auth/refresh-token').set(bearer(third.refresh_token)).expect(401);
    await request(t.app).get('/auth/currentuser').set(bearer(third.access_token)).expect(401);
  });

  it('revokes the whole session when a spent token is replayed after the grace window', async () => {
    const user = await newUser(t);
    const first = await login(t, user.email);
    const second = (await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(200)).body;
    await t.services.db.query(
      sql.typeAlias(
        'void',
      )`update refresh_tokens set rotated_at = now() - interval '1 minute' where rotated_at is not null`,
    );
    const replay = await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(401);
    expect(replay.body.detail).toMatch(/already used/);
    // Everything of that session is dead: the newer refresh token and the access token.
    await request(t.app).post('/auth/refresh-token').set(bearer(second.refresh_token)).expect(401);
    await request(t.app).get('/auth/currentuser').set(bearer(second.access_token)).expect(401);
  });

  it('refuses an unknown token, an access token, or none', async () => {
    const user = await newUser(t);
    const { access_token } = await login(t, user.email);
    await request(t.app).post('/auth/refresh-token').set(bearer('rt_unknown')).expect(401);
    await request(t.app).post('/auth/refresh-token').set(bearer(access_token)).expect(401);
    await request(t.app).post('/auth/refresh-token').expect(401);
  });
});

describe('POST /auth/logout', () => {
  it('ends the session: access and refresh tokens stop working', async () => {
    const user = await newUser(t);
    const tokens = await login(t, user.email);
    const other = await login(t, user.email);
    await request(t.app).post('/auth/logout').set(bearer(tokens.access_token)).expect(204);
    await request(t.app).get('/auth/currentuser').set(bearer(tokens.access_token)).expect(401);
    await request(t.app).post('/auth/refresh-token').set(bearer(tokens.refresh_token)).expect(401);
    // Other sessions of the same user are untouched.
    await request(t.app).get('/auth/currentuser').set(bearer(other.access_token)).expect(200);
  });

  it('needs a token', async () => {
    await request(t.app).post('/auth/logout').expect(401);
  });
});

describe('GET /auth/currentuser and GET /auth/token-info', () => {
  it('describe the user with memberships and sites', async () => {
    const tenant = await newTenant(t, 'Acme');
    const site = await newSite(t, tenant);
    const hidden = await newSite(t, tenant);
    const caller = await signedIn(t, { tenant, role: 'editor', sites: [site] });
    const res = await request(t.app).get('/auth/currentuser').set(caller.auth).expect(200);
    expect(res.body).toMatchObject({
      id: caller.user.id,
      email: caller.user.email,
      is_global_admin: false,
      memberships: [{ tenant: { id: tenant.id, name: 'Acme', slug: tenant.slug }, role: 'editor' }],
      sites: [{ id: site.id, slug: site.slug, role: 'editor' }],
    });
    expect(res.body.sites.map((s: { id: string }) => s.id)).not.toContain(hidden.id);
  });

  it('token-info shows the verified claims', async () => {
    const caller = await signedIn(t);
    const res = await request(t.app).get('/auth/token-info').set(caller.auth).expect(200);
    expect(res.body).toMatchObject({
      token_type: 'access',
      actor: 'user',
      subject: caller.user.id,
      session_id: expect.any(String),
      issuer: 'content-platform',
    });
    expect(res.body.expires_in).toBeGreaterThan(800);
  });
});
