// Bulk retry of failed jobs and bulk cancel of queued and waiting ones, by
// the admin list's filters: a dry run counts and changes nothing; the action
// touches only the matching jobs in the states it takes, moves credits as the
// single retry and cancel do (the ledger still adds up), skips a retry whose
// payer can no longer cover it, and leaves an audit line. 401/403/422.
import { jest } from '@jest/globals';
import request from 'supertest';
import { z } from 'zod';
import type { Actor } from '../../../core/actor.ts';
import { bulkCancel } from '../../../core/jobs/bulk.ts';
import { fail } from '../../../core/jobs/settle.ts';
import type { Logger } from '../../../core/logger.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { sql } from '../../../db/pool.ts';
import type { TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import type { Staffed } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, newJob, readJob, submitAs } from '../../helpers/jobs.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

const suite = jobsSuite();
let t: TestApp;
let a: Staffed;
let admin: Caller;

beforeAll(async () => {
  ({ t, a, admin } = suite);
});

const actorOf = (caller: Caller): Actor => ({
  kind: 'user',
  userId: caller.user.id,
  sessionId: 'test',
  isGlobalAdmin: false,
});

/** A tenant of its own with one site and a payer holding `credits`, so counts are this test's alone. */
async function payerOnNewTenant(credits: number) {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const payer = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, credits, payer.user.id);
  return { tenant, site, payer };
}

const submit = (payer: Caller, site: Site, kind: string, units: number) =>
  submitAs(t, actorOf(payer), site, { kind, input: { transient: false }, estimatedUnits: units });

/** A submitted job that failed as a worker fails it (credits released), with this error code. */
async function failedJob(payer: Caller, site: Site, units: number, code = 'provider_rejected') {
  const { id } = await submit(payer, site, 'test_fail', units);
  await fail(t.services.db, await readJob(t, id), { code, message: 'no' });
  return readJob(t, id);
}

