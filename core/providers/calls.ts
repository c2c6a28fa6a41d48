// The record of a job's calls to AI providers (db: provider_calls): written by
// the worker as each call ends, read by the admin's job detail and by
// GET /admin/providers for each vendor's recent errors and latency.
import { z } from 'zod';
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { unhurried } from '../../db/unhurried.ts';
import { timestamp } from '../timestamp.ts';

export const callOutcomes = ['succeeded', 'pending', 'passed_on', 'failed', 'canceled'] as const;
export type CallOutcome = (typeof callOutcomes)[number];

export type ProviderCall = {
  capability: string;
  vendor: string;
  model: string;
  startedAt: Date;
  durationMs: number;
  outcome: CallOutcome;
  errorCode?: string | undefined;
  httpStatus?: number | undefined;
};

export async function recordProviderCall(
  db: CommonQueryMethods,
  job: { id: string; tenant_id: string },
  call: ProviderCall,
): Promise<void> {
  // A record for admins, not the work: its commit does not wait for the disk (db/unhurried.ts).
  await db.query(
    prepared(sql.typeAlias('void')`
      ${unhurried}
      insert into provider_calls (job_id, tenant_id, capability, vendor, model, started_at, duration_ms, outcome,
                                  error_code, http_status)
      select ${job.id}, ${job.tenant_id}, ${call.capability}, ${call.vendor}, ${call.model},
             ${call.startedAt.toISOString()}::timestamptz, ${Math.round(call.durationMs)}, ${call.outcome},
             ${call.errorCode ?? null}, ${call.httpStatus ?? null}
      from unhurried`),
  );
}

export const providerCallSchema = z
  .object({
    capability: z.string(),
    vendor: z.string(),
    model: z.string(),
    started_at: timestamp,
    duration_ms: z.number().int(),
    outcome: z.enum(callOutcomes),
    error_code: z.string().nullable(),
    http_status: z.number().int().nullable(),
  })
  .meta({ id: 'ProviderCall' });

/** A job's calls, in the order they were made. */
export function callsOfJob(db: CommonQueryMethods, jobId: string) {
  return db.any(sql.type(providerCallSchema)`
    select capability, vendor, model, started_at, duration_ms, outcome, error_code, http_status
    from provider_calls where job_id = ${jobId} order by id`);
}

export const vendorHealthSchema = z
  .object({
    vendor: z.string(),
    calls: z.number().int().describe('Calls in the last hour'),
    failures: z.number().int().describe('Of those, how many passed the job on or failed it'),
    median_ms: z.number().nullable().describe('The middle duration of its calls in the last hour'),
    p95_ms: z.number().nullable(),
    recent_errors: z
      .array(
        z.object({
          at: timestamp,
          model: z.string(),
          error_code: z.string().nullable(),
          http_status: z.number().int().nullable(),
        }),
      )
      .describe('Its last 10 failures'),
  })
  .meta({ id: 'ProviderHealth' });

/** Each vendor's last hour: calls, failures, latency, and its last failures. */
export function vendorHealth(db: CommonQueryMethods) {
  return db.any(sql.type(vendorHealthSchema)`
    select v.vendor, count(c.*)::int as calls,
           count(c.*) filter (where c.outcome in ('passed_on', 'failed'))::int as failures,
           percentile_cont(0.5) within group (order by c.duration_ms)::float8 as median_ms,
           percentile_cont(0.95) within group (order by c.duration_ms)::float8 as p95_ms,
           coalesce((select jsonb_agg(jsonb_build_object('at', e.started_at, 'model', e.model, 'error_code', e.error_code,
                                                          'http_status', e.http_status) order by e.started_at desc)
                     from (select * from provider_calls f where f.vendor = v.vendor and f.outcome in ('passed_on', 'failed')
                           order by f.started_at desc limit 10) e), '[]'::jsonb) as recent_errors
    from (select distinct vendor from provider_calls where started_at > now() - interval '1 hour') v
    join provider_calls c on c.vendor = v.vendor and c.started_at > now() - interval '1 hour'
    group by v.vendor order by v.vendor`);
}
