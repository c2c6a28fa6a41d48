// Every change of a job's state, each inside the caller's transaction and on
// the job's row locked FOR UPDATE, so a worker, a webhook and a cancel racing
// for the same job take turns and only the first to finish it counts. Credits
// move in the same transaction: a debit of what was used (at most what was
// reserved, and once: a unique index), and a release of the rest. A job's
// end is announced to its webhook in the same transaction.
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { announce } from '../webhooks/announce.ts';
import { applyEntry } from '../credits/accounts.ts';
import { priceOf } from '../credits/prices.ts';
import { insertMedia, type MediaDraft, type MediaItem } from '../media/items.ts';
import { jobColumns, jobRow, type JobErrorBody, type JobRow } from './model.ts';

export async function lockJob(db: CommonQueryMethods, jobId: string): Promise<JobRow | null> {
  return db.maybeOne(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${jobId} for update`);
}

/** The job's entries in the ledger: one per movement, for the account that reserved. */
async function moveCredits(
  db: CommonQueryMethods,
  job: JobRow,
  kind: 'debit' | 'release',
  amount: number,
  reason: string,
) {
  if (amount <= 0 || !job.account_id) return;
  await applyEntry(db, {
    accountId: job.account_id,
    tenantId: job.tenant_id,
    siteId: job.site_id,
    userId: job.user_id,
    kind,
    amount: kind === 'debit' ? -amount : 0,
    reservedChange: -amount,
    jobId: job.id,
    operation: job.kind,
    reason,
  });
}

const update = (db: CommonQueryMethods, jobId: string, changes: ReturnType<typeof sql.fragment>) =>
  db.one(sql.type(jobRow)`update jobs set ${changes} where id = ${jobId} returning ${jobColumns}`);

/** A job's last change, announced to its webhook (nothing without one). */
async function end(db: CommonQueryMethods, jobId: string, changes: ReturnType<typeof sql.fragment>) {
  const row = await update(db, jobId, changes);
  await announce(db, row, 'completed');
  return row;
}

export type Success = {
  output: Record<string, unknown>;
  /** Units used (seconds of audio, images...), priced by the site's cost settings. */
  units: number;
  media?: MediaDraft[];
  /**
   * Writes the job's result (a post, say) in the settling transaction, after
   * the media items, so the result, the debit and the job's status commit
   * together or not at all: a run that was canceled or taken over writes
   * nothing. What it answers is added to the output.
   */
  commit?: (tx: CommonQueryMethods, made: { media: MediaItem[] }) => Promise<Record<string, unknown> | void>;
};

export async function succeed(db: CommonQueryMethods, job: JobRow, result: Success): Promise<JobRow> {
  const media = [];
  for (const draft of result.media ?? []) {
    media.push(
      await insertMedia(
        db,
        { tenantId: job.tenant_id, siteId: job.site_id, jobId: job.id, createdBy: job.user_id },
        draft,
      ),
    );
  }
  const output = { ...result.output, ...((await result.commit?.(db, { media })) ?? {}) };
  // Never more than was reserved: the caller agreed to that price at submit.
  const { cost } = await priceOf(db, job.site_id, job.kind, result.units);
  const charged = Math.min(cost, job.credits_reserved);
  await moveCredits(db, job, 'debit', charged, `${job.kind}: ${result.units} units`);
  await moveCredits(db, job, 'release', job.credits_reserved - charged, 'Unused reservation released');
  const ids = media.map((item) => item.id);
  // Who made the result: an asynchronous provider is named when the job is handed over; one that ran here, by its output.
  const provider = typeof output.provider === 'string' ? output.provider : null;
  return end(
    db,
    job.id,
    sql.fragment`
    status = 'succeeded', progress = 1, stage = 'done', output = ${sql.jsonb(output as never)}, error = null,
    provider = coalesce(provider, ${provider}),
    credits_charged = ${charged}, media_id = ${ids[0] ?? null}, media_ids = ${sql.array(ids, 'uuid')},
    finished_at = now(), locked_by = null`,
  );
}

export async function fail(db: CommonQueryMethods, job: JobRow, error: JobErrorBody): Promise<JobRow> {
  await moveCredits(db, job, 'release', job.credits_reserved, `Job failed: ${error.code}`);
  return end(
    db,
    job.id,
    sql.fragment`
    status = 'failed', error = ${sql.jsonb({ ...error, transient: false } as never)}, finished_at = now(), locked_by = null`,
  );
}

/** Canceled by its owner or an admin: credits back, and a queued run taken off the queue. */
export async function cancel(db: CommonQueryMethods, job: JobRow, reason: string): Promise<JobRow> {
  await moveCredits(db, job, 'release', job.credits_reserved, 'Job canceled');
  // A locked (running) queue entry is not deleted; the worker sees the job canceled and stops.
  await db.query(sql.typeAlias('void')`select from graphile_worker.remove_job(${`job:${job.id}`})`);
  // Closed here, since a run whose worker is gone would never close it (a live run's own close then changes nothing).
  await db.query(sql.typeAlias('void')`
    update job_attempts set finished_at = now(), outcome = 'canceled' where job_id = ${job.id} and outcome is null`);
  return end(
    db,
    job.id,
    sql.fragment`
    status = 'canceled', error = ${sql.jsonb({ code: 'canceled', message: reason } as never)},
    canceled_at = now(), finished_at = now(), locked_by = null`,
  );
}

/** Handed to an asynchronous provider: nothing runs until its webhook arrives. */
export async function park(
  db: CommonQueryMethods,
  job: JobRow,
  provider: string,
  providerRef: string,
): Promise<JobRow> {
  return update(
    db,
    job.id,
    sql.fragment`
    status = 'waiting', provider = ${provider}, provider_ref = ${providerRef}, waiting_at = now(),
    stage = 'waiting for the provider', locked_by = null`,
  );
}

/** A transient failure with attempts left: back to the queue, the error shown meanwhile. */
export async function requeue(db: CommonQueryMethods, job: JobRow, error: JobErrorBody): Promise<JobRow> {
  return update(
    db,
    job.id,
    sql.fragment`
    status = 'queued', stage = 'retrying', error = ${sql.jsonb({ ...error, transient: true } as never)}, locked_by = null`,
  );
}
