// Content webhook subscriptions: where a tenant's content events
// (./content-events.ts) are POSTed, which ones, for all its sites or one.
// Tenant admins manage them, as they manage the secret that signs them
// (./secrets.ts). A URL is judged as a job's webhook is (./request.ts): https,
// or http to the hosts JOB_WEBHOOK_HTTP_HOSTS names, never to an address
// written out that is private; where a name leads is judged at each delivery.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem, notFound } from '../errors.ts';
import { requireTenantAdmin } from '../identity/access.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { contentEventTypes } from './content-events.ts';
import { webhookAttemptSchema, withAttempts } from './deliveries.ts';
import { checkWebhookUrl } from './request.ts';

export const contentWebhookSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    site_id: z.uuid().nullable().describe('The one site it hears; null: every site of the tenant'),
    url: z.string(),
    events: z.array(z.enum(contentEventTypes)),
    enabled: z.boolean(),
    description: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ContentWebhook' });

export type ContentWebhook = z.infer<typeof contentWebhookSchema>;

export const contentWebhookDeliverySchema = z
  .object({
    id: z.uuid().describe('The `webhook-id` header, the same on every attempt'),
    event: z.enum(contentEventTypes),
    event_id: z.number().int().describe('The event’s place in the tenant’s order of events'),
    item_id: z.uuid().describe('The element, page, post or media item'),
    url: z.string(),
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe(
        'pending: an attempt is due (at `next_attempt_at` after a failed one, or after an earlier delivery of the ' +
          'same item); failed: no more attempts',
      ),
    occurred_at: timestamp.describe('When the change was made: the `timestamp` of its payload'),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
    finished_at: timestamp.nullable(),
    attempts: z.array(webhookAttemptSchema),
  })
  .meta({ id: 'ContentWebhookDelivery' });

export type NewContentWebhook = {
  url: string;
  events: string[];
  site_id?: string | null | undefined;
  enabled?: boolean | undefined;
  description?: string | undefined;
};
export type ContentWebhookChanges = Partial<NewContentWebhook>;

const columns = sql.fragment`id, tenant_id, site_id, url, events, enabled, description, created_at, updated_at`;

/** 422 when the site named is not one of the tenant's. */
async function checkSite(db: CommonQueryMethods, tenantId: string, siteId: string | null | undefined) {
  if (!siteId) return;
  const found = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    select id from sites where id = ${siteId} and tenant_id = ${tenantId}`);
  if (!found) {
    throw new Problem(422, 'The request is not valid; see errors.', {
      errors: [{ path: 'body.site_id', message: 'not a site of this tenant' }],
    });
  }
}

export async function createContentWebhook(
  db: CommonQueryMethods,
  config: Config,
  actor: Actor,
  tenantId: string,
  input: NewContentWebhook,
): Promise<ContentWebhook> {
  await requireTenantAdmin(db, actor, tenantId);
  checkWebhookUrl(config, input.url, 'url');
  await checkSite(db, tenantId, input.site_id);
  return db.one(sql.type(contentWebhookSchema)`
    insert into content_webhooks (tenant_id, site_id, url, events, enabled, description, created_by)
    values (${tenantId}, ${input.site_id ?? null}, ${input.url}, ${sql.array([...new Set(input.events)], 'text')},
            ${input.enabled ?? true}, ${input.description ?? ''}, ${actor.kind === 'user' ? actor.userId : null})
    returning ${columns}`);
}

export async function listContentWebhooks(db: CommonQueryMethods, actor: Actor, tenantId: string, query: PageQuery) {
  await requireTenantAdmin(db, actor, tenantId);
  const where = sql.fragment`w.tenant_id = ${tenantId}`;
  const rows = await db.any(sql.type(contentWebhookSchema)`
    select ${columns} from content_webhooks w where ${where} and ${after(query, 'w')}
    order by w.created_at, w.id limit ${query.limit + 1}`);
  return toPage(rows, query, () => countOf(db, sql.fragment`select from content_webhooks w where ${where}`));
}

export async function getContentWebhook(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  id: string,
): Promise<ContentWebhook> {
  await requireTenantAdmin(db, actor, tenantId);
  const found = await db.maybeOne(sql.type(contentWebhookSchema)`
    select ${columns} from content_webhooks where id = ${id} and tenant_id = ${tenantId}`);
  if (!found) throw notFound('No such content webhook.');
  return found;
}

export async function updateContentWebhook(
  db: CommonQueryMethods,
  config: Config,
  actor: Actor,
  tenantId: string,
  id: string,
  changes: ContentWebhookChanges,
): Promise<ContentWebhook> {
  await requireTenantAdmin(db, actor, tenantId);
  if (changes.url) checkWebhookUrl(config, changes.url, 'url');
  await checkSite(db, tenantId, changes.site_id);
  const events = changes.events ? sql.array([...new Set(changes.events)], 'text') : null;
  const updated = await db.maybeOne(sql.type(contentWebhookSchema)`
    update content_webhooks set
      url = coalesce(${changes.url ?? null}, url),
      events = coalesce(${events}::text[], events),
      site_id = ${changes.site_id === undefined ? sql.fragment`site_id` : changes.site_id},
      enabled = coalesce(${changes.enabled ?? null}, enabled),
      description = coalesce(${changes.description ?? null}, description),
      updated_at = now()
    where id = ${id} and tenant_id = ${tenantId}
    returning ${columns}`);
  if (!updated) throw notFound('No such content webhook.');
  return updated;
}

/** Deletes the subscription with its deliveries: those still pending are not sent. */
export async function deleteContentWebhook(db: CommonQueryMethods, actor: Actor, tenantId: string, id: string) {
  await requireTenantAdmin(db, actor, tenantId);
  const gone = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    delete from content_webhooks where id = ${id} and tenant_id = ${tenantId} returning id`);
  if (!gone) throw notFound('No such content webhook.');
}

const deliveryRow = contentWebhookDeliverySchema.omit({ attempts: true });

/** The subscription's deliveries with their attempts, oldest first. */
export async function listContentWebhookDeliveries(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  id: string,
  query: PageQuery,
) {
  await getContentWebhook(db, actor, tenantId, id);
  const where = sql.fragment`d.subscription_id = ${id}`;
  const rows = await db.any(sql.type(deliveryRow)`
    select d.id, d.event, d.event_id, d.item_id, d.url, d.status, d.occurred_at, d.next_attempt_at, d.created_at,
           d.finished_at
    from job_webhooks d where ${where} and ${after(query, 'd')}
    order by d.created_at, d.id limit ${query.limit + 1}`);
  const page = await toPage(rows, query, () => countOf(db, sql.fragment`select from job_webhooks d where ${where}`));
  return withAttempts(db, page);
}