const queueEntries = (jobId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from graphile_worker.jobs where key = ${`job:${jobId}`}`);

const reservedOf = (userId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ reserved: z.number() }))`
    select coalesce(sum(reserved), 0)::int as reserved from credit_accounts where user_id = ${userId}`);

describe('POST /admin/jobs/bulk-retry', () => {
  it('counts the matching failed jobs on a dry run, then retries just those, reserving their credits again', async () => {
    const { tenant, site, payer } = await payerOnNewTenant(100);
    const rejected = [await failedJob(payer, site, 2), await failedJob(payer, site, 3)];
    const otherCode = await failedJob(payer, site, 2, 'invalid_input');
    const queued = await submit(payer, site, 'test_noop', 1);
    const elsewhere = await newJob(t, a.site, { status: 'failed', kind: 'test_fail' });
    const filter = { tenant: tenant.name, error_code: 'provider_rejected' };

    const counted = await request(t.app)
      .post('/admin/jobs/bulk-retry')
      .set(admin.auth)
      .send({ ...filter, dry_run: true })
      .expect(200);
    expect(counted.body).toEqual({ dry_run: true, matched: 2, done: 0, skipped: 0, remaining: 2, limit: 10_000 });
    for (const job of rejected) expect((await readJob(t, job.id)).status).toBe('failed');
    expect(await reservedOf(payer.user.id)).toBe(1);

    const acted = await request(t.app).post('/admin/jobs/bulk-retry').set(admin.auth).send(filter).expect(200);
    expect(acted.body).toEqual({ dry_run: false, matched: 2, done: 2, skipped: 0, remaining: 0, limit: 10_000 });
    for (const job of rejected) {
      expect(await readJob(t, job.id)).toMatchObject({ status: 'queued', error: null, finished_at: null });
      expect(await queueEntries(job.id)).toBe(1);
      expect((await ledgerFor(t, job.id)).map((entry) => entry.kind)).toEqual([
        'reservation',
        'release',
        'reservation',
      ]);
    }
    // The queued job's 1 and the two retried jobs' 2 and 3.
    expect(await reservedOf(payer.user.id)).toBe(6);
    expect((await readJob(t, otherCode.id)).status).toBe('failed');
    expect((await readJob(t, queued.id)).status).toBe('queued');
    expect((await readJob(t, elsewhere.id)).status).toBe('failed');
    await expectLedgerHolds(t);

    // Nothing failed matches any more.
    const again = await request(t.app).post('/admin/jobs/bulk-retry').set(admin.auth).send(filter).expect(200);
    expect(again.body).toMatchObject({ matched: 0, done: 0 });
  });

  it('skips a job whose payer can no longer cover it and retries the rest', async () => {
    const { tenant, site, payer } = await payerOnNewTenant(6);
    const first = await failedJob(payer, site, 4);
    const second = await failedJob(payer, site, 4);

    const res = await request(t.app)
      .post('/admin/jobs/bulk-retry')
      .set(admin.auth)
      .send({ tenant_id: tenant.id })
      .expect(200);
    // In id order: whichever comes first takes 4 of the 6 credits; the other cannot.
    expect(res.body).toMatchObject({ matched: 2, done: 1, skipped: 1, remaining: 0 });
    const statuses = [(await readJob(t, first.id)).status, (await readJob(t, second.id)).status].sort();
    expect(statuses).toEqual(['failed', 'queued']);
    expect(await reservedOf(payer.user.id)).toBe(4);
    await expectLedgerHolds(t);
  });
});

describe('POST /admin/jobs/bulk-cancel', () => {
  it('counts the matching queued and waiting jobs, then cancels those and releases their credits; running ones stay', async () => {
    const { site, payer } = await payerOnNewTenant(100);
    const queued = [await submit(payer, site, 'test_noop', 2), await submit(payer, site, 'test_noop', 3)];
    const otherKind = await submit(payer, site, 'test_sleep', 1);
    const waiting = await newJob(t, site, { kind: 'test_noop', status: 'waiting' });
    const running = await newJob(t, site, { kind: 'test_noop', status: 'running' });
    const elsewhere = await newJob(t, a.site, { kind: 'test_noop' });
    expect(await reservedOf(payer.user.id)).toBe(6);
    const filter = { site: site.slug, kind: 'test_noop' };

    const counted = await request(t.app)
      .post('/admin/jobs/bulk-cancel')
      .set(admin.auth)
      .send({ ...filter, dry_run: true })
      .expect(200);
    expect(counted.body).toEqual({ dry_run: true, matched: 3, done: 0, skipped: 0, remaining: 3, limit: 10_000 });
    expect((await readJob(t, queued[0]!.id)).status).toBe('queued');

    const acted = await request(t.app).post('/admin/jobs/bulk-cancel').set(admin.auth).send(filter).expect(200);
    expect(acted.body).toEqual({ dry_run: false, matched: 3, done: 3, skipped: 0, remaining: 0, limit: 10_000 });
    for (const job of [...queued, waiting]) {
      expect(await readJob(t, job.id)).toMatchObject({ status: 'canceled', error: { code: 'canceled' } });
      expect(await queueEntries(job.id)).toBe(0);
    }
    expect((await ledgerFor(t, queued[1]!.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(await reservedOf(payer.user.id)).toBe(1);
    expect((await readJob(t, otherKind.id)).status).toBe('queued');
    expect((await readJob(t, running.id)).status).toBe('running');
    expect((await readJob(t, elsewhere.id)).status).toBe('queued');
    await expectLedgerHolds(t);
  });

  it('writes one audit line naming the admin, the filter and the counts', async () => {
    const { tenant, site, payer } = await payerOnNewTenant(10);
    await submit(payer, site, 'test_noop', 1);
    const info = jest.fn();
    const logger = { info } as unknown as Logger;
    const adminActor: Actor = { kind: 'user', userId: admin.user.id, sessionId: 'test', isGlobalAdmin: true };
    const deadline = Date.now() + 30_000;

    await bulkCancel(t.services.db, adminActor, { tenant_id: tenant.id, dry_run: true }, { logger, deadline });
    expect(info).not.toHaveBeenCalled();
    const result = await bulkCancel(
      t.services.db,
      adminActor,
      { tenant_id: tenant.id, dry_run: false },
      { logger, deadline },
    );
    expect(result).toMatchObject({ matched: 1, done: 1 });
    expect(info).toHaveBeenCalledTimes(1);
    expect(info.mock.calls[0]![0]).toEqual({
      audit: 'jobs.bulk_cancel',
      admin_id: admin.user.id,
      filter: { tenant_id: tenant.id },
      matched: 1,
      done: 1,
      skipped: 0,
      remaining: 0,
    });
  });
  it('starts no batch once the request’s time is nearly up, and says how many are left', async () => {
    const { tenant, site, payer } = await payerOnNewTenant(10);
    const job = await submit(payer, site, 'test_noop', 1);
    const logger = { info: jest.fn() } as unknown as Logger;
    const adminActor: Actor = { kind: 'user', userId: admin.user.id, sessionId: 'test', isGlobalAdmin: true };
    const result = await bulkCancel(
      t.services.db,
      adminActor,
      { tenant_id: tenant.id, dry_run: false },
      { logger, deadline: Date.now() + 1_000 },
    );
    expect(result).toMatchObject({ matched: 1, done: 0, remaining: 1 });
    expect((await readJob(t, job.id)).status).toBe('queued');
  });
});

describe('who may, and what', () => {
  it('is 401 without a token and 403 for tenant staff', async () => {
    for (const path of ['/admin/jobs/bulk-retry', '/admin/jobs/bulk-cancel']) {
      const anonymous = await request(t.app).post(path).send({ dry_run: true }).expect(401);
      expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
      for (const caller of [a.admin, a.editor]) {
        const res = await request(t.app).post(path).set(caller.auth).send({ dry_run: true }).expect(403);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
    }
  });

  it('is 422 for a filter it does not take or a bad value, and changes nothing', async () => {
    const job = await newJob(t, a.site, { kind: 'test_noop' });
    for (const body of [
      { status: 'failed' },
      { dry_run: 'yes' },
      { kind: 'Not A Kind' },
      { tenant_id: 'not-a-uuid' },
      { created_before: 'yesterday' },
    ]) {
      const res = await request(t.app).post('/admin/jobs/bulk-cancel').set(admin.auth).send(body).expect(422);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
    expect((await readJob(t, job.id)).status).toBe('queued');
  });
});
