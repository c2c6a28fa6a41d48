// The ledger's invariant, checked after tests that move credits: every
// account's balance and reserved credits are the sums of its entries, and no
// account's expiring lots hold more than its balance.
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
