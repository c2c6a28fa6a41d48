// What a job-creating request may add to ask for webhooks: `webhook`, the URL
// its events are POSTed to, and `webhook_events`, which ones (default: only
// `completed`). https only, except for the development hosts named in
// JOB_WEBHOOK_HTTP_HOSTS. A URL written with a private, local or reserved
// address is refused at once; where a name leads is judged at each delivery
// (core/net/safe-fetch.ts), since it can resolve elsewhere by then.
import { isIP } from 'node:net';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import { webhookEvents, type WebhookEvent } from '../jobs/model.ts';
import { isAllowedAddress } from '../net/addresses.ts';

export type JobWebhook = { url: string; events: WebhookEvent[] };

/** An outbound webhook's URL as a body takes it (the rest is judged by checkWebhookUrl). */
export const webhookUrl = z.url({ protocol: /^https?$/ }).max(2000);

const url = webhookUrl.describe(
  'An https URL the job’s events are POSTed to, signed the Standard Webhooks way with the tenant’s secret ' +
    '(`GET /api/tenants/{tenant_id}/webhook-secret`); http only for hosts in JOB_WEBHOOK_HTTP_HOSTS. ' +
    'Deliveries are listed at `/{site_identifier}/jobs/{job_id}/webhooks`.',
);

const eventsDescription =
  'Which events to send: `start`, `progress` (at most one a second), `completed`. Default: `completed`';

/** The fields as a JSON body takes them. */
export const webhookFields = z.object({
  webhook: url.optional(),
  webhook_events: z.array(z.enum(webhookEvents)).min(1).max(3).optional().describe(eventsDescription),
});

/** The fields as a multipart form takes them: the events comma-separated. */
export const webhookFormFields = z.object({
  webhook: url.optional(),
  webhook_events: z
    .string()
    .transform((value) => value.split(',').map((event) => event.trim()))
    .pipe(z.array(z.enum(webhookEvents)).min(1).max(3))
    .optional()
    .describe(`${eventsDescription}; comma-separated, e.g. \`start,completed\``),
});

export type WebhookFields = z.output<typeof webhookFields>;

const invalid = (path: string, message: string, detail = 'The request is not valid; see errors.') =>
  new Problem(422, detail, { errors: [{ path: `body.${path}`, message }] });

const loopbackNames = new Set(['localhost', '127.0.0.1', '::1']);
const isLoopback = (host: string) => loopbackNames.has(host) || host.endsWith('.localhost') || host.startsWith('127.');

/**
 * Why a plain-http webhook is refused, naming the setting that would allow it:
 * a developer trying a receiver on their own machine should not have to
 * search for it. Reaching this machine takes FETCH_ALLOW_LOOPBACK too, which
 * production refuses.
 */
function httpRefused(config: Config, host: string, field: string): Problem {
  const loopback = isLoopback(host.replace(/^\[(.*)\]$/, '$1')) && !config.production;
  const message =
    `must be an https URL; plain http is sent only to the hosts JOB_WEBHOOK_HTTP_HOSTS names (add ${host})` +
    (loopback && !config.fetch.allowLoopback ? ', and to this machine only with FETCH_ALLOW_LOOPBACK=true' : '');
  return invalid(field, message, `The webhook ${message}.`);
}

/**
 * 422 for a webhook URL (at body.`field`) that the schema alone cannot judge:
 * plain http to a host JOB_WEBHOOK_HTTP_HOSTS does not name, or an address
 * written out that is private, local or reserved. Content webhook
 * subscriptions take their URL by the same rules (./subscriptions.ts).
 */
export function checkWebhookUrl(config: Config, webhook: string, field = 'webhook'): void {
  const { protocol, hostname } = new URL(webhook);
  if (protocol === 'http:' && !config.webhooks.httpHosts.includes(hostname)) throw httpRefused(config, hostname, field);
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(address) && !isAllowedAddress(address, { allowLoopback: config.fetch.allowLoopback })) {
    // Outside production a receiver on this machine is allowed by a setting; say which.
    const setting = isLoopback(address) && !config.production ? ' (this machine: set FETCH_ALLOW_LOOPBACK=true)' : '';
    throw invalid(
      field,
      `leads to a private, local or reserved address${setting}`,
      `The webhook leads to a private, local or reserved address${setting}.`,
    );
  }
}

/** The webhook a request asked for, or null; 422 for what the schema alone cannot judge. */
export function requestedWebhook(config: Config, fields: WebhookFields): JobWebhook | null {
  if (!fields.webhook) {
    if (fields.webhook_events) throw invalid('webhook_events', 'needs a webhook');
    return null;
  }
  checkWebhookUrl(config, fields.webhook);
  const events: WebhookEvent[] = fields.webhook_events ?? ['completed'];
  return { url: fields.webhook, events: [...new Set(events)] };
}
