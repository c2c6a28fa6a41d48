// Priorities of the kinds of job, by global admins (migration 0053): the
// priority graphile-worker orders a worker's choice by, lower first, 0 when a
// kind has none; a job's entries add its own (./request-priority.ts). Each queue entry reads its kind's priority in the statement
// that adds it (./queue.ts), so a retry or a requeue takes the priority of
// the moment; a change also moves the kind's entries queued already. It
// orders only what a worker may take: a tenant past its share of the slots is
// still skipped (worker/tenant-slots.ts), whatever its jobs' priority.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { timestamp } from '../timestamp.ts';
import { jobKindNames } from './kinds.ts';
import { requireKnownKind } from './pauses.ts';
import { kindFlag, runTask } from './queue.ts';

export const priorityRange = { min: -100, max: 100 } as const;

export const kindSettingSchema = z
  .object({
    kind: z.string(),
    priority: z
      .number()
      .int()
      .describe('Lower runs first (graphile-worker’s order), among the jobs a worker may take; 0 unless set'),
    updated_by: z.uuid().nullable().describe('The admin who set it last (null when never set, or their user is gone)'),
    updated_at: timestamp.nullable().describe('When it was set last (null when never set)'),
  })
  .meta({ id: 'JobKindSetting' });

export type KindSetting = z.infer<typeof kindSettingSchema>;

export const kindSettingsSchema = z.object({ items: z.array(kindSettingSchema) }).meta({ id: 'JobKindSettings' });

export const kindSettingRequest = z
  .strictObject({
    priority: z
      .number()
      .int()
      .min(priorityRange.min)
      .max(priorityRange.max)
      .describe(`${priorityRange.min} to ${priorityRange.max}; lower runs first, 0 is the default`),
  })
  .meta({ id: 'JobKindSettingRequest' });

/** Every kind the platform runs and any other with a setting, by name, with its priority. */
export async function listKindSettings(db: CommonQueryMethods, actor: Actor): Promise<{ items: KindSetting[] }> {
  requireGlobalAdmin(actor);
  const items = await db.any(sql.type(kindSettingSchema)`
    select k.kind, coalesce(s.priority, 0)::int as priority, s.updated_by, s.updated_at
    from (select unnest(${sql.array([...jobKindNames], 'text')}) as kind union select kind from job_kind_settings) k
    left join job_kind_settings s on s.kind = k.kind
    order by k.kind`);
  return { items: [...items] };
}

/**
 * Sets a kind's priority, for its future entries and those queued now (not
 * the ones a worker holds: they are running). 404 for a kind the platform
 * does not know.
 */
export async function setKindPriority(
  db: CommonQueryMethods,
  actor: Actor,
  kind: string,
  priority: number,
): Promise<KindSetting> {
  const admin = requireGlobalAdmin(actor);
  await requireKnownKind(db, kind);
  return db.transaction(async (tx) => {
    const row = await tx.one(sql.type(kindSettingSchema)`
      insert into job_kind_settings (kind, priority, updated_by) values (${kind}, ${priority}, ${admin.userId})
      on conflict (kind) do update set priority = excluded.priority, updated_by = excluded.updated_by, updated_at = now()
      returning kind, priority::int as priority, updated_by, updated_at`);
    // The entries queued already, found by the kind flag every run carries (./queue.ts), each at the kind's
    // new priority plus its job's own (./request-priority.ts).
    await tx.query(sql.typeAlias('void')`
      with wanted as (
        select q.id, ${priority} + coalesce(j.priority, 0) as priority
        from graphile_worker._private_jobs q
        join graphile_worker._private_tasks t on t.id = q.task_id
        left join jobs j on j.id = (q.payload->>'job_id')::uuid
        where t.identifier = ${runTask} and q.locked_at is null and q.flags ? ${kindFlag(kind)}
      )
      update graphile_worker._private_jobs q set priority = wanted.priority
      from wanted where q.id = wanted.id and q.priority <> wanted.priority and q.locked_at is null`);
    return row;
  });
}
