// The webhooks the platform sends (core/webhooks/announce.ts and deliver.ts),
// in the document's `webhooks` (OpenAPI 3.1): what a receiver gets for each
// event a job-creating request names in `webhook_events`, and for each
// content event a subscription names, the Standard Webhooks headers it
// verifies, and what its answer makes us do.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jobSchema, type WebhookEvent } from '../core/jobs/model.ts';
import { contentEvents } from '../core/webhooks/content-events.ts';

const events: Record<WebhookEvent, { type: string; when: string }> = {
  start: { type: 'job.started', when: 'a worker started the job (once per run: a job taken over is not told twice)' },
  progress: {
    type: 'job.progress',
    when: 'the job’s progress or stage changed (at most once a second; changes meanwhile are folded into one)',
  },
  completed: {
    type: 'job.completed',
    when: 'the job ended: succeeded, failed or canceled (once; the default when `webhook_events` is not given)',
  },
};

const headers = z.object({
  'webhook-id': z.string().describe('The delivery’s id: the same on every retry of it, so a receiver can drop repeats'),
  'webhook-timestamp': z
    .string()
    .regex(/^[0-9]+$/)
    .describe('When this attempt was signed, in seconds since the epoch: refuse ones too far from now'),
  'webhook-signature': z
    .string()
    .describe(
      '`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` with the tenant’s webhook secret ' +
        '(GET /api/tenants/{tenant_id}/webhook-secret); during a rotation, one such value per secret, space-separated. ' +
        'Any Standard Webhooks library (e.g. the `standardwebhooks` package) verifies it',
    ),
});

type Webhook = { type: string; summary: string; description: string; data: z.ZodType };

/** One webhook of the document: the Standard Webhooks headers, `{type, timestamp, data}`, and what answers do. */
function registerWebhook(registry: OpenAPIRegistry, { type, summary, description, data }: Webhook): void {
  registry.registerWebhook({
    method: 'post',
    path: type,
    operationId: `webhook_${type.replace('.', '_')}`,
    summary,
    description:
      `${description} A 2xx answer delivers it; 410 Gone ends it; any other answer, or none within ` +
      'JOB_WEBHOOK_TIMEOUT_MS, is retried after each wait of JOB_WEBHOOK_RETRY_SECONDS (with the same webhook-id).',
    request: {
      headers,
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z.object({
              type: z.literal(type),
              timestamp: z.string().describe('When it happened (RFC 3339, UTC)'),
              data,
            }),
          },
        },
      },
    },
    responses: {
      200: { description: 'Any 2xx: received' },
      410: { description: 'Gone: send no more attempts of this delivery' },
    },
  });
}

export function registerJobWebhooks(registry: OpenAPIRegistry): void {
  for (const [event, { type, when }] of Object.entries(events)) {
    registerWebhook(registry, {
      type,
      summary: `${type}: ${when}`,
      description:
        `Sent to the \`webhook\` URL of a job whose request named \`${event}\` in \`webhook_events\`: ${when}. ` +
        'The body is the job as GET /{site_identifier}/jobs/{job_id} answers it at that moment. Deliveries of one ' +
        'tenant are sent in order. Every attempt is listed with the job in GET /admin/jobs/{job_id}.',
      data: jobSchema,
    });
  }
}

// Content webhooks (core/webhooks/content-events.ts): what each kind of item's events carry.
const surrogateKeys = z
  .array(z.string())
  .describe('The Surrogate-Key tags of public answers the change makes stale, to purge a CDN by tag');
const contentEventData = {
  element: z
    .object({
      id: z.uuid(),
      master_id: z.uuid().nullable().describe('The element it translates; null for a master'),
      site_id: z.uuid(),
      type_id: z.uuid(),
      locale: z.string(),
      name: z.string(),
      status: z.enum(['draft', 'published', 'archived']),
      paths: z.array(z.string()).describe('The paths of the published pages that place it'),
      surrogate_keys: surrogateKeys,
    })
    .meta({ id: 'ElementEventData' }),
  page: z
    .object({
      id: z.uuid(),
      master_id: z.uuid().nullable(),
      site_id: z.uuid(),
      parent_id: z.uuid().nullable(),
      locale: z.string(),
      title: z.string(),
      status: z.enum(['draft', 'published', 'archived']),
      path: z.string(),
      previous_path: z.string().nullable().describe('page.moved: the path it had before'),
      paths: z.array(z.string()).describe('The public paths affected: the page’s, and for a move the one it left'),
      surrogate_keys: surrogateKeys,
    })
    .meta({ id: 'PageEventData' }),
  post: z
    .object({
      id: z.uuid(),
      master_id: z.uuid().nullable(),
      site_id: z.uuid(),
      locale: z.string(),
      slug: z.string(),
      title: z.string(),
      status: z.enum(['draft', 'scheduled', 'published', 'archived']),
      surrogate_keys: surrogateKeys,
    })
    .meta({ id: 'PostEventData' }),
  media: z
    .object({
      id: z.uuid(),
      site_id: z.uuid(),
      locale: z.null(),
      kind: z.enum(['image', 'video', 'audio', 'document']),
      mime_type: z.string(),
      status: z.enum(['processing', 'ready', 'failed']),
      version: z.number().int(),
      surrogate_keys: surrogateKeys,
    })
    .meta({ id: 'MediaEventData' }),
};

export function registerContentWebhooks(registry: OpenAPIRegistry): void {
  for (const [type, when] of Object.entries(contentEvents)) {
    const item = type.split('.')[0] as keyof typeof contentEventData;
    registerWebhook(registry, {
      type,
      summary: `${type}: ${when}`,
      description:
        `Sent to each content webhook subscription (POST /api/tenants/{tenant_id}/content-webhooks) that names ` +
        `\`${type}\` and hears the item’s site: ${when}. Recorded by the database whoever makes the change, once per ` +
        'item and change even when one statement changes many (a subtree moved: one event per page). An item’s ' +
        'events arrive in order: a later one waits while an earlier one is retried. Every attempt is listed at ' +
        'GET /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}/deliveries.',
      data: contentEventData[item],
    });
  }
}
