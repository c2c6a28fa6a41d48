// Fraud detection through HTTP: sign-ups from several addresses and networks
// (TRUST_PROXY, so X-Forwarded-For names the client) refused or flagged by the
// screening, the admin lists and patterns that show them, and blocking a
// tenant: its members, service accounts and jobs.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { giveCredits, newJob, priceTestKinds, readJob, submitAs } from '../../helpers/jobs.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

let t: TestApp;
let admin: Caller;
beforeAll(async () => {
  t = await startTestApp({
    env: {
      TRUST_PROXY: '1',
      SIGNUP_MAX_PER_IP: '3',
      SIGNUP_MAX_PER_NETWORK: '6',
      SIGNUP_BURST_COUNT: '3',
    },
  });
  admin = await globalAdmin(t);
});
afterAll(async () => {
  await expectLedgerHolds(t);
  await stopTestApp(t);
});

let hosts = 0;
/** A client address of its own (IPv4). */
const ipv4 = () => `198.51.100.${++hosts}`;

const signUp = (email: string, ip: string) =>
  request(t.app)
    .post('/auth/signup/')
    .set('X-Forwarded-For', ip)
    .send({ email, password: 'correct horse battery staple', full_name: 'Someone' });

const screeningsOf = (email: string) =>
  t.services.db.any(sql.type(
    z.object({
      outcome: z.string(),
      reasons: z.array(z.string()),
      ip: z.string().nullable(),
      network: z.string().nullable(),
    }),
  )`
    select outcome, reasons, ip, network from signup_screenings where email = ${email} order by created_at`);

const usersNamed = (email: string) =>
  t.services.db.oneFirst(
    sql.type(z.object({ n: z.number() }))`select count(*)::int as n from users where lower(email) = lower(${email})`,
  );

describe('sign-up screening', () => {
  it('refuses a throwaway domain without saying why, and records it', async () => {
    const email = `someone-${unique()}@mailinator.com`;
    const res = await signUp(email, ipv4()).expect(403);
    expect(res.body.type).toBe('/problems/signup-refused');
    expect(res.body.detail).not.toMatch(/disposable|throwaway|mailinator/i);
    expect(await usersNamed(email)).toBe(0);
    expect(await screeningsOf(email)).toEqual([
      expect.objectContaining({ outcome: 'blocked', reasons: ['disposable_domain'] }),
    ]);
  });

  it('limits sign-ups per address', async () => {
    const ip = ipv4();
    for (let i = 0; i < 3; i++) await signUp(`per-ip-${i}-${unique()}@example.com`, ip).expect(201);
    const fourth = `per-ip-3-${unique()}@example.com`;
    await signUp(fourth, ip).expect(403);
    expect(await screeningsOf(fourth)).toEqual([
      expect.objectContaining({ outcome: 'blocked', reasons: ['ip_limit'], ip }),
    ]);
    // Another address is not held back.
    await signUp(`per-ip-other-${unique()}@example.com`, ipv4()).expect(201);
  });

  it('counts an IPv6 /64 as one network, and an IPv4-mapped address as its IPv4 client', async () => {
    const prefix = `2001:db8:${(++hosts).toString(16)}:1`;
    for (let i = 1; i <= 6; i++) await signUp(`v6-${unique()}@example.com`, `${prefix}::${i.toString(16)}`).expect(201);
    const seventh = `v6-${unique()}@example.com`;
    await signUp(seventh, `${prefix}::ff`).expect(403);
    expect(await screeningsOf(seventh)).toEqual([
      expect.objectContaining({ outcome: 'blocked', reasons: ['network_limit'], network: `${prefix}::/64` }),
    ]);
    const mapped = `mapped-${unique()}@example.com`;
    await signUp(mapped, `::ffff:203.0.113.${++hosts}`).expect(201);
    expect((await screeningsOf(mapped))[0]).toMatchObject({ ip: `203.0.113.${hosts}`, network: `203.0.113.${hosts}` });
  });

  it('lets a second spelling of one mailbox through, flagged', async () => {
    const local = `jane.doe.${unique()}`;
    await signUp(`${local}@gmail.com`, ipv4()).expect(201);
    const twin = `${local.replace(/\./g, '')}+promo@googlemail.com`;
    await signUp(twin, ipv4()).expect(201);
    const [screening] = await screeningsOf(twin);
    expect(screening).toMatchObject({ outcome: 'flagged', reasons: ['canonical_duplicate'] });
  });

  it('flags a burst of similar addresses from one network', async () => {
    const ip = ipv4();
    const stem = `ann${unique().replace(/[0-9]/g, 'x')}`;
    await signUp(`${stem}1@example.net`, ip).expect(201);
    await signUp(`${stem}2@example.net`, ip).expect(201);
    const third = `${stem}3@example.net`;
    await signUp(third, ip).expect(201);
    expect((await screeningsOf(third))[0]).toMatchObject({
      outcome: 'flagged',
      reasons: ['similar_burst'],
    });
    expect((await screeningsOf(`${stem}2@example.net`))[0]).toMatchObject({ outcome: 'allowed' });
  });
});

