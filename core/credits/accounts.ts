// Credit accounts and the one way to change them: an entry in the ledger and
// the matching change to the account's balance, in the same transaction. The
// conditional UPDATE (and the table's checks behind it) is what keeps a
// balance from going below zero when many requests race for it.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { causes, Problem, problemType } from '../errors.ts';
import { fundingOf, type PayingBalance } from './funding.ts';
import { entryKinds } from './reports.ts';

export type EntryKind = (typeof entryKinds)[number];

export type Balance = { balance: number; reserved: number; available: number };

export const balanceSchema = z
  .object({
    balance: z.number().int().describe('Credits held, reserved ones included'),
    reserved: z.number().int().describe('Held for jobs that are still running'),
    available: z.number().int().describe('What can be spent now'),
  })
  .meta({ id: 'CreditBalance' });

const idOnly = z.object({ id: z.string() });

/** How a payer's account is found, and made on first use. */
export type Payer = {
  existing: ReturnType<typeof sql.fragment>;
  insert: ReturnType<typeof sql.fragment>;
  /** Which balance it is, for the 402 that says which was short. */
  balance: PayingBalance;
};

/** The tenant's pool. */
export const poolPayer = (tenantId: string): Payer => ({
  balance: 'tenant',
  insert: sql.fragment`insert into credit_accounts (tenant_id) values (${tenantId})`,
  existing: sql.fragment`tenant_id = ${tenantId} and site_id is null`,
});

/** A user's credits on a site. */
export const userPayer = (site: { id: string; tenant_id: string }, userId: string): Payer => ({
  balance: 'user',
  insert: sql.fragment`insert into credit_accounts (tenant_id, site_id, user_id) values (${site.tenant_id}, ${site.id}, ${userId})`,
  existing: sql.fragment`site_id = ${site.id} and user_id = ${userId}`,
});

/**
 * The account's id, made on first use. Read first: a plain read does not wait
 * for the transactions that hold the account's row (every submit and settle
 * of its payer updates the balance), whereas an insert that meets the row
 * waits for each of them to commit. Made only when missing; when another
 * transaction made it a moment ago, this statement's snapshot cannot see it,
 * so a last statement (with a fresh snapshot) reads it.
 */
async function accountOf(db: CommonQueryMethods, { existing, insert }: Payer): Promise<string> {
  const found = await db.maybeOneFirst(sql.type(idOnly)`select id from credit_accounts where ${existing}`);
  if (found) return found;
  const made = await db.maybeOneFirst(sql.type(idOnly)`${insert} on conflict do nothing returning id`);
  return made ?? db.oneFirst(sql.type(idOnly)`select id from credit_accounts where ${existing}`);
}

/** The tenant's pool, made on first use. */
export async function poolAccount(db: CommonQueryMethods, tenantId: string): Promise<string> {
  return accountOf(db, poolPayer(tenantId));
}

/** A user's credits on a site, made on first use. */
export async function userAccount(
  db: CommonQueryMethods,
  site: { id: string; tenant_id: string },
  userId: string,
): Promise<string> {
  return accountOf(db, userPayer(site, userId));
}

const balanceRow = z.object({ balance: z.number(), reserved: z.number() });

export async function readBalance(db: CommonQueryMethods, accountId: string | null): Promise<Balance> {
  const row = accountId
    ? await db.maybeOne(sql.type(balanceRow)`select balance, reserved from credit_accounts where id = ${accountId}`)
    : null;
  const held = row ?? { balance: 0, reserved: 0 };
  return { ...held, available: held.balance - held.reserved };
}

export type Entry = {
  accountId: string;
  tenantId: string;
  siteId?: string | null;
  userId?: string | null;
  kind: EntryKind;
  amount: number;
  reservedChange?: number;
  transferId?: string | null;
  jobId?: string | null;
  operation?: string | null;
  paymentId?: string | null;
  actorId?: string | null;
  reason?: string;
  /** A grant whose unspent rest expires then (credit_lots); spending takes the soonest-expiring first. */
  expiresAt?: string | null;
  /** Names an entry that must happen at most once (a payment's credits, an invoice's): a repeat fails on the unique index. */
  onceKey?: string | null;
};

/** A 402 naming the balance that was short, what was needed and there, and how that balance is funded. */
export const insufficientCredits = (balance: PayingBalance, available: number, required: number) => {
  const funding = fundingOf(balance);
  const whose = balance === 'user' ? 'Your own credits on this site' : 'The tenant’s pool';
  return new Problem(
    402,
    `Not enough credits: ${whose} had ${available} available, ${required} needed. ${funding.description}`,
    {
      type: problemType('insufficient-credits'),
      title: 'Insufficient credits',
      extensions: { balance, available, required, funding },
    },
  );
};

