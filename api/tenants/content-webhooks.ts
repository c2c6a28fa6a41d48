// Content webhook subscriptions of a tenant (beyond the specification; see
// api/extensions.tsv): where its content events are POSTed, signed with the
// tenant's webhook secret (./webhook-secret.ts), and each one's delivery log.
// Tenant admins only; the domain is core/webhooks/subscriptions.ts.
import { z } from 'zod';
import { contentEventTypes } from '../../core/webhooks/content-events.ts';
import {
  contentWebhookDeliverySchema,
  contentWebhookSchema,
  createContentWebhook,
  deleteContentWebhook,
  getContentWebhook,
  listContentWebhookDeliveries,
  listContentWebhooks,
  updateContentWebhook,
} from '../../core/webhooks/subscriptions.ts';
import { webhookUrl } from '../../core/webhooks/request.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, somethingToChange, uuidParams } from '../schemas.ts';

const params = uuidParams('tenant_id');
const oneParams = uuidParams('tenant_id', 'content_webhook_id');

const fields = {
  url: webhookUrl.describe(
    'Where the events are POSTed: https, or http to the hosts JOB_WEBHOOK_HTTP_HOSTS names. Signed the Standard Webhooks ' +
      'way with the tenant’s secret (`GET /api/tenants/{tenant_id}/webhook-secret`)',
  ),
  events: z
    .array(z.enum(contentEventTypes))
    .min(1)
    .max(contentEventTypes.length * 2)
    .describe('The event types to send (see the document’s `webhooks`)'),
  site_id: z.uuid().nullable().describe('Only this site’s events; null or omitted: every site of the tenant'),
  enabled: z.boolean().describe('While false nothing is recorded or sent for it'),
  description: z.string().trim().max(500),
};

const newSubscription = z
  .strictObject({
    url: fields.url,
    events: fields.events,
    site_id: fields.site_id.optional(),
    enabled: fields.enabled.default(true),
    description: fields.description.default(''),
  })
  .meta({
    examples: [
      {
        url: 'https://build.example.com/hooks/cms',
        events: ['element.published', 'page.published', 'page.moved', 'page.deleted'],
        description: 'Static site rebuild',
      },
    ],
  });

const changes = somethingToChange(
  z.strictObject({
    url: fields.url.optional(),
    events: fields.events.optional(),
    site_id: fields.site_id.optional(),
    enabled: fields.enabled.optional(),
    description: fields.description.optional(),
  }),
);

export const routes = [
  defineRoute({
    key: 'GET /api/tenants/{tenant_id}/content-webhooks',
    access: 'user',
    description: 'The tenant’s content webhook subscriptions, oldest first. Tenant admins only.',
    request: { params, query: pageQuery },
    responses: { 200: { description: 'A page of subscriptions', schema: pageSchema(contentWebhookSchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listContentWebhooks(db, actor, params.tenant_id, query) };
    },
  }),

  defineRoute({
    key: 'POST /api/tenants/{tenant_id}/content-webhooks',
    access: 'user',
    description:
      'Subscribes a URL to content events: elements, pages and posts published, moved, unpublished or deleted, media ' +
      'added, changed or deleted, whoever makes the change. Each event is delivered once, in order per item, with the ids, ' +
      'locale, public paths and Surrogate-Keys it changed. Tenant admins only.',
    request: { params, body: newSubscription },
    responses: created('The subscription', contentWebhookSchema),
    async handler({ params, body }, { db, actor, services }) {
      return { status: 201, body: await createContentWebhook(db, services.config, actor, params.tenant_id, body) };
    },
  }),

  defineRoute({
    key: 'GET /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}',
    access: 'user',
    description: 'A content webhook subscription. Tenant admins only.',
    request: { params: oneParams },
    responses: { 200: { description: 'The subscription', schema: contentWebhookSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await getContentWebhook(db, actor, params.tenant_id, params.content_webhook_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}',
    access: 'user',
    description: 'Changes a subscription. Deliveries already made keep the URL they were made for. Tenant admins only.',
    request: { params: oneParams, body: changes },
    responses: { 200: { description: 'The subscription', schema: contentWebhookSchema } },
    async handler({ params, body }, { db, actor, services }) {
      return {
        body: await updateContentWebhook(db, services.config, actor, params.tenant_id, params.content_webhook_id, body),
      };
    },
  }),

  defineRoute({
    key: 'DELETE /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}',
    access: 'user',
    description:
      'Ends a subscription, with its delivery log; deliveries still pending are not sent. Tenant admins only.',
    request: { params: oneParams },
    responses: noContent('Deleted'),
    async handler({ params }, { db, actor }) {
      await deleteContentWebhook(db, actor, params.tenant_id, params.content_webhook_id);
      return {};
    },
  }),

  defineRoute({
    key: 'GET /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}/deliveries',
    access: 'user',
    description:
      'The subscription’s deliveries, each with its attempts (status, the receiver’s answer, how long it took), oldest ' +
      'first. Tenant admins only.',
    request: { params: oneParams, query: pageQuery },
    responses: { 200: { description: 'A page of deliveries', schema: pageSchema(contentWebhookDeliverySchema) } },
    async handler({ params, query }, { db, actor }) {
      return {
        body: await listContentWebhookDeliveries(db, actor, params.tenant_id, params.content_webhook_id, query),
      };
    },
  }),
];
