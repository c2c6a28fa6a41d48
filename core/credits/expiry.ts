// Expired credits leave the ledger by an `expiry` entry, once per grant: the
// unspent rest of each lot whose time has passed, as far as the account has
// credits that are not reserved for a running job (those were spent or will
// be released by that job). The once-key makes a second run a no-op.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool } from '../../db/pool.ts';
import { applyEntry } from './accounts.ts';

const dueLot = z.object({
  id: z.uuid(),
  account_id: z.uuid(),
  tenant_id: z.uuid(),
  site_id: z.uuid().nullable(),
  user_id: z.uuid().nullable(),
  remaining: z.number(),
});

/** Expires one lot in its own transaction; answers the credits taken (0 when another run took it). */
async function expireLot(db: CommonQueryMethods, id: string): Promise<number> {
  return db.transaction(async (tx) => {
    // The account's row lock orders this against spending from it.
    const lot = await tx.maybeOne(sql.type(dueLot)`
      select l.id, l.account_id, a.tenant_id, a.site_id, a.user_id, l.remaining
      from credit_lots l join credit_accounts a on a.id = l.account_id
      where l.id = ${id} and l.expired_at is null
      for update of a, l`);
    if (!lot) return 0;
    const available = await tx.oneFirst(sql.type(z.object({ available: z.number() }))`
      select balance - reserved as available from credit_accounts where id = ${lot.account_id}`);
    const taken = Math.min(lot.remaining, available);
    if (taken > 0) {
      await applyEntry(tx, {
        accountId: lot.account_id,
        tenantId: lot.tenant_id,
        siteId: lot.site_id,
        userId: lot.user_id,
        kind: 'expiry',
        amount: -taken,
        reason: 'expired',
        onceKey: `expiry:${lot.id}`,
      });
    }
    await tx.query(
      sql.typeAlias('void')`update credit_lots set remaining = 0, expired_at = now() where id = ${lot.id}`,
    );
    return taken;
  });
}

/** Expires every lot due by now, a batch at a time; answers how many lots and credits went. */
export async function expireDueCredits(db: DatabasePool, batch = 500): Promise<{ lots: number; credits: number }> {
  let lots = 0;
  let credits = 0;
  for (;;) {
    const due = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from credit_lots where expired_at is null and expires_at <= now() order by expires_at, id limit ${batch}`);
    for (const id of due) {
      try {
        credits += await expireLot(db, id);
        lots += 1;
      } catch (error) {
        // Another run expired it between our read and our write.
        if (!(error instanceof UniqueIntegrityConstraintViolationError)) throw error;
      }
    }
    if (due.length < batch) return { lots, credits };
  }
}