/** What every entry of one change shares: the account and whom it is for. */
export type EntryOwner = Omit<Entry, 'kind' | 'amount' | 'reservedChange' | 'reason'>;
/** One movement of an account's credits: an entry of its own in the ledger. */
export type Movement = Pick<Entry, 'kind' | 'amount' | 'reservedChange' | 'reason'>;

type Fragment = ReturnType<typeof sql.fragment>;
/** A value known here, or one the caller's statement computes (a job row's reservation, say). */
type Amount = number | Fragment;

const sum = (amounts: Amount[]): Amount =>
  amounts.every((amount) => typeof amount === 'number')
    ? amounts.reduce<number>((total, amount) => total + amount, 0)
    : sql.fragment`(${sql.join(
        amounts.map((amount) => sql.fragment`${amount}`),
        sql.fragment` + `,
      )})`;

/**
 * Two CTEs for the caller's statement, so that the credits move in the same
 * statement as what they pay for (a job's row): `account` changes the balance
 * once by the sum of the movements, `entries` records each of them, and both
 * happen only when `when` holds. Guarded, an overdraw matches no row and
 * nothing is recorded; unguarded (settling what was reserved, which cannot
 * overdraw), the table's checks fail the whole statement instead.
 */
export function creditMoves(
  owner: Omit<EntryOwner, 'accountId'> & { accountId: string | Fragment },
  movements: (Omit<Movement, 'amount' | 'reservedChange'> & { amount: Amount; reservedChange?: Amount })[],
  options: { when?: Fragment; guarded: boolean },
) {
  const amount = sum(movements.map((move) => move.amount));
  const reservedChange = sum(movements.map((move) => move.reservedChange ?? 0));
  const guard = options.guarded
    ? sql.fragment`and balance + ${amount} >= 0 and reserved + ${reservedChange} >= 0
        and reserved + ${reservedChange} <= balance + ${amount}`
    : sql.fragment``;
  const rows = movements.map(
    (move) =>
      sql.fragment`(${move.kind}::text, ${move.amount}::bigint, ${move.reservedChange ?? 0}::bigint, ${move.reason ?? ''}::text)`,
  );
  return sql.fragment`
    account as (
      update credit_accounts set balance = balance + ${amount}, reserved = reserved + ${reservedChange}
      where id = ${owner.accountId} and ${options.when ?? sql.fragment`true`} ${guard}
      returning id, balance, reserved
    ), entries as (
      insert into credit_entries (tenant_id, account_id, site_id, user_id, kind, amount, reserved_change, transfer_id, job_id, operation, payment_id, actor_id, reason, expires_at, once_key)
      select ${owner.tenantId}, account.id, ${owner.siteId ?? null}, ${owner.userId ?? null}, move.kind, move.amount,
             move.reserved_change, ${owner.transferId ?? null}, ${owner.jobId ?? null}, ${owner.operation ?? null}, ${owner.paymentId ?? null},
             ${owner.actorId ?? null}, move.reason, ${owner.expiresAt ?? null}, ${owner.onceKey ?? null}
      from account, (values ${sql.join(rows, sql.fragment`, `)}) as move (kind, amount, reserved_change, reason)
    )`;
}

const shortDetail = z.object({ available: z.number(), required: z.number() });

/** What credits_short (a statement that reserved too much) said there was, or null for any other error. */
export function creditsShort(error: unknown): z.infer<typeof shortDetail> | null {
  for (const { code, detail } of causes(error) as Iterable<{ code?: unknown; detail?: unknown }>) {
    if (code === 'P0402' && typeof detail === 'string') {
      const parsed = shortDetail.safeParse(JSON.parse(detail));
      if (parsed.success) return parsed.data;
    }
  }
  return null;
}

/** Records the entry and applies it; a change that would overdraw the account is a 402, and nothing is written. */
export async function applyEntry(db: CommonQueryMethods, entry: Entry): Promise<Balance> {
  const updated = await db.maybeOne(
    sql.type(balanceRow)`with ${creditMoves(entry, [entry], { guarded: true })} select balance, reserved from account`,
  );
  if (!updated) {
    const current = await readBalance(db, entry.accountId);
    // A user's account has a user; the pool has none.
    const balance = entry.userId ? 'user' : 'tenant';
    throw insufficientCredits(balance, current.available, Math.max(-entry.amount, entry.reservedChange ?? 0));
  }
  return { ...updated, available: updated.balance - updated.reserved };
}

/**
 * An entry named by its once-key, applied unless it was already: false when
 * it was (by this or a concurrent transaction, which the unique index makes
 * wait and then fail inside a savepoint, leaving the caller's transaction
 * usable).
 */
export async function applyOnce(db: CommonQueryMethods, entry: Entry & { onceKey: string }): Promise<boolean> {
  const done = await db.exists(sql.type(z.object({}))`select 1 from credit_entries where once_key = ${entry.onceKey}`);
  if (done) return false;
  try {
    await db.transaction((savepoint) => applyEntry(savepoint, entry));
    return true;
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) return false;
    throw error;
  }
}
