// One attempt at delivering a webhook (a job's, or a content event's), run by the queue
// (worker/tasks/webhook__deliver.ts): signed with the tenant's secret at the
// moment it is sent, POSTed through the SSRF-safe fetcher (no redirects
// followed, JOB_WEBHOOK_TIMEOUT_MS at most), and recorded. The attempt, the
// delivery's new state and the next attempt's queue entry commit together.
// A 2xx delivers it; a 410 Gone, an address or URL that may not be reached
// end it; anything else is retried after the next wait of
// JOB_WEBHOOK_RETRY_SECONDS, and fails once they are spent.
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { enqueue } from '../jobs/enqueue.ts';
import type { Logger } from '../logger.ts';
import { safeFetch, SafeFetchError, type Resolve } from '../net/safe-fetch.ts';
import { deliverTask, deliveryKey, deliveryLane, taskAttempts } from './announce.ts';
import { withFileUrls } from './file-urls.ts';
import { signature, signingSecrets } from './secrets.ts';

/** A delivery still to be made, as an attempt reads it. */
export const pending = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  url: z.string(),
  payload: z.string(),
  attempts: z.number(),
});
export type Pending = z.infer<typeof pending>;
export const pendingColumns = sql.fragment`id, tenant_id, url, payload, attempts`;

type AttemptError = { code: string; message: string };
export type Outcome = {
  verdict: 'delivered' | 'retry' | 'end';
  responseStatus: number | null;
  error: AttemptError | null;
};

export type DeliverDeps = {
  db: DatabasePool;
  config: Config;
  logger: Logger;
  resolve?: Resolve | undefined;
  /** The worker stopping: an attempt cut short is not recorded, and the queue runs the task again. */
  signal?: AbortSignal;
};

/** Refusals no retry can change: the URL or the address it leads to may not be reached. */
const unreachable = new Set(['url-not-allowed', 'address-not-allowed']);

async function send({ config, resolve, signal }: DeliverDeps, delivery: Pending, secrets: string[]): Promise<Outcome> {
  const url = new URL(delivery.url);
  // The allowlist may have changed since the job was submitted.
  if (url.protocol === 'http:' && !config.webhooks.httpHosts.includes(url.hostname)) {
    const error = {
      code: 'url_not_allowed',
      message: 'Only https webhooks are sent to this host: JOB_WEBHOOK_HTTP_HOSTS does not name it.',
    };
    return { verdict: 'end', responseStatus: null, error };
  }
  const sentAt = Math.floor(Date.now() / 1000);
  try {
    const { status } = await safeFetch(url, {
      post: { body: delivery.payload, contentType: 'application/json' },
      headers: {
        'User-Agent': 'content-platform-webhooks/1',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(sentAt),
        'webhook-signature': signature(secrets, delivery.id, sentAt, delivery.payload),
      },
      redirect: 'manual',
      readBody: false,
      timeoutMs: config.webhooks.timeoutMs,
      allowLoopback: config.fetch.allowLoopback,
      ...(resolve ? { resolve } : {}),
      ...(signal ? { signal } : {}),
    });
    if (status >= 200 && status < 300) return { verdict: 'delivered', responseStatus: status, error: null };
    const error = { code: status === 410 ? 'gone' : 'http_status', message: `The receiver answered ${status}.` };
    return { verdict: status === 410 ? 'end' : 'retry', responseStatus: status, error };
  } catch (thrown) {
    if (!(thrown instanceof SafeFetchError)) throw thrown;
    const error = { code: thrown.code.replaceAll('-', '_'), message: thrown.message };
    return { verdict: unreachable.has(thrown.code) ? 'end' : 'retry', responseStatus: null, error };
  }
}

/** The wait before retry `n` (1-based), give or take a tenth so that retries of many deliveries spread out. */
function waitMs(config: Config, n: number): number | undefined {
  const seconds = config.webhooks.retrySeconds[n - 1];
  return seconds === undefined ? undefined : seconds * 1000 * (0.9 + Math.random() * 0.2);
}

/** What an attempt came to and when it was made, as recorded. */
export type Attempt = { attempt: number; startedAt: Date; durationMs: number; outcome: Outcome };

/**
 * Records an attempt of a pending delivery: the attempt, the delivery's new
 * state, and the next attempt's queue entry while the waits of
 * JOB_WEBHOOK_RETRY_SECONDS last. Only from the state the attempt started
 * from: an attempt recorded meanwhile (a run of the same attempt that got
 * here first) wins, and this one changes nothing. Answers the new status,
 * or null when nothing changed.
 */
