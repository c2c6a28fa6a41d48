// Brute-force limits: per client IP and per account, counted in PostgreSQL so
// that every API process shares them; over the limit is a 429 with Retry-After.
// One trusted proxy hop (TRUST_PROXY=1): the test's connection is the proxy,
// and the right-most X-Forwarded-For entry the client it saw.
import request from 'supertest';
import { createApp } from '../../../api/app.ts';
import { closeServices, createServices } from '../../../core/boot.ts';
import { createLogger } from '../../../core/logger.ts';
import { checkedAgainstDocument, startTestApp, stopTestApp, testConfig, type TestApp } from '../../helpers/app.ts';
import { newUser, password } from '../../helpers/factories.ts';

const limits = {
  RATE_LIMIT_AUTH_PER_ACCOUNT: '3',
  RATE_LIMIT_AUTH_PER_IP: '6',
  RATE_LIMIT_WINDOW_SECONDS: '600',
  TRUST_PROXY: '1',
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: limits });
});
afterAll(() => stopTestApp(t));

let ip = 1;
const nextIp = () => `203.0.113.${ip++}`;
/** A form posted from an address of its own. */
const post = (path: string, body: object, app = t.app) =>
  request(app).post(path).set('X-Forwarded-For', nextIp()).send(body);

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

it('counts the address the trusted proxy saw, whatever the client wrote before it in X-Forwarded-For', async () => {
  // The proxy appends the address it saw; anything left of it is the client's own writing.
  const seen = nextIp();
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) {
    const res = await request(t.app)
      .post('/auth/login')
      .set('X-Forwarded-For', `10.${i}.0.1, 192.0.2.${i}, ${seen}`)
      .send({ username: `sprayed-${i}@example.com`, password: 'x' });
    statuses.push(res.status);
  }
  expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
});

it('checks at most the limit of concurrent wrong guesses for one account, and holds it until the window passes', async () => {
  // A process of its own with a short window, so that the window's end can be waited for.
  const config = testConfig({ ...limits, DATABASE_URL: t.database.url, RATE_LIMIT_WINDOW_SECONDS: '5' });
  const short = await createServices(config, t.database.url, createLogger('silent'), 'short-window');
  try {
    const app = checkedAgainstDocument(createApp(short), {});
    const user = await newUser(t);
    const login = (secret: string) => post('/auth/login', { username: user.email, password: secret }, app);
    const statuses = (await Promise.all(Array.from({ length: 30 }, () => login('wrong password')))).map(
      (res) => res.status,
    );
    // Each guess takes its place in the count before its password is checked: only the first three are checked.
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(27);
    const refused = await login(password).expect(429);
    await new Promise((resolve) => setTimeout(resolve, Number(refused.headers['retry-after']) * 1000 + 200));
    await login(password).expect(200);
  } finally {
    await closeServices(short);
  }
});

/** An e-mail address of exactly `length` characters that the document accepts (labels of at most 63). */
function addressOf(length: number, letter: string): string {
  const labels = Math.floor((length - 14) / 61);
  const domain = `${`${letter.repeat(60)}.`.repeat(labels)}example.com`;
  const local = letter.repeat(length - 1 - domain.length);
  expect(local.length).toBeGreaterThanOrEqual(1);
  expect(local.length).toBeLessThanOrEqual(64);
  return `${local}@${domain}`;
}

describe('identifiers as long as the document allows (320 characters)', () => {
  it.each([242, 320])('answers %i-character identifiers on every limited form without a 5xx', async (length) => {
    const email = addressOf(length, length === 320 ? 'q' : 'r');
    expect(email).toHaveLength(length);
    await post('/auth/login', { username: email, password: 'wrong password' }).expect(401);
    await post('/auth/signup/', { email, password: 'long enough password', full_name: 'Long Address' }).expect(201);
    await post('/auth/signup/resend-verification', { email }).expect(202);
    await post('/auth/password-reset-request', { email }).expect(202);
  });

  it('limits a long identifier as one account, whatever its letter case', async () => {
    const email = addressOf(320, 's');
    for (let i = 0; i < 3; i++) await post('/auth/login', { username: email, password: 'wrong password' }).expect(401);
    await post('/auth/login', { username: email.toUpperCase(), password: 'wrong password' }).expect(429);
  });
});
