// Limits per AI provider, shared by every worker process in PostgreSQL:
// requests a minute and calls at once (<VENDOR>_REQUESTS_PER_MINUTE,
// <VENDOR>_MAX_CONCURRENT), and the wait a vendor's own 429 asked for
// (its Retry-After, for every worker). A call takes a slot first; when none
// is free the job is not sent over the limit but waits — back in the queue,
// its stage saying for whom — and runs when the slot it needs will be free.
// Deciding is one transaction under an advisory lock per vendor, so two
// workers cannot both take the last slot.
import { z } from 'zod';
import { sql, type DatabasePool } from '../../db/pool.ts';
import type { VendorConfig } from './settings.ts';

export type Slot = { release(): Promise<void> };

/** A slot, or how long to wait for one and why. */
export type Taken = { slot: Slot } | { waitMs: number; reason: string };

const state = z.object({
  used: z.number(),
  oldest_ms: z.number().nullable(),
  in_flight: z.number(),
  blocked_ms: z.number().nullable(),
});

/** How long a concurrency slot is kept for a worker that never gave it back (it died mid-call). */
const staleAfter = (timeoutMs: number) => Math.max(60_000, 2 * timeoutMs);

/** When the concurrency is full: how soon to look again. */
const busyPollMs = 1000;

export async function takeSlot(
  db: DatabasePool,
  vendor: string,
  limits: Pick<VendorConfig, 'requestsPerMinute' | 'maxConcurrent'>,
  options: { jobId?: string | undefined; timeoutMs: number; windowMs?: number | undefined },
): Promise<Taken> {
  // A request counts a little longer than the window: it reaches the vendor a few milliseconds after it
  // took its slot, by the vendor's clock, so a window counted to the millisecond here lets one through too many there.
  const windowMs = (options.windowMs ?? 60_000) * 1.05 + 250;
  if (limits.requestsPerMinute === 0 && limits.maxConcurrent === 0) {
    // No limit of ours: only the wait the vendor itself asked for, and nothing to give back.
    const free = { slot: { release: async () => undefined } };
    if (seenFree(db, vendor)) return free;
    const blockedMs = await db.maybeOneFirst(sql.type(z.object({ ms: z.number() }))`
      select (extract(epoch from until - now()) * 1000)::float8 as ms from provider_blocks
      where vendor = ${vendor} and until > now()`);
    if (blockedMs === null) {
      freeAt(db).set(vendor, Date.now());
      return free;
    }
    return { waitMs: Math.ceil(blockedMs), reason: `${vendor} asked to wait` };
  }
  return db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext(${`provider:${vendor}`}))`);
    await tx.query(sql.typeAlias('void')`
      delete from provider_requests where vendor = ${vendor} and sent_at < now() - make_interval(secs => ${windowMs / 1000})`);
    await tx.query(sql.typeAlias('void')`
      delete from provider_slots where vendor = ${vendor}
      and taken_at < now() - make_interval(secs => ${staleAfter(options.timeoutMs) / 1000})`);
    const now = await tx.one(sql.type(state)`
      select (select count(*)::int from provider_requests where vendor = ${vendor}) as used,
             (select extract(epoch from now() - min(sent_at)) * 1000 from provider_requests where vendor = ${vendor})::float8 as oldest_ms,
             (select count(*)::int from provider_slots where vendor = ${vendor}) as in_flight,
             (select extract(epoch from until - now()) * 1000 from provider_blocks where vendor = ${vendor} and until > now())::float8 as blocked_ms`);
    if (now.blocked_ms !== null) return { waitMs: Math.ceil(now.blocked_ms), reason: `${vendor} asked to wait` };
    if (limits.requestsPerMinute > 0 && now.used >= limits.requestsPerMinute)
      return {
        waitMs: Math.max(1, Math.ceil(windowMs - (now.oldest_ms ?? 0))),
        reason: `${vendor}'s limit of ${limits.requestsPerMinute} requests a minute`,
      };
    if (limits.maxConcurrent > 0 && now.in_flight >= limits.maxConcurrent)
      return { waitMs: busyPollMs, reason: `${vendor}'s limit of ${limits.maxConcurrent} calls at once` };
    await tx.query(sql.typeAlias('void')`insert into provider_requests (vendor) values (${vendor})`);
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into provider_slots (vendor, job_id) values (${vendor}, ${options.jobId ?? null}) returning id::int as id`);
    return {
      slot: {
        release: async () => {
          await db.query(sql.typeAlias('void')`delete from provider_slots where id = ${id}`);
        },
      },
    };
  });
}

/**
 * When each vendor was last found unblocked, per database: for a second after,
 * a call to a vendor with no limits of ours is made without asking again — a
 * round trip saved on every model call of an agent run. A 429 heard by this
 * process counts at once (blockVendor); one heard by another worker holds
 * this one off from at most a second later, its own calls meanwhile answered
 * by the vendor's 429, as they would have been without the block.
 */
const seenUnblocked = new WeakMap<DatabasePool, Map<string, number>>();
const unblockedForMs = 1000;

function freeAt(db: DatabasePool): Map<string, number> {
  let seen = seenUnblocked.get(db);
  if (!seen) seenUnblocked.set(db, (seen = new Map<string, number>()));
  return seen;
}

const seenFree = (db: DatabasePool, vendor: string) =>
  Date.now() - (freeAt(db).get(vendor) ?? -Infinity) < unblockedForMs;

/** A vendor's 429 asked every caller to wait: no worker sends it anything before then. */
export async function blockVendor(db: DatabasePool, vendor: string, waitMs: number): Promise<void> {
  freeAt(db).delete(vendor);
  await db.query(sql.typeAlias('void')`
    insert into provider_blocks (vendor, until) values (${vendor}, now() + make_interval(secs => ${waitMs / 1000}))
    on conflict (vendor) do update set until = greatest(provider_blocks.until, excluded.until)`);
}
