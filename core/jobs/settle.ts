// Every change of a job's state, each one statement: the job's row, its open
// attempt closed, and the credits it moves (a debit of what was used, at most
// what was reserved and once: a unique index; a release of the rest), so they
// commit together. A worker's change names its run and changes nothing unless
// that run still holds the job: a worker, a webhook and a cancel racing for
// the same job take turns on its row, and only the first to finish it counts.
// One statement also holds the payer's account row for the least time: no
// round trip to the client happens between its update and the commit, which
// is what lets many jobs of one payer settle at once. A job's end is announced
// to its webhook with it (core/webhooks/announce.ts): a job that has one is
// settled in a transaction (the caller's), since that is a second statement.
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { creditMoves, type Movement } from '../credits/accounts.ts';
import { costAt, priceOf } from '../credits/prices.ts';
import { announce } from '../webhooks/announce.ts';
import { insertMedia, type MediaDraft, type MediaItem } from '../media/items.ts';
import { jobColumns, jobRow, type JobErrorBody, type JobRow } from './model.ts';

export async function lockJob(db: CommonQueryMethods, jobId: string): Promise<JobRow | null> {
  return db.maybeOne(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${jobId} for update`);
}

/** A worker's run of a job: its change applies only while the job is still running under it. */
export type Run = { lockedBy: string | null; attempts: number };

/** How the job's open attempt ends with the change. */
export type AttemptOutcome = 'succeeded' | 'failed' | 'retrying' | 'waiting' | 'lost' | 'canceled' | 'deferred';

export type ChangeOptions = { run?: Run; attempt?: AttemptOutcome };

type Change = {
  set: ReturnType<typeof sql.fragment>;
  moves: Movement[];
  attempt: AttemptOutcome;
  error?: JobErrorBody;
};

/** The job's entries in the ledger, for the account that reserved (none for a job that reserved nothing). */
const creditsOf = (job: JobRow, moves: Movement[]) => {
  const moving = moves.filter((move) => move.amount !== 0 || (move.reservedChange ?? 0) !== 0);
  if (!job.account_id || moving.length === 0) return sql.fragment``;
  const owner = {
    accountId: job.account_id,
    tenantId: job.tenant_id,
    siteId: job.site_id,
    userId: job.user_id,
    jobId: job.id,
    operation: job.kind,
  };
  return sql.fragment`, ${creditMoves(owner, moving, { when: sql.fragment`exists (select from job)`, guarded: false })}`;
};

/** Applies the change; null when `run` was given and no longer holds the job. */
async function change(
  db: CommonQueryMethods,
  job: JobRow,
  { set, moves, attempt, error }: Change,
  run: Run | undefined,
): Promise<JobRow | null> {
  const held = run
    ? sql.fragment`and status = 'running' and locked_by = ${run.lockedBy} and attempts = ${run.attempts}`
    : sql.fragment``;
  return db.maybeOne(
    prepared(sql.type(jobRow)`
    with job as (
      update jobs set ${set} where id = ${job.id} ${held} returning *
    ), attempt as (
      update job_attempts set finished_at = now(), outcome = ${attempt},
             error = ${error ? sql.jsonb({ code: error.code, message: error.message }) : null}
      where job_id = ${job.id} and outcome is null and exists (select from job)
    ) ${creditsOf(job, moves)}
    select ${jobColumns} from job as jobs`),
  );
}

/** A change that ends the job, announced to its webhook (no query without one). */
async function end(db: CommonQueryMethods, job: JobRow, ending: Change, run: Run | undefined) {
  const row = await change(db, job, ending, run);
  if (row) await announce(db, row, 'completed');
  return row;
}

const release = (amount: number, reason: string): Movement => ({
  kind: 'release',
  amount: 0,
  reservedChange: -amount,
  reason,
});

export type Success = {
  output: Record<string, unknown>;
  /** Units used (seconds of audio, images...), in the unit the job is charged by (the call's, when it names one). */
  units: number;
  /**
   * The planned call that made the result, with the price agreed at submit
   * (core/jobs/pricing.ts): a job that fell back to another provider is
   * charged that one's price. Absent: the job's own price.
   */
  call?: { unit_price?: number | undefined } | undefined;
  /**
   * What the job reckoned it costs itself, in credits (an agent run: the sum
   * of its steps, each at its model's price); rounded up, and never more than
   * was reserved. Absent: `units` at the price.
   */
  credits?: number | undefined;
  media?: MediaDraft[];
  /**
   * Writes the job's result (a post, say) in the settling transaction, after
   * the media items, so the result, the debit and the job's status commit
   * together or not at all: a run that was canceled or taken over writes
   * nothing. What it answers is added to the output.
   */
  commit?: (tx: CommonQueryMethods, made: { media: MediaItem[] }) => Promise<Record<string, unknown> | void>;
};

/** Whether a success writes more than the job's row, and so needs a transaction of its own around its change. */
export const writesBeyondTheJob = (result: Success) => (result.media?.length ?? 0) > 0 || result.commit !== undefined;

export async function succeed(
  db: CommonQueryMethods,
  job: JobRow,
  result: Success,
  options: ChangeOptions = {},
): Promise<JobRow | null> {
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
  const output: Record<string, unknown> = {
    ...result.output,
    ...((await result.commit?.(db, { media })) ?? {}),
    // A test job's result says so wherever it is read (core/jobs/test-mode.ts).
    ...(job.test_mode ? { test: true } : {}),
  };
  // At the price agreed at submit (of the provider that made it), and never more than was reserved.
  const unitPrice = result.call?.unit_price ?? job.unit_price;
  const cost =
    result.credits !== undefined
      ? costAt(1, result.credits)
      : unitPrice !== null
        ? costAt(unitPrice, result.units)
        : (await priceOf(db, job.site_id, job.kind, result.units)).cost;
  const charged = Math.min(cost, job.credits_reserved);
  const ids = media.map((item) => item.id);
  // Who made the result: an asynchronous provider is named when the job is handed over; one that ran here, by its output.
  const provider = typeof output.provider === 'string' ? output.provider : null;
  return end(
    db,
    job,
    {
      set: sql.fragment`
        status = 'succeeded', progress = 1, stage = 'done', output = ${sql.jsonb(output)}, error = null,
        provider = coalesce(provider, ${provider}), unit_price = ${unitPrice}::numeric,
        credits_charged = ${charged}, media_id = ${ids[0] ?? null}, media_ids = ${sql.array(ids, 'uuid')},
        finished_at = now(), locked_by = null`,
      moves: [
        { kind: 'debit', amount: -charged, reservedChange: -charged, reason: `${job.kind}: ${result.units} units` },
        release(job.credits_reserved - charged, 'Unused reservation released'),
      ],
      attempt: options.attempt ?? 'succeeded',
    },
    options.run,
  );
}

/**
 * Fails the job. What it spent before failing (`spent`: an agent run's model
 * calls, paid to the vendor whatever came of them) is charged, never more than
 * was reserved; the rest is released.
 */
export async function fail(
  db: CommonQueryMethods,
  job: JobRow,
  error: JobErrorBody,
  options: ChangeOptions & { spent?: number } = {},
): Promise<JobRow | null> {
  const charged = Math.min(costAt(1, options.spent ?? 0), job.credits_reserved);
  return end(
    db,
    job,
    {
      set: sql.fragment`
        status = 'failed', error = ${sql.jsonb({ ...error, transient: false })}, credits_charged = ${charged},
        finished_at = now(), locked_by = null`,
      moves: [
        { kind: 'debit', amount: -charged, reservedChange: -charged, reason: `${job.kind}: spent before it failed` },
        release(job.credits_reserved - charged, `Job failed: ${error.code}`),
      ],
      attempt: options.attempt ?? 'failed',
      error,
    },
    options.run,
  );
}

/** Handed to an asynchronous provider: nothing runs until its webhook arrives. */
export async function park(
  db: CommonQueryMethods,
  job: JobRow,
  provider: string,
  providerRef: string,
  options: ChangeOptions = {},
): Promise<JobRow | null> {
  return change(
    db,
    job,
    {
      set: sql.fragment`
        status = 'waiting', provider = ${provider}, provider_ref = ${providerRef}, waiting_at = now(),
        stage = 'waiting for the provider', locked_by = null`,
      moves: [],
      attempt: options.attempt ?? 'waiting',
    },
    options.run,
  );
}

/** A transient failure with attempts left: back to the queue, the error shown meanwhile. */
/**
 * Back to the queue without counting the run as an attempt: it waited for its
 * provider's limit and did nothing. The stage says what it waits for.
 */
export async function defer(db: CommonQueryMethods, job: JobRow, stage: string, options: ChangeOptions = {}) {
  return change(
    db,
    job,
    {
      set: sql.fragment`status = 'queued', stage = ${stage.slice(0, 200)}, attempts = attempts - 1, locked_by = null`,
      moves: [],
      attempt: 'deferred',
    },
    options.run,
  );
}

export async function requeue(
  db: CommonQueryMethods,
  job: JobRow,
  error: JobErrorBody,
  options: ChangeOptions = {},
): Promise<JobRow | null> {
  return change(
    db,
    job,
    {
      set: sql.fragment`
        status = 'queued', stage = 'retrying', error = ${sql.jsonb({ ...error, transient: true })}, locked_by = null`,
      moves: [],
      attempt: options.attempt ?? 'retrying',
      error,
    },
    options.run,
  );
}
