// Content events: what the database records when published content changes
// (db/migrations/0057_content_webhooks.sql, triggers on elements, pages,
// posts and media, whoever writes them), and their fan-out into deliveries.
// The triggers queue one run per tenant, folded into one that is still
// waiting (a bulk change is one queue entry), on the tenant's delivery lane:
// it makes a delivery per event and subscription that wants it, and sends
// them through ./deliver.ts, as a job's are sent, each item's in event order.
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabasePool } from '../../db/pool.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { deliveryLane, taskAttempts } from './announce.ts';
import { deliver, type DeliverDeps } from './deliver.ts';

export const fanOutTask = 'content_webhooks__fan_out';

/** Each event type and when it is sent: the subscriptions' `events`, and the document's `webhooks`. */
export const contentEvents = {
  'element.published':
    'an element was published, or its live version changed while published (a first publish, an edit, a draft published; ' +
    'not a draft saved beside it)',
  'element.unpublished': 'a published element went back to draft or was archived',
  'element.deleted': 'an element was deleted',
  'page.published':
    'a page was published, or its title, SEO, template or layout (the elements placed on it) changed while published',
  'page.moved': 'a page’s path changed (its slug, or a move of it or of a page above it: one event per page)',
  'page.unpublished': 'a published page went back to draft or was archived',
  'page.deleted': 'a page was deleted',
  'post.published': 'a post was published (also when scheduled), or edited while published',
  'post.unpublished': 'a published post went back to draft, was scheduled again or archived',
  'post.deleted': 'a post was deleted',
  'media.created': 'a media item was added (uploaded, imported or made by a job)',
  'media.updated': 'a media item’s file (a new version), status, alt, title, caption, tags or focal point changed',
  'media.deleted': 'a media item was deleted',
} as const;

export type ContentEvent = keyof typeof contentEvents;
export const contentEventTypes = Object.keys(contentEvents) as [ContentEvent, ...ContentEvent[]];

/** Events fanned out, and deliveries sent, per round. */
const batchSize = 500;

/** How long one run keeps the tenant's lane before it queues the rest as another run. */
const budgetMs = 30_000;

/** Queues the tenant's run (as the triggers do), folded into one already waiting. */
export const queueFanOut = (db: CommonQueryMethods, tenantId: string) =>
  enqueue(
    db,
    fanOutTask,
    { tenant_id: tenantId },
    {
      queueName: deliveryLane(tenantId),
      jobKey: fanOutKey(tenantId),
      jobKeyMode: 'preserve_run_at',
      maxAttempts: taskAttempts,
    },
  );

/** The key of a tenant's run: the stranded sweep (./stranded.ts) asks whether it can still send what waits for it. */
export const fanOutKey = (tenantId: string) => `content-events:${tenantId}`;

/**
 * A tenant's run: its events become deliveries, and the deliveries waiting
 * for their first attempt are sent by ./deliver.ts as a job's are, each
 * item's one after another in event order, a few items at a time (a failed
 * one is retried on its own queue entry, and holds back the item's later
 * ones). Sending them here, rather than one queue entry each, is what
 * makes a bulk change quick to hear: a subtree of 500 pages moved is one
 * run, not 500 turns of the queue.
 */
export async function runContentWebhooks(deps: DeliverDeps, tenantId: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const taken = await fanOut(deps.db, tenantId);
    const sent = await sendWaiting(deps, tenantId);
    // A worker stopping may have left some unsent: the next run sends them.
    if (!deps.signal?.aborted && taken < batchSize && sent < batchSize) return;
    if (deps.signal?.aborted || Date.now() - started > budgetMs) {
      await queueFanOut(deps.db, tenantId);
      return;
    }
  }
}

/**
 * Deliveries sent at once, each to another item: an item's own go one after
 * another, in event order; the receiver's round trips overlap.
 */
const parallelItems = 4;

/** Sends the tenant's content deliveries that wait for their first attempt, oldest event first; answers how many it took. */
async function sendWaiting(deps: DeliverDeps, tenantId: string): Promise<number> {
  const waiting = await deps.db.any(sql.type(z.object({ id: z.uuid(), item: z.string() }))`
    select id, subscription_id || ' ' || item_id as item from job_webhooks
    where tenant_id = ${tenantId} and subscription_id is not null and status = 'pending' and attempts = 0
      and next_attempt_at is null
    order by event_id, id limit ${batchSize}`);
  const byItem = new Map<string, string[]>();
  for (const { id, item } of waiting) {
    const ids = byItem.get(item);
    if (ids) ids.push(id);
    else byItem.set(item, [id]);
  }
  const items = [...byItem.values()];
  const sendItems = async () => {
    for (let ids = items.shift(); ids; ids = items.shift()) {
      for (const id of ids) {
        // A worker stopping leaves the rest to the next run.
        if (deps.signal?.aborted) return;
        await deliver(deps, id);
      }
    }
  };
  await Promise.all(Array.from({ length: parallelItems }, sendItems));
  return waiting.length;
}

/**
 * Turns the tenant's events into deliveries, oldest first, one per event
 * and subscription that wants it. The payload is made here, once: every
 * attempt sends the same bytes. The events taken are deleted, as their
 * deliveries carry them. Answers how many events it took.
 */
export async function fanOut(db: DatabasePool, tenantId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`
    with batch as (
      select id from content_events where tenant_id = ${tenantId} order by id limit ${batchSize} for update
    ), taken as (
      delete from content_events e using batch where e.id = batch.id
      returning e.id, e.tenant_id, e.site_id, e.type, e.item_id, e.data, e.occurred_at
    ), made as (
      insert into job_webhooks (tenant_id, subscription_id, event_id, item_id, event, url, payload, occurred_at)
      select m.tenant_id, s.id, m.id, m.item_id, m.type, s.url,
             -- {type, timestamp, data} in that order, as a job's are written.
             concat('{"type":', to_json(m.type), ',"timestamp":',
                    to_json(to_char(m.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')),
                    ',"data":', m.data, '}'),
             m.occurred_at
      from taken m
      join content_webhooks s on s.tenant_id = m.tenant_id and s.enabled and m.type = any(s.events)
        and (s.site_id is null or s.site_id = m.site_id) and s.created_at <= m.occurred_at
      on conflict (subscription_id, event_id) where subscription_id is not null do nothing
      returning id
    )
    select (select count(*)::int from taken) as count from (select count(*) from made) m`);
}