describe('GET /admin/fraud/blocked-signups and /suspicious-signups', () => {
  it('list what the screening refused and flagged, for global admins', async () => {
    const blocked = await request(t.app).get('/admin/fraud/blocked-signups').set(admin.auth).expect(200);
    expect(blocked.body.items.length).toBeGreaterThanOrEqual(3);
    expect(
      blocked.body.items.every(
        (item: { outcome: string; user: unknown }) => item.outcome === 'blocked' && item.user === null,
      ),
    ).toBe(true);
    const byReason = await request(t.app)
      .get('/admin/fraud/blocked-signups')
      .query({ reason: 'ip_limit', include_total: 'true' })
      .set(admin.auth)
      .expect(200);
    expect(byReason.body.total).toBe(1);
    expect(byReason.body.items[0].reasons).toEqual(['ip_limit']);
    const flagged = await request(t.app).get('/admin/fraud/suspicious-signups').set(admin.auth).expect(200);
    const twin = flagged.body.items.find((item: { reasons: string[] }) => item.reasons.includes('canonical_duplicate'));
    expect(twin.user).toMatchObject({ email: twin.email, status: 'active' });
    expect(twin.email_canonical).toMatch(/@gmail\.com$/);
    const page = await request(t.app)
      .get('/admin/fraud/suspicious-signups')
      .query({ limit: 1 })
      .set(admin.auth)
      .expect(200);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const staffed = await staffedTenant(t);
    await request(t.app).get('/admin/fraud/blocked-signups').set(staffed.admin.auth).expect(403);
    await request(t.app).get('/admin/fraud/suspicious-signups').expect(401);
    await request(t.app).get('/admin/fraud/blocked-signups').query({ from: 'yesterday' }).set(admin.auth).expect(422);
  });
});

describe('GET /admin/fraud/abuse-patterns', () => {
  it('shows the busy networks, shared mailboxes and tenants whose jobs keep failing', async () => {
    const noisy = await staffedTenant(t);
    for (let i = 0; i < 6; i++) await newJob(t, noisy.site, { status: 'failed' });
    const quiet = await staffedTenant(t);
    for (let i = 0; i < 6; i++) await newJob(t, quiet.site, { status: 'succeeded' });
    const res = await request(t.app).get('/admin/fraud/abuse-patterns').set(admin.auth).expect(200);
    expect(res.body.signups.blocked).toBeGreaterThanOrEqual(3);
    expect(res.body.signups.blocked_by_reason.map((row: { reason: string }) => row.reason)).toEqual(
      expect.arrayContaining(['disposable_domain', 'ip_limit', 'network_limit']),
    );
    expect(res.body.busy_networks[0]).toMatchObject({ attempts: expect.any(Number), blocked: expect.any(Number) });
    expect(res.body.busy_networks.some((row: { network: string }) => row.network.endsWith('::/64'))).toBe(true);
    expect(res.body.shared_mailboxes.some((row: { accounts: number }) => row.accounts === 2)).toBe(true);
    const ids = res.body.tenants.map((row: { tenant_id: string }) => row.tenant_id);
    expect(ids).toContain(noisy.tenant.id);
    expect(ids).not.toContain(quiet.tenant.id);
    expect(res.body.tenants.find((row: { tenant_id: string }) => row.tenant_id === noisy.tenant.id)).toMatchObject({
      jobs: 6,
      failed_jobs: 6,
      failure_rate: 1,
      reasons: ['job_failures'],
    });
    await request(t.app).get('/admin/fraud/abuse-patterns').query({ window_hours: 0 }).set(admin.auth).expect(422);
    await request(t.app).get('/admin/fraud/abuse-patterns').set(noisy.admin.auth).expect(403);
  });
});

