// Every job-creating route — one that answers jobResponses (./answer.ts) —
// takes `webhook` and `webhook_events` beside its own fields
// (core/webhooks/request.ts). They are added here, to every such route at
// once (api/all-routes.ts), rather than spelt out in each: its body schema gains
// them, so validation and the document agree; its handler gets its own body
// without them, and the webhook asked for on `context.webhook`, which
// submitAndAnswer hands to the submit. A route with a multipart body reads
// the fields from its form itself (posts/from-pdf).
// They take the job's own `priority` too (core/jobs/request-priority.ts), on
// `context.priority`, which each route hands to its submit, except the routes
// whose domain function does not carry it yet (`withoutPriority`).
import { z } from 'zod';
import { needs } from '../../core/field-rules.ts';
import { requestPriorityField } from '../../core/jobs/request-priority.ts';
import { requestedWebhook, webhookFields, type WebhookFields } from '../../core/webhooks/request.ts';
import type { RouteDefinition } from '../route.ts';
import { jobResponses } from './answer.ts';

/**
 * The body schema with the webhook fields: a body that had none becomes an
 * optional one of them alone. The document says `webhook_events` needs
 * `webhook` (requestedWebhook() refuses it alone), beside the body's own
 * rules; the extended body is a schema of its own, not the component it grew from.
 */
function withWebhookFields(key: string, body: z.ZodType | undefined): z.ZodType {
  const rule = needs('webhook_events', 'webhook');
  const fields = { ...webhookFields.shape, priority: priorityField };
  if (body === undefined) return z.strictObject(fields).meta(rule).optional();
  if (body instanceof z.ZodObject) {
    const { id: _id, ...own } = body.meta() ?? {};
    return body.safeExtend(fields).meta({ ...own, ...rule });
  }
  if (body instanceof z.ZodOptional) return withWebhookFields(key, body.unwrap() as z.ZodType).optional();
  if (body instanceof z.ZodDefault) {
    const fallback = body.def.defaultValue as never;
    return withWebhookFields(key, body.unwrap() as z.ZodType).default(fallback);
  }
  throw new Error(`${key} answers a job, but its body is not an object the webhook fields can be added to`);
}

const priorityField = requestPriorityField.optional();

export function takingWebhooks(route: RouteDefinition): RouteDefinition {
  if (route.responses[202] !== jobResponses[202] || route.request?.rawBody) return route;
  return {
    ...route,
    request: { ...route.request, body: withWebhookFields(route.key, route.request?.body) },
    async handler(input, context, http) {
      const sent = input.body as (WebhookFields & { priority?: number } & Record<string, unknown>) | undefined;
      const { webhook, webhook_events, priority, ...own } = sent ?? {};
      context.webhook = requestedWebhook(context.services.config, { webhook, webhook_events });
      context.priority = priority;
      return route.handler({ ...input, body: sent === undefined ? undefined : own }, context, http);
    },
  };
}