export async function recordAttempt(
  tx: CommonQueryMethods,
  config: Config,
  delivery: Pending,
  { attempt, startedAt, durationMs, outcome }: Attempt,
): Promise<'succeeded' | 'pending' | 'failed' | null> {
  const wait = outcome.verdict === 'retry' ? waitMs(config, attempt) : undefined;
  const nextAt = wait === undefined ? null : new Date(Date.now() + wait);
  const status = outcome.verdict === 'delivered' ? 'succeeded' : nextAt ? 'pending' : 'failed';
  const moved = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    update job_webhooks set attempts = ${attempt}, status = ${status}, next_attempt_at = ${nextAt?.toISOString() ?? null},
           finished_at = ${status === 'pending' ? null : sql.fragment`now()`}
    where id = ${delivery.id} and attempts = ${delivery.attempts} and status = 'pending'
    returning id`);
  if (!moved) return null;
  await tx.query(sql.typeAlias('void')`
    insert into job_webhook_attempts (webhook_id, tenant_id, attempt, started_at, duration_ms, response_status, error)
    values (${delivery.id}, ${delivery.tenant_id}, ${attempt}, ${startedAt.toISOString()}, ${durationMs},
            ${outcome.responseStatus}, ${outcome.error ? sql.jsonb(outcome.error) : null})`);
  if (nextAt) await queueAttempt(tx, delivery, nextAt);
  return status;
}

/** The delivery's next attempt, on its tenant's lane at `runAt`, replacing any entry it has. */
const queueAttempt = (tx: CommonQueryMethods, delivery: Pending, runAt: Date) =>
  enqueue(
    tx,
    deliverTask,
    { webhook_id: delivery.id },
    {
      queueName: deliveryLane(delivery.tenant_id),
      runAt,
      maxAttempts: taskAttempts,
      jobKey: deliveryKey(delivery.id),
    },
  );

/**
 * When an earlier delivery of the same item to the same subscription (a
 * content event's, ./content-events.ts) that is still pending will next be
 * tried; null when none is, and always for a job's delivery. A later
 * delivery waits for it, so that an item's events arrive in order even
 * when one is retried.
 */
const heldUntil = sql.fragment`(
  select max(greatest(coalesce(b.next_attempt_at, now()), now())) from job_webhooks b
  where b.subscription_id = d.subscription_id and b.item_id = d.item_id and b.event_id < d.event_id
    and b.status = 'pending') as held_until`;

/** Holds a delivery back until `until` (and a moment, so that the earlier one runs first): no attempt is made or counted. */
async function holdBack(db: DatabasePool, delivery: Pending, until: string): Promise<void> {
  const runAt = new Date(Date.parse(until) + heldMarginMs);
  await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      update job_webhooks set next_attempt_at = ${runAt.toISOString()} where id = ${delivery.id} and status = 'pending'`);
    await queueAttempt(tx, delivery, runAt);
  });
}

const heldMarginMs = 250;

export async function deliver(deps: DeliverDeps, webhookId: string): Promise<void> {
  const { db, config, logger } = deps;
  const found = await db.maybeOne(sql.type(pending.extend({ held_until: z.string().nullable() }))`
    select ${pendingColumns}, ${heldUntil} from job_webhooks d where id = ${webhookId} and status = 'pending'`);
  // Gone with its job or subscription, or already delivered or ended: a second run does nothing.
  if (!found) return;
  const { held_until: until, ...delivery } = found;
  if (until) return holdBack(db, delivery, until);
  const attempt = delivery.attempts + 1;
  // The job's file URLs are made now, so that a retry hours later carries URLs that still work (./file-urls.ts).
  const sent = { ...delivery, payload: await withFileUrls(db, config, delivery.payload) };
  const startedAt = new Date();
  const started = performance.now();
  const outcome = await send(deps, sent, await signingSecrets(db, delivery.tenant_id));
  const durationMs = Math.round(performance.now() - started);
  const status = await db.transaction((tx) =>
    recordAttempt(tx, config, delivery, { attempt, startedAt, durationMs, outcome }),
  );
  if (!status) return;
  logger.info(
    { webhook_id: delivery.id, attempt, status, response_status: outcome.responseStatus, error: outcome.error?.code },
    'webhook attempt',
  );
}
