// The job webhooks the platform sends (core/webhooks/announce.ts and
// deliver.ts), in the document's `webhooks` (OpenAPI 3.1): what a receiver
// gets for each event a job-creating request names in `webhook_events`, the
// Standard Webhooks headers it verifies, and what its answer makes us do.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { jobSchema, type WebhookEvent } from '../core/jobs/model.ts';

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

export function registerJobWebhooks(registry: OpenAPIRegistry): void {
  for (const [event, { type, when }] of Object.entries(events)) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook_${type.replace('.', '_')}`,
      summary: `${type}: ${when}`,
      description:
        `Sent to the \`webhook\` URL of a job whose request named \`${event}\` in \`webhook_events\`: ${when}. ` +
        'The body is the job as GET /{site_identifier}/jobs/{job_id} answers it at that moment. A 2xx answer delivers it; ' +
        '410 Gone ends it; any other answer, or none within JOB_WEBHOOK_TIMEOUT_MS, is retried after each wait of ' +
        'JOB_WEBHOOK_RETRY_SECONDS (with the same webhook-id). Deliveries of one tenant are sent in order. Every attempt ' +
        'is listed with the job in GET /admin/jobs/{job_id}.',
      request: {
        headers,
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                type: z.literal(type),
                timestamp: z.string().describe('When it happened (RFC 3339, UTC)'),
                data: jobSchema,
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
}
