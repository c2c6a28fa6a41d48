// A job's webhook deliveries (beyond the specification; see api/extensions.tsv),
// for those who may read the job.
import { jobWebhookSchema, listJobWebhooks } from '../../core/webhooks/deliveries.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { defineRoute } from '../route.ts';
import { jobParams } from './router.ts';

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/jobs/{job_id}/webhooks',
    description:
      'The deliveries made to the job’s `webhook`, oldest first, each with its attempts: one per event asked for (`start`; ' +
      '`progress`, at most one a second; `completed` when it succeeds, fails or is canceled). Each is a POST of ' +
      '`{type: job.started | job.progress | job.completed, timestamp, data: <the Job>}` (the job as GET …/jobs/{job_id} ' +
      'answers it, its media’s file URLs made as each attempt is sent) signed the Standard Webhooks way ' +
      '(`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the tenant’s secret. A 2xx answer delivers it; 410 Gone ' +
      'stops it; other answers, timeouts (JOB_WEBHOOK_TIMEOUT_MS) and failed connections are retried after the waits of ' +
      'JOB_WEBHOOK_RETRY_SECONDS; a URL that leads to a private, local or reserved address is never sent to. Who may read ' +
      'the job may read its deliveries.',
    access: { site: 'read', scope: 'jobs:read' },
    request: { params: jobParams, query: pageQuery },
    responses: { 200: { description: 'A page of deliveries', schema: pageSchema(jobWebhookSchema) } },
    async handler({ params, query }, { db, access }) {
      return { body: await listJobWebhooks(db, access, params.job_id, query) };
    },
  }),
];
