// Pauses of the queue, by global admins: a kind of job, or one tenant's jobs.
// A pause is a row (migration 0051) that every worker process reads and skips
// by flag (worker/queue-gate.ts): queued jobs of a paused kind or tenant wait,
// running ones finish. Each change is announced on `queue_pauses`, so workers
// apply it within a round trip rather than at their next poll. The stage of
// the queued jobs it holds says why they wait, and is emptied on resume.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { timestamp } from '../timestamp.ts';
import { jobKindNames } from './kinds.ts';

export const pausesChannel = 'queue_pauses';

export const pauseSchema = z
  .object({
    kind: z.string().nullable().describe('The paused kind of job, or null for a tenant’s pause'),
    tenant_id: z.uuid().nullable().describe('The paused tenant, or null for a kind’s pause'),
    reason: z.string(),
    paused_by: z.uuid().nullable().describe('The admin who paused it (null once their user is deleted)'),
    paused_at: timestamp,
  })
  .meta({ id: 'QueuePause' });

export type Pause = z.infer<typeof pauseSchema>;

export const pausesSchema = z
  .object({ kinds: z.array(pauseSchema), tenants: z.array(pauseSchema) })
  .meta({ id: 'QueuePauses' });

export const pauseRequest = z
  .strictObject({ reason: z.string().max(500).optional().describe('Why, for the other admins') })
  .meta({ id: 'QueuePauseRequest' });

const columns = sql.fragment`kind, tenant_id, reason, paused_by, paused_at`;

/** The stage of a job of this kind and tenant that a pause holds, as an SQL value ('' when none does). */
export const pausedStage = (
  kind: ReturnType<typeof sql.fragment> | string,
  tenantId: ReturnType<typeof sql.fragment> | string,
) =>
  sql.fragment`coalesce((
    select case when p.tenant_id is not null then 'paused: this tenant’s jobs are paused'
                else 'paused: ' || p.kind || ' jobs are paused' end
    from queue_pauses p where p.kind = ${kind} or p.tenant_id = ${tenantId}
    order by p.tenant_id nulls last limit 1), '')`;

export async function listPauses(db: CommonQueryMethods, actor: Actor) {
  requireGlobalAdmin(actor);
  const rows = await db.any(sql.type(pauseSchema)`select ${columns} from queue_pauses order by paused_at, id`);
  return { kinds: rows.filter((row) => row.kind !== null), tenants: rows.filter((row) => row.tenant_id !== null) };
}

/** What every worker skips: the paused kinds and tenants (for worker/queue-gate.ts). */
export async function pausedTargets(db: CommonQueryMethods) {
  const rows = await db.any(
    sql.type(z.object({ kind: z.string().nullable(), tenant_id: z.string().nullable() }))`
      select kind, tenant_id from queue_pauses`,
  );
  return {
    kinds: rows.flatMap((row) => (row.kind === null ? [] : [row.kind])),
    tenants: rows.flatMap((row) => (row.tenant_id === null ? [] : [row.tenant_id])),
  };
}

/** A kind of job this platform knows: a built-in one, or one priced in cost_settings (tests price their own). */
export async function requireKnownKind(db: CommonQueryMethods, kind: string) {
  if ((jobKindNames as readonly string[]).includes(kind)) return;
  const priced = await db.exists(sql.type(z.object({}))`select 1 from cost_settings where kind = ${kind}`);
  if (!priced) throw notFound(`No such kind of job: ${kind}.`);
}

async function requireTenant(db: CommonQueryMethods, tenantId: string) {
  if (!(await db.exists(sql.type(z.object({}))`select 1 from tenants where id = ${tenantId}`)))
    throw notFound('No such tenant.');
}

type Target = { kind: string; tenantId?: undefined } | { tenantId: string; kind?: undefined };

const targetCondition = (target: Target) =>
  target.kind !== undefined ? sql.fragment`kind = ${target.kind}` : sql.fragment`tenant_id = ${target.tenantId}`;

/** Pauses a kind or a tenant (again: the reason is replaced); answers the pause. */
export async function pause(db: CommonQueryMethods, actor: Actor, target: Target, reason = ''): Promise<Pause> {
  const admin = requireGlobalAdmin(actor);
  if (target.kind !== undefined) await requireKnownKind(db, target.kind);
  else await requireTenant(db, target.tenantId);
  return db.transaction(async (tx) => {
    const row = await tx.one(sql.type(pauseSchema)`
      insert into queue_pauses (kind, tenant_id, reason, paused_by)
      values (${target.kind ?? null}, ${target.tenantId ?? null}, ${reason}, ${admin.userId})
      on conflict (${sql.identifier([target.kind !== undefined ? 'kind' : 'tenant_id'])})
        do update set reason = excluded.reason
      returning ${columns}`);
    await restage(tx, target);
    await tx.query(sql.typeAlias('void')`select from pg_notify(${pausesChannel}, '')`);
    return row;
  });
}

/** Lifts a pause: its queued jobs run again. 404 when there was none. */
export async function resume(db: CommonQueryMethods, actor: Actor, target: Target): Promise<void> {
  requireGlobalAdmin(actor);
  await db.transaction(async (tx) => {
    const gone = await tx.maybeOne(sql.type(z.object({ id: z.string() }))`
      delete from queue_pauses where ${targetCondition(target)} returning id`);
    if (!gone)
      throw notFound(
        target.kind !== undefined ? `${target.kind} jobs are not paused.` : 'This tenant’s jobs are not paused.',
      );
    await restage(tx, target);
    await tx.query(sql.typeAlias('void')`select from pg_notify(${pausesChannel}, '')`);
  });
}

/**
 * The stage of the target's queued jobs, after a pause or a resume: why they
 * wait, if a pause (this one or the other of kind and tenant) still holds
 * them; empty again for those a pause had marked and none holds any more.
 */
async function restage(tx: CommonQueryMethods, target: Target) {
  await tx.query(sql.typeAlias('void')`
    update jobs set stage = ${pausedStage(sql.fragment`jobs.kind`, sql.fragment`jobs.tenant_id`)}
    where status = 'queued' and ${targetCondition(target)}
      and stage is distinct from ${pausedStage(sql.fragment`jobs.kind`, sql.fragment`jobs.tenant_id`)}
      and (stage like 'paused: %' or exists (select 1 from queue_pauses p where p.kind = jobs.kind or p.tenant_id = jobs.tenant_id))`);
}
