// Credit accounts and the one way to change them: an entry in the ledger and
// the matching change to the account's balance, in the same transaction. The
// conditional UPDATE (and the table's checks behind it) is what keeps a
// balance from going below zero when many requests race for it.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, problemType } from '../errors.ts';
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

/**
 * The account's id, made on first use, usually in one statement: the insert's
 * row when it made one, else the existing row. When another transaction made
 * it a moment ago, this statement's snapshot cannot see it, so a second
 * statement (with a fresh snapshot) reads it.
 */
async function accountId(
  db: CommonQueryMethods,
  insert: ReturnType<typeof sql.fragment>,
  existing: ReturnType<typeof sql.fragment>,
): Promise<string> {
  const id = await db.maybeOneFirst(sql.type(idOnly)`
    with made as (${insert} on conflict do nothing returning id)
    select id from made union all (select id from credit_accounts where ${existing}) limit 1`);
  return id ?? db.oneFirst(sql.type(idOnly)`select id from credit_accounts where ${existing}`);
}

/** The tenant's pool, made on first use. */
export async function poolAccount(db: CommonQueryMethods, tenantId: string): Promise<string> {
  return accountId(
    db,
    sql.fragment`insert into credit_accounts (tenant_id) values (${tenantId})`,
    sql.fragment`tenant_id = ${tenantId} and site_id is null`,
  );
}

/** A user's credits on a site, made on first use. */
export async function userAccount(
  db: CommonQueryMethods,
  site: { id: string; tenant_id: string },
  userId: string,
): Promise<string> {
  return accountId(
    db,
    sql.fragment`insert into credit_accounts (tenant_id, site_id, user_id) values (${site.tenant_id}, ${site.id}, ${userId})`,
    sql.fragment`site_id = ${site.id} and user_id = ${userId}`,
  );
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

export const insufficientCredits = (available: number, required: number) =>
  new Problem(402, `Not enough credits: ${required} needed, ${available} available.`, {
    type: problemType('insufficient-credits'),
    title: 'Insufficient credits',
    extensions: { available, required },
  });

/** Records the entry and applies it; a change that would overdraw the account is a 402, and nothing is written. */
export async function applyEntry(db: CommonQueryMethods, entry: Entry): Promise<Balance> {
  const reservedChange = entry.reservedChange ?? 0;
  // One statement: the entry is written only if the conditional update matched.
  const updated = await db.maybeOne(sql.type(balanceRow)`
    with updated as (
      update credit_accounts set balance = balance + ${entry.amount}, reserved = reserved + ${reservedChange}
      where id = ${entry.accountId}
        and balance + ${entry.amount} >= 0
        and reserved + ${reservedChange} >= 0
        and reserved + ${reservedChange} <= balance + ${entry.amount}
      returning balance, reserved
    ), recorded as (
      insert into credit_entries (tenant_id, account_id, site_id, user_id, kind, amount, reserved_change, transfer_id, job_id, operation, payment_id, actor_id, reason, expires_at, once_key)
      select ${entry.tenantId}, ${entry.accountId}, ${entry.siteId ?? null}, ${entry.userId ?? null}, ${entry.kind}, ${entry.amount},
             ${reservedChange}, ${entry.transferId ?? null}, ${entry.jobId ?? null}, ${entry.operation ?? null}, ${entry.paymentId ?? null},
             ${entry.actorId ?? null}, ${entry.reason ?? ''}, ${entry.expiresAt ?? null}, ${entry.onceKey ?? null}
      from updated
    )
    select balance, reserved from updated`);
  if (!updated) {
    const current = await readBalance(db, entry.accountId);
    throw insufficientCredits(current.available, Math.max(-entry.amount, reservedChange));
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