describe('POST /admin/fraud/block-tenant/{tenant_id}', () => {
  /** A paid job of the member's on the tenant's site (5 units reserved), its events sent to `webhook` if given. */
  const paidJob = (staffed: Staffed, userId: string, webhook?: string) =>
    submitAs(t, { kind: 'user', userId, sessionId: 'test', isGlobalAdmin: false }, staffed.site, {
      kind: 'test_noop',
      input: {},
      estimatedUnits: 5,
      webhook: webhook ? { url: webhook, events: ['completed'] } : null,
    });

  it('blocks members, service accounts and jobs at once, and PATCH to active undoes the block', async () => {
    const staffed = await staffedTenant(t);
    const robot = await serviceAccount(t, staffed.tenant, ['sites:read', 'jobs:write']);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(staffed.editor.auth).expect(200);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(robot.auth).expect(200);
    await priceTestKinds(t);
    await giveCredits(t, staffed.site, 100, staffed.admin.user.id);
    const job = await paidJob(staffed, staffed.admin.user.id);
    expect((await readJob(t, job.id)).credits_reserved).toBeGreaterThan(0);
    const running = await newJob(t, staffed.site, { status: 'running' });

    await request(t.app)
      .post(`/admin/fraud/block-tenant/${staffed.tenant.id}`)
      .set(staffed.admin.auth)
      .send({ reason: 'spam' })
      .expect(403);
    await request(t.app).post(`/admin/fraud/block-tenant/${staffed.tenant.id}`).set(admin.auth).send({}).expect(422);
    await request(t.app)
      .post(`/admin/fraud/block-tenant/${crypto.randomUUID()}`)
      .set(admin.auth)
      .send({ reason: 'spam' })
      .expect(404);
    const res = await request(t.app)
      .post(`/admin/fraud/block-tenant/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ reason: 'Sending spam through the contact pages' })
      .expect(200);
    expect(res.body).toMatchObject({
      tenant_id: staffed.tenant.id,
      status: 'blocked',
      blocked_by: admin.user.id,
      reason: 'Sending spam through the contact pages',
      service_accounts_disabled: 1,
      jobs_canceled: 2,
    });
    // The very next requests: the members reach nothing, the service account's token is refused.
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(staffed.editor.auth).expect(404);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(staffed.admin.auth).expect(404);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(robot.auth).expect(401);
    const canceled = await readJob(t, job.id);
    expect(canceled).toMatchObject({ status: 'canceled' });
    expect(canceled.error).toMatchObject({ code: 'canceled', message: expect.stringContaining('Tenant blocked') });
    expect((await readJob(t, running.id)).status).toBe('canceled');
    const reserved = await t.services.db.oneFirst(sql.type(z.object({ reserved: z.number() }))`
      select coalesce(sum(reserved), 0)::int8 as reserved from credit_accounts where tenant_id = ${staffed.tenant.id}`);
    expect(reserved).toBe(0);
    await request(t.app)
      .post(`/admin/fraud/block-tenant/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ reason: 'again' })
      .expect(409);
    // Unblocked: the members are back; the service account stays disabled until someone enables it.
    await request(t.app)
      .patch(`/admin/tenants/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ status: 'active' })
      .expect(200);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(staffed.editor.auth).expect(200);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(robot.auth).expect(401);
  });

  it('cancels a flood of jobs of several payers at once: each released once, each webhook told', async () => {
    const staffed = await staffedTenant(t);
    await priceTestKinds(t);
    const payers = [staffed.admin, staffed.editor];
    for (const payer of payers) await giveCredits(t, staffed.site, 10_000, payer.user.id);
    const jobs = [];
    for (let i = 0; i < 300; i++) jobs.push(await paidJob(staffed, payers[i % 2]!.user.id));
    const told = await paidJob(staffed, staffed.admin.user.id, 'https://hooks.example.com/flood');
    const finished = await newJob(t, staffed.site, { status: 'succeeded' });
    const res = await request(t.app)
      .post(`/admin/fraud/block-tenant/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ reason: 'Flooding the queue' })
      .expect(200);
    expect(res.body.jobs_canceled).toBe(301);
    const rows = await t.services.db.any(sql.type(
      z.object({ status: z.string(), releases: z.number(), reserved_left: z.number(), queued: z.number() }),
    )`
      select j.status, count(*) filter (where e.kind = 'release')::int as releases,
             coalesce(sum(e.reserved_change), 0)::int as reserved_left,
             (select count(*) from graphile_worker.jobs q where q.key = 'job:' || j.id)::int as queued
      from jobs j left join credit_entries e on e.job_id = j.id
      where j.id = any(${sql.array(
        [...jobs, told].map((job) => job.id),
        'uuid',
      )}) group by j.id`);
    expect(rows).toHaveLength(301);
    expect(
      rows.filter(
        (row) => row.status !== 'canceled' || row.releases !== 1 || row.reserved_left !== 0 || row.queued !== 0,
      ),
    ).toEqual([]);
    const reserved = await t.services.db.anyFirst(sql.type(z.object({ reserved: z.number() }))`
      select reserved::int from credit_accounts where tenant_id = ${staffed.tenant.id}`);
    expect(reserved).toEqual([0, 0]);
    await expectLedgerHolds(t);
    // The job that had finished stays as it was; the one with a webhook is told of its end.
    expect((await readJob(t, finished.id)).status).toBe('succeeded');
    const deliveries = await t.services.db.any(sql.type(z.object({ event: z.string(), payload: z.string() }))`
      select event, payload from job_webhooks where job_id = ${told.id}`);
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({
      type: 'job.completed',
      data: { id: told.id, status: 'canceled' },
    });
  });

  it('is what a global admin’s PATCH to blocked does too: nothing of the tenant runs or stays reserved', async () => {
    const staffed = await staffedTenant(t);
    const robot = await serviceAccount(t, staffed.tenant, ['sites:read', 'jobs:write']);
    await priceTestKinds(t);
    await giveCredits(t, staffed.site, 100, staffed.admin.user.id);
    const job = await paidJob(staffed, staffed.admin.user.id);
    const patched = await request(t.app)
      .patch(`/admin/tenants/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ status: 'blocked', name: 'Blocked Co' })
      .expect(200);
    expect(patched.body).toMatchObject({ status: 'blocked', name: 'Blocked Co' });
    expect((await readJob(t, job.id)).status).toBe('canceled');
    const reserved = await t.services.db.oneFirst(sql.type(z.object({ reserved: z.number() }))`
      select coalesce(sum(reserved), 0)::int8 as reserved from credit_accounts where tenant_id = ${staffed.tenant.id}`);
    expect(reserved).toBe(0);
    await expectLedgerHolds(t);
    await request(t.app).get(`/sites/${staffed.site.slug}`).set(robot.auth).expect(401);
    const recorded = await t.services.db.one(
      sql.type(
        z.object({ blocked_by: z.uuid().nullable(), blocked_reason: z.string().nullable() }),
      )`select blocked_by, blocked_reason from tenants where id = ${staffed.tenant.id}`,
    );
    expect(recorded).toEqual({ blocked_by: admin.user.id, blocked_reason: expect.stringContaining('PATCH') });
    // Blocked again: nothing more to do, and the first block's record stays.
    await request(t.app)
      .patch(`/admin/tenants/${staffed.tenant.id}`)
      .set(admin.auth)
      .send({ status: 'blocked' })
      .expect(200);
    // A PATCH that fails (a slug taken) blocks nothing either.
    const other = await staffedTenant(t);
    await request(t.app)
      .patch(`/admin/tenants/${other.tenant.id}`)
      .set(admin.auth)
      .send({ status: 'blocked', slug: patched.body.slug })
      .expect(409);
    expect(
      (await request(t.app).get(`/admin/tenants/${other.tenant.id}`).set(admin.auth).expect(200)).body.status,
    ).toBe('active');
  });
});
