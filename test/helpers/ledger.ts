// The ledger's invariant, checked after tests that move credits: every
// account's balance and reserved credits are the sums of its entries, and no
// account's expiring lots hold more than its balance; and each job's own
// entries after it ended, however often its workers were killed.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import type { TestApp } from './app.ts';

export async function expectLedgerHolds(t: TestApp): Promise<void> {
  const mismatches = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select a.id from credit_accounts a
    left join (select account_id, sum(amount) as amount, sum(reserved_change) as reserved from credit_entries group by account_id) e on e.account_id = a.id
    left join (select account_id, sum(remaining) as remaining from credit_lots group by account_id) l on l.account_id = a.id
    where a.balance <> coalesce(e.amount, 0) or a.reserved <> coalesce(e.reserved, 0) or coalesce(l.remaining, 0) > a.balance`);
  expect(mismatches).toEqual([]);
}

const settlement = z.object({
  id: z.string(),
  status: z.string(),
  credits_charged: z.number(),
  reservations: z.number(),
  debits: z.number(),
  debited: z.number(),
  reserved_left: z.number(),
  open_attempts: z.number(),
  queue_entries: z.number(),
});

/**
 * Each job ended, and settled once: one reservation, at most one debit (of
 * what the job says it charged, and only if it succeeded), the rest released,
 * no attempt left open and nothing left on the queue to run it again.
 * Answers how many ended in each status.
 */
export async function expectSettledOnce(t: TestApp, jobIds: readonly string[]): Promise<Record<string, number>> {
  const rows = await t.services.db.any(sql.type(settlement)`
    select j.id, j.status, j.credits_charged::int as credits_charged,
           count(*) filter (where e.kind = 'reservation')::int as reservations,
           count(*) filter (where e.kind = 'debit')::int as debits,
           coalesce(-sum(e.amount) filter (where e.kind = 'debit'), 0)::int as debited,
           coalesce(sum(e.reserved_change), 0)::int as reserved_left,
           (select count(*) from job_attempts a where a.job_id = j.id and a.outcome is null)::int as open_attempts,
           (select count(*) from graphile_worker.jobs q where q.key = 'job:' || j.id)::int as queue_entries
    from jobs j left join credit_entries e on e.job_id = j.id
    where j.id = any(${sql.array([...jobIds], 'uuid')})
    group by j.id`);
  expect(rows).toHaveLength(jobIds.length);
  const wrong = rows.filter(
    (row) =>
      !['succeeded', 'failed'].includes(row.status) ||
      row.reservations !== 1 ||
      row.debits !== (row.status === 'succeeded' && row.credits_charged > 0 ? 1 : 0) ||
      row.debited !== row.credits_charged ||
      row.reserved_left !== 0 ||
      row.open_attempts !== 0 ||
      row.queue_entries !== 0,
  );
  expect(wrong).toEqual([]);
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
  return counts;
}
