// Rate limits on every request, through HTTP: per IP without a token (an IPv6
// client by its /64), per token with one, per tenant on job submits, failed
// webhook signatures per IP; the RateLimit headers on every answer, 429 with
// Retry-After past a limit, and the counts shared by two API processes.
// One trusted proxy hop (TRUST_PROXY=1) lets each test be a client of its own:
// the right-most X-Forwarded-For entry is the address the proxy saw.
import request from 'supertest';
import { createApp, type App } from '../../api/app.ts';
import { createLogger } from '../../core/logger.ts';
import { closeServices, createServices } from '../../core/boot.ts';
import type { Services } from '../../core/services.ts';
import type { Config } from '../../core/config.ts';
import { signToken } from '../../core/identity/tokens.ts';
import { sql } from '../../db/pool.ts';
import { checkedAgainstDocument, startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { login, type Caller } from '../helpers/factories.ts';
import { signEvent } from '../helpers/fake-stripe.ts';
import { bearer, globalAdmin, staffedTenant, type Staffed } from '../helpers/identity.ts';
import { giveCredits, priceTestKinds } from '../helpers/jobs.ts';

const webhookSecret = 'whsec_test_rate_limits_0123';
let t: TestApp;
let limited: App;
let admin: Caller;
let a: Staffed;
let b: Staffed;

/** An API process on the test's database with low limits (its callers are made through `t`, whose limits are out of reach). */
async function limitedProcess(trustProxy: Config['trustProxy'] = 1): Promise<{ app: App; services: Services }> {
  const requests = {
    ...t.config.rateLimits.requests,
    perIp: 3,
    perToken: 4,
    jobsPerTenant: 2,
    webhookFailuresPerIp: 2,
    // Counts reach the shared store only when a test syncs, so what each test sees is exact.
    syncMs: 3_600_000,
  };
  const config = { ...t.config, trustProxy, rateLimits: { ...t.config.rateLimits, requests } };
  const services = await createServices(config, t.database.url, createLogger(config.logLevel), 'test');
  return { app: checkedAgainstDocument(createApp(services), {}), services };
}

const processes: { services: Services }[] = [];
beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1', STRIPE_WEBHOOK_SECRET: webhookSecret } });
  admin = await globalAdmin(t);
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  await priceTestKinds(t);
  await giveCredits(t, a.site, 1000, a.editor.user.id);
  await giveCredits(t, a.site, 1000, a.admin.user.id);
  await giveCredits(t, b.site, 1000, b.editor.user.id);
  const first = await limitedProcess();
  processes.push(first);
  limited = first.app;
});
afterAll(async () => {
  for (const { services } of processes) await closeServices(services);
  await stopTestApp(t);
});

const from = (ip: string) => ({ 'X-Forwarded-For': ip });
const policyOf = (res: request.Response) => res.headers['ratelimit-policy'] as string;
const stateOf = (res: request.Response) => res.headers['ratelimit'] as string;

