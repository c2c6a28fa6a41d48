// Brute-force limits: per client IP and per account, counted in PostgreSQL so
// that every API process shares them; over the limit is a 429 with Retry-After.
import request from 'supertest';
import { createApp } from '../../../api/app.ts';
import { closeServices, createServices } from '../../../core/boot.ts';
import { createLogger } from '../../../core/logger.ts';
import { startTestApp, stopTestApp, testConfig, type TestApp } from '../../helpers/app.ts';
import { newUser, password } from '../../helpers/factories.ts';

const limits = {
  RATE_LIMIT_AUTH_PER_ACCOUNT: '3',
  RATE_LIMIT_AUTH_PER_IP: '6',
  RATE_LIMIT_WINDOW_SECONDS: '600',
  TRUST_PROXY: 'true',
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: limits });
});
afterAll(() => stopTestApp(t));

let ip = 1;
const nextIp = () => `203.0.113.${ip++}`;

it('limits attempts per account, even from many addresses and with the right password', async () => {
  const user = await newUser(t);
  for (let i = 0; i < 3; i++) {
    await request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password: 'wrong password' })
      .expect(401);
  }
  const res = await request(t.app)
    .post('/auth/login')
    .set('X-Forwarded-For', nextIp())
    .send({ username: user.email, password })
    .expect(429);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.headers['content-type']).toMatch(/problem\+json/);
  // The address case does not make it another account.
  await request(t.app)
    .post('/auth/login')
    .set('X-Forwarded-For', nextIp())
    .send({ username: user.email.toUpperCase(), password })
    .expect(429);
});

it('counts only failed sign-ins against an account, and a success clears them', async () => {
  const user = await newUser(t);
  const login = (secret: string) =>
    request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password: secret });
  // A script signing in more often than the limit is never locked out of its own account.
  for (let i = 0; i < 5; i++) await login(password).expect(200);
  for (let round = 0; round < 3; round++) {
    await login('wrong password').expect(401);
    await login('wrong password').expect(401);
    await login(password).expect(200);
  }
  // Three failures in a row (the limit) lock it, whatever the address.
  for (let i = 0; i < 3; i++) await login('wrong password').expect(401);
  await login(password).expect(429);
});

it('limits attempts per address across accounts', async () => {
  const address = nextIp();
  for (let i = 0; i < 6; i++) {
    await request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', address)
      .send({ username: `someone-${i}@example.com`, password: 'x' })
      .expect(401);
  }
  await request(t.app)
    .post('/auth/login')
    .set('X-Forwarded-For', address)
    .send({ username: 'another@example.com', password: 'x' })
    .expect(429);
  // Another address is not affected.
  await request(t.app)
    .post('/auth/login')
    .set('X-Forwarded-For', nextIp())
    .send({ username: 'another@example.com', password: 'x' })
    .expect(401);
});

it('shares the counts between API processes', async () => {
  const second = await createServices(
    testConfig({ ...limits, DATABASE_URL: t.database.url }),
    t.database.url,
    createLogger('silent'),
    'second',
  );
  try {
    const other = createApp(second);
    const user = await newUser(t);
    await request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password: 'wrong password' })
      .expect(401);
    await request(other)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password: 'wrong password' })
      .expect(401);
    await request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password: 'wrong password' })
      .expect(401);
    await request(other)
      .post('/auth/login')
      .set('X-Forwarded-For', nextIp())
      .send({ username: user.email, password })
      .expect(429);
  } finally {
    await closeServices(second);
  }
});

it.each([
  [
    'signup',
    '/auth/signup/',
    (n: number) => ({ email: 'same@example.com', password: 'long enough password', full_name: `X${n}` }),
  ],
  ['resend-verification', '/auth/signup/resend-verification', () => ({ email: 'same@example.com' })],
  ['password-reset-request', '/auth/password-reset-request', () => ({ email: 'same@example.com' })],
  ['token', '/auth/token', () => ({ grant_type: 'client_credentials', client_id: 'sa_same', client_secret: 'wrong' })],
])('limits %s too', async (_name, path, body) => {
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++)
    statuses.push((await request(t.app).post(path).set('X-Forwarded-For', nextIp()).send(body(i))).status);
  expect(statuses.slice(3)).toEqual([429, 429]);
  expect(statuses.slice(0, 3)).not.toContain(429);
});
