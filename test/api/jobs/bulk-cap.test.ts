// One bulk call acts on at most 10,000 jobs (core/jobs/bulk.ts bulkLimit):
// with 10,050 matching, a dry run counts them all and says the limit; the
// cancel takes 10,000 and says 50 remain; the next call takes those 50. The
// jobs are made in one insert, without queue entries or credits, so the
// file's cost is the cancels themselves.
import request from 'supertest';
import { z } from 'zod';
import { bulkLimit } from '../../../core/jobs/bulk.ts';
import { sql } from '../../../db/pool.ts';
import { unique } from '../../helpers/identity.ts';
import { jobsSuite } from '../../helpers/jobs.ts';

const suite = jobsSuite();
const over = 50;

it('cancels at most 10,000 jobs a call, and says how many are left for the next', async () => {
  const { t, a, admin } = suite;
  const kind = `test_many_${unique()}`;
  await t.services.db.query(sql.typeAlias('void')`
    insert into jobs (tenant_id, site_id, kind, status, input)
    select ${a.site.tenant_id}, ${a.site.id}, ${kind}, 'queued', '{}'::jsonb
    from generate_series(1, ${bulkLimit + over})`);
  const bulkCancel = (body: Record<string, unknown>) =>
    request(t.app)
      .post('/admin/jobs/bulk-cancel')
      .set(admin.auth)
      .send({ kind, ...body })
      .expect(200);

  const counted = await bulkCancel({ dry_run: true });
  expect(counted.body).toEqual({
    dry_run: true,
    matched: bulkLimit + over,
    done: 0,
    skipped: 0,
    remaining: bulkLimit + over,
    limit: 10_000,
  });

  const first = await bulkCancel({});
  expect(first.body).toMatchObject({ matched: bulkLimit + over, done: bulkLimit, remaining: over, limit: 10_000 });
  const statuses = () =>
    t.services.db.any(sql.type(z.object({ status: z.string(), count: z.number() }))`
      select status, count(*)::int as count from jobs where kind = ${kind} group by status order by status`);
  expect(await statuses()).toEqual([
    { status: 'canceled', count: bulkLimit },
    { status: 'queued', count: over },
  ]);

  const second = await bulkCancel({});
  expect(second.body).toMatchObject({ matched: over, done: over, remaining: 0 });
  expect(await statuses()).toEqual([{ status: 'canceled', count: bulkLimit + over }]);
});
