// The security dashboard and threat intelligence through HTTP, from traffic
// the test really sends: failed sign-ins across accounts, a locked account,
// bad tokens, forbidden calls, scanning from an IPv6 /64, a refresh-token
// replay, sign-ups and a blocked tenant. TRUST_PROXY lets each pattern come
// from a network of its own (X-Forwarded-For).
import request from 'supertest';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { login, newUser, type Caller } from '../../helpers/factories.ts';
import { bearer, globalAdmin, staffedTenant, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let admin: Caller;
let staffed: Staffed;
let victim: { email: string };
beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_AUTH_PER_ACCOUNT: '3' } });
  admin = await globalAdmin(t);
  staffed = await staffedTenant(t);
  victim = await newUser(t);
  await sendTraffic();
  await t.services.statistics.flush(t.services.db);
});
afterAll(async () => {
  await stopTestApp(t);
});

const from = (ip: string) => ({ 'X-Forwarded-For': ip });
const signIn = (ip: string, username: string, password: string) =>
  request(t.app).post('/auth/login').set(from(ip)).type('form').send({ username, password, grant_type: 'password' });

async function sendTraffic() {
  // Credential stuffing: one network, four accounts.
  for (const account of ['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org']) {
    await signIn('198.51.100.7', account, 'guess').expect(401);
  }
  // One account guessed until the limiter locks it (3 failures).
  for (let i = 0; i < 3; i++) await signIn('198.51.100.8', victim.email, `wrong-${i}`).expect(401);
  await signIn('198.51.100.8', victim.email, 'again').expect(429);
  // Bad tokens, and calls a role may not make.
  for (let i = 0; i < 5; i++) {
    await request(t.app).get('/auth/currentuser').set(from('203.0.113.50')).set(bearer('not.a.token')).expect(401);
  }
  for (let i = 0; i < 2; i++) {
    await request(t.app)
      .get('/admin/monitoring/system-health')
      .set(from('203.0.113.51'))
      .set(staffed.author.auth)
      .expect(403);
  }
  // Scanning from two hosts of one IPv6 /64: unknown paths and wrong methods.
  for (let i = 0; i < 6; i++) {
    await request(t.app)
      .get(`/.env.${i}`)
      .set(from(`2001:db8:9:9::${i + 1}`))
      .expect(404);
    await request(t.app)
      .delete('/auth/currentuser')
      .set(from(`2001:db8:9:9::${i + 10}`))
      .expect(405);
  }
  // A refresh token replayed after its grace window: the session is revoked.
  const user = await newUser(t);
  const first = await login(t, user.email);
  await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(200);
  await t.services.db.query(
    sql.typeAlias(
      'void',
    )`update refresh_tokens set rotated_at = now() - interval '1 minute' where rotated_at is not null`,
  );
  await request(t.app).post('/auth/refresh-token').set(bearer(first.refresh_token)).expect(401);
  // Sign-ups: three from one network, one of them from a disposable domain (refused).
  for (const email of ['new1@example.org', 'new2@example.org', 'spam@mailinator.com']) {
    await request(t.app)
      .post('/auth/signup/')
      .set(from('192.0.2.77'))
      .send({ email, password: 'correct horse battery staple', full_name: 'Someone' });
  }
  // A blocked tenant.
  await request(t.app)
    .post(`/admin/fraud/block-tenant/${staffed.tenant.id}`)
    .set(admin.auth)
    .send({ reason: 'Phishing pages' })
    .expect(200);
}

describe('GET /admin/monitoring/security-dashboard', () => {
  it('shows failed sign-ins, 401/403 rates, replays, locked accounts, sign-ups and blocked tenants', async () => {
    const res = await request(t.app).get('/admin/monitoring/security-dashboard').set(admin.auth).expect(200);
    const body = res.body;
    // 4 + 3 failed checks; the refused fourth attempt on the locked account never reached the check.
    expect(body.failed_logins).toMatchObject({ total: 7, accounts: 5, networks: 2 });
    expect(body.failed_logins.per_hour.reduce((sum: number, row: { count: number }) => sum + row.count, 0)).toBe(7);
    // 401s: the seven failed sign-ins, five bad tokens, one replay; 403s: the author's two calls and the refused sign-up.
    expect(body.responses).toMatchObject({ unauthorized: 13, forbidden: 3 });
    // Requests that reached an endpoint (unknown paths and wrong methods are not an endpoint's).
    expect(body.responses.requests).toBeGreaterThan(20);
    expect(body.responses.unauthorized_rate).toBeCloseTo(13 / body.responses.requests, 5);
    expect(body.refresh_token_replays.sessions_revoked).toBe(1);
    expect(body.refresh_token_replays.recent).toEqual([expect.objectContaining({ email: expect.any(String) })]);
    expect(body.locked_accounts).toEqual([
      expect.objectContaining({ action: 'login', account: victim.email.toLowerCase(), failures: 3 }),
    ]);
    expect(body.signups).toMatchObject({ attempts: 3, blocked: 1 });
    expect(body.blocked_tenants).toEqual([
      expect.objectContaining({ tenant_id: staffed.tenant.id, reason: 'Phishing pages', blocked_by: admin.user.id }),
    ]);
  });

  it('is for global admins, and checks its window', async () => {
    await request(t.app).get('/admin/monitoring/security-dashboard').expect(401);
    await request(t.app).get('/admin/monitoring/security-dashboard').set(staffed.admin.auth).expect(403);
    await request(t.app).get('/admin/monitoring/security-dashboard?hours=0').set(admin.auth).expect(422);
  });
});

describe('GET /admin/monitoring/threat-intelligence', () => {
  it('names the networks behind each pattern, with evidence and first and last seen', async () => {
    const res = await request(t.app)
      .get('/admin/monitoring/threat-intelligence?min_not_found=10&min_unauthorized=5')
      .set(admin.auth)
      .expect(200);
    const byNetwork = Object.fromEntries(
      (res.body.networks as { network: string }[]).map((entry) => [entry.network, entry]),
    );
    expect(byNetwork['198.51.100.7']).toMatchObject({
      patterns: ['credential_stuffing'],
      evidence: { failed_logins: 4, accounts_tried: 4, unauthorized: 4 },
    });
    expect(byNetwork['2001:db8:9:9::/64']).toMatchObject({
      patterns: ['scanning'],
      evidence: { not_found: 6, method_not_allowed: 6 },
    });
    expect(byNetwork['203.0.113.50']).toMatchObject({ patterns: ['token_guessing'], evidence: { unauthorized: 5 } });
    expect(byNetwork['192.0.2.77']).toMatchObject({
      patterns: ['signup_burst'],
      evidence: { signups: 3, blocked_signups: 1 },
    });
    // One forgetful account is not stuffing.
    expect(byNetwork['198.51.100.8']).toBeUndefined();
    const scan = byNetwork['2001:db8:9:9::/64'] as unknown as { first_seen: string; last_seen: string };
    expect(Date.parse(scan.first_seen)).toBeLessThanOrEqual(Date.parse(scan.last_seen));
    expect(res.body.thresholds).toEqual({ min_accounts: 3, min_not_found: 10, min_unauthorized: 5, min_signups: 3 });
  });

  it('is for global admins, and checks its thresholds', async () => {
    await request(t.app).get('/admin/monitoring/threat-intelligence').expect(401);
    await request(t.app).get('/admin/monitoring/threat-intelligence').set(staffed.editor.auth).expect(403);
    await request(t.app).get('/admin/monitoring/threat-intelligence?min_accounts=0').set(admin.auth).expect(422);
  });
});