describe('without a token: per IP', () => {
  it('counts every request from an address, unknown paths too, and refuses past the limit with Retry-After', async () => {
    const client = from('203.0.113.10');
    const first = await request(limited).get('/health/live').set(client).expect(200);
    expect(policyOf(first)).toBe('"per-ip";q=3;w=60');
    expect(stateOf(first)).toMatch(/^"per-ip";r=2;t=\d+$/);
    const scan = await request(limited).get('/wp-admin/setup.php').set(client).expect(404);
    expect(stateOf(scan)).toMatch(/^"per-ip";r=1;t=\d+$/);
    await request(limited).get('/health/live').set(client).expect(200);
    // Over the limit, even a malformed body is not read: the answer is the 429.
    const refused = await request(limited)
      .post('/auth/login')
      .set(client)
      .set('Content-Type', 'application/json')
      .send('{not json')
      .expect(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: '/problems/rate-limited', status: 429, policy: 'per-ip' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(stateOf(refused)).toMatch(/^"per-ip";r=0;t=\d+$/);
    // Another address is not affected.
    await request(limited).get('/health/live').set(from('203.0.113.11')).expect(200);
  });

  it('counts an IPv6 client by its /64', async () => {
    for (const host of ['1', '2', '3']) {
      await request(limited)
        .get('/health/live')
        .set(from(`2001:db8:1:2::${host}`))
        .expect(200);
    }
    await request(limited).get('/health/live').set(from('2001:db8:1:2:ffff::9')).expect(429);
    await request(limited).get('/health/live').set(from('2001:db8:1:3::1')).expect(200);
  });
});

describe('behind a trusted proxy', () => {
  it('counts the address one trusted hop saw, whatever the client wrote to the left of it', async () => {
    for (const [i, made] of ['10.0.0.1', '198.51.100.99', '2001:db8::1', 'unknown'].entries()) {
      const res = await request(limited)
        .get('/health/live')
        .set(from(`${made}, 203.0.113.50`))
        .expect(i < 3 ? 200 : 429);
      expect(stateOf(res)).toMatch(new RegExp(`^"per-ip";r=${Math.max(0, 2 - i)};t=\\d+$`));
    }
  });

  it('trusts only the listed proxies: the first address from the right that is not one of them is the client', async () => {
    const listed = await limitedProcess(['loopback', '10.0.0.0/8']);
    processes.push(listed);
    // The test's own connection is loopback, and 10.1.2.3 a listed proxy: 203.0.113.51 is the client.
    for (const [i, made] of ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'].entries()) {
      await request(listed.app)
        .get('/health/live')
        .set(from(`${made}, 203.0.113.51, 10.1.2.3`))
        .expect(i < 3 ? 200 : 429);
    }
    await request(listed.app).get('/health/live').set(from('203.0.113.52, 10.1.2.3')).expect(200);
  });
});

describe('behind no trusted proxy', () => {
  it('counts by the connection’s address: a forged X-Forwarded-For changes nothing', async () => {
    const direct = await limitedProcess(false);
    processes.push(direct);
    for (const [i, ip] of ['198.51.100.1', '198.51.100.2', '198.51.100.3'].entries()) {
      const res = await request(direct.app).get('/health/live').set(from(ip)).expect(200);
      expect(stateOf(res)).toMatch(new RegExp(`^"per-ip";r=${2 - i};t=\\d+$`));
    }
    await request(direct.app).get('/health/live').set(from('198.51.100.4')).expect(429);
  });
});

describe('with a token: per token', () => {
  it('counts each token on its own, apart from the address, and refuses past the limit', async () => {
    const client = from('203.0.113.20');
    const other = await login(t, a.author.user.email);
    for (let remaining = 3; remaining >= 0; remaining--) {
      const res = await request(limited).get('/auth/currentuser').set(client).set(a.author.auth).expect(200);
      expect(policyOf(res)).toBe('"per-token";q=4;w=60');
      expect(stateOf(res)).toMatch(new RegExp(`^"per-token";r=${remaining};t=\\d+$`));
    }
    const refused = await request(limited).get('/auth/currentuser').set(client).set(a.author.auth).expect(429);
    expect(refused.body).toMatchObject({ status: 429, policy: 'per-token' });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // The same user's other token, and the same address without a token, still go through.
    await request(limited).get('/auth/currentuser').set(client).set(bearer(other.access_token)).expect(200);
    await request(limited).get('/health/live').set(client).expect(200);
  });

  it('counts a forged token with someone else’s claims against the address, spending nothing of theirs', async () => {
    const [header, payload] = a.admin.token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(43)}`;
    for (let i = 0; i < 4; i++) {
      const res = await request(limited)
        .get('/auth/currentuser')
        .set(from('203.0.113.21'))
        .set(bearer(forged))
        .expect(i < 3 ? 401 : 429);
      expect(policyOf(res)).toBe('"per-ip";q=3;w=60');
    }
    const res = await request(limited).get('/auth/currentuser').set(a.admin.auth).expect(200);
    expect(stateOf(res)).toMatch(/^"per-token";r=3;t=\d+$/);
  });

  it('does not take a made-up token that borrows a real token’s signature for the real one', async () => {
    const client = from('203.0.113.24');
    const { access_token: real } = await login(t, a.editor.user.email);
    await request(limited).get('/auth/currentuser').set(client).set(bearer(real)).expect(200);
    const claims = Buffer.from(JSON.stringify({ sub: a.admin.user.id, typ: 'access' })).toString('base64url');
    const borrowed = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${claims}.${real.split('.')[2]}`;
    const refused = await request(limited).get('/auth/currentuser').set(client).set(bearer(borrowed)).expect(401);
    expect(policyOf(refused)).toBe('"per-ip";q=3;w=60');
    const res = await request(limited).get('/auth/currentuser').set(client).set(bearer(real)).expect(200);
    expect(stateOf(res)).toMatch(/^"per-token";r=2;t=\d+$/);
  });

  it('counts requests with a different made-up token each against the address, and stores nothing per token', async () => {
    const client = from('203.0.113.22');
    const forged = Array.from({ length: 8 }, (_, i) => {
      const claims = Buffer.from(JSON.stringify({ sub: `someone-${i}`, typ: 'access' })).toString('base64url');
      return `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${claims}.${`${i}`.repeat(43)}`;
    });
    const statuses: number[] = [];
    for (const token of forged)
      statuses.push((await request(limited).get('/auth/currentuser').set(client).set(bearer(token))).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    await processes[0]!.services.rateLimits.sync();
    const keys = forged.map((token) => `per-token:${token.slice(token.lastIndexOf('.') + 1).slice(0, 22)}`);
    expect(
      await t.services.db.oneFirst(
        sql.unsafe`select count(*)::int from rate_limits where key = any(${sql.array(keys, 'text')})`,
      ),
    ).toBe(0);
  });

  it('counts an expired token of ours against the address', async () => {
    const { token: expired } = signToken(t.config.auth, 'access', a.author.user.id, -60, { sid: 'ended' });
    const client = from('203.0.113.23');
    for (let i = 0; i < 4; i++) {
      const res = await request(limited)
        .get('/auth/currentuser')
        .set(client)
        .set(bearer(expired))
        .expect(i < 3 ? 401 : 429);
      expect(policyOf(res)).toBe('"per-ip";q=3;w=60');
    }
  });
});

describe('job submits: per tenant', () => {
  const submit = (staffed: Staffed) =>
    request(limited)
      .post(`/${staffed.site.slug}/media/tts`)
      .set(from('203.0.113.30'))
      .set(staffed.editor.auth)
      .send({ text: 'Hello there' });

  it('answers both policies on a submit, and past the tenant’s limit refuses without a job or a reservation', async () => {
    const first = await submit(a).expect(202);
    expect(policyOf(first)).toBe('"per-token";q=4;w=60, "per-tenant-jobs";q=2;w=60');
    expect(stateOf(first)).toMatch(/^"per-token";r=\d+;t=\d+, "per-tenant-jobs";r=1;t=\d+$/);
    // Another member of the tenant shares its allowance.
    await request(limited)
      .post(`/${a.site.slug}/media/tts`)
      .set(a.admin.auth)
      .send({ text: 'Hello again' })
      .expect(202);
    const jobsBefore = await t.services.db.oneFirst(
      sql.unsafe`select count(*)::int from jobs where tenant_id = ${a.tenant.id}`,
    );
    const refused = await submit(a).expect(429);
    expect(refused.body).toMatchObject({ policy: 'per-tenant-jobs' });
    expect(stateOf(refused)).toMatch(/"per-tenant-jobs";r=0;t=\d+$/);
    expect(
      await t.services.db.oneFirst(sql.unsafe`select count(*)::int from jobs where tenant_id = ${a.tenant.id}`),
    ).toBe(jobsBefore);
    // Another tenant is not affected.
    await submit(b).expect(202);
  });
});

describe('signed webhooks: failed signatures per IP', () => {
  const deliver = (ip: string, secret: string) => {
    const { payload, header } = signEvent({ id: `evt_${Math.random()}`, type: 'ping', data: { object: {} } }, secret);
    return request(limited)
      .post('/payments/webhook')
      .set(from(ip))
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', header)
      .send(payload);
  };

  it('never turns away valid deliveries, and refuses an address’s bad signatures past the limit', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await deliver('198.51.100.5', webhookSecret).expect(200);
      expect(policyOf(res)).toBe('"webhook-signatures";q=2;w=900');
    }
    await deliver('198.51.100.6', 'whsec_wrong').expect(400);
    await deliver('198.51.100.6', 'whsec_wrong').expect(400);
    const refused = await deliver('198.51.100.6', 'whsec_wrong').expect(429);
    expect(refused.body).toMatchObject({ policy: 'webhook-signatures' });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // Verified first: a correctly signed event from the same address still gets through, again and again.
    for (let i = 0; i < 3; i++) {
      const valid = await deliver('198.51.100.6', webhookSecret).expect(200);
      expect(stateOf(valid)).toMatch(/^"webhook-signatures";r=0;t=\d+$/);
    }
    await deliver('198.51.100.6', 'whsec_wrong').expect(429);
  });
});

describe('shared by every API process', () => {
  let second: { app: App; services: Services };
  beforeAll(async () => {
    second = await limitedProcess();
    processes.push(second);
  });

  it('adds up what each process let through once they sync, and both then refuse', async () => {
    const client = from('203.0.113.40');
    await request(limited).get('/health/live').set(client).expect(200);
    await request(second.app).get('/health/live').set(client).expect(200);
    await processes[0]!.services.rateLimits.sync();
    await second.services.rateLimits.sync();
    await processes[0]!.services.rateLimits.sync();
    // Each process has seen one request; after syncing both know of two, so the third is the last.
    const third = await request(limited).get('/health/live').set(client).expect(200);
    expect(stateOf(third)).toMatch(/^"per-ip";r=0;t=\d+$/);
    await processes[0]!.services.rateLimits.sync();
    await second.services.rateLimits.sync();
    await request(second.app).get('/health/live').set(client).expect(429);
    await request(limited).get('/health/live').set(client).expect(429);
  });
});

describe('GET /admin/monitoring/rate-limit-stats', () => {
  it('reports the request limiters, what they refused, and the keys over their limit', async () => {
    for (const { services } of processes) await services.rateLimits.sync();
    const res = await request(limited).get('/admin/monitoring/rate-limit-stats').set(admin.auth).expect(200);
    type Limiter = { name: string; refused_since_start: number };
    const byName = Object.fromEntries((res.body.limiters as Limiter[]).map((limiter) => [limiter.name, limiter]));
    expect(byName['per-ip']).toMatchObject({ limit: 3, window_seconds: 60 });
    expect(byName['per-ip']!.refused_since_start).toBeGreaterThanOrEqual(3);
    expect(byName['per-token']).toMatchObject({ limit: 4, refused_since_start: 1 });
    expect(byName['per-tenant-jobs']).toMatchObject({ limit: 2, refused_since_start: 1, blocked_keys: 1 });
    expect(byName['webhook-signatures']).toMatchObject({ limit: 2, refused_since_start: 2, blocked_keys: 1 });
    expect(res.body.blocked).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ limiter: 'per-ip', subject: '203.0.113.10', points: 4 }),
        expect.objectContaining({ limiter: 'per-ip', subject: '2001:db8:1:2::/64', points: 4 }),
        expect.objectContaining({ limiter: 'per-tenant-jobs', subject: a.tenant.id, points: 3 }),
      ]),
    );
  });
});
