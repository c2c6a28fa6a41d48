// Jobs of a site (beyond the specification; see api/extensions.tsv): list,
// read (optionally waiting for the end), cancel, and a stream of changes.
import { z } from 'zod';
import { pageSchema } from '../../core/pagination.ts';
import { jobSchema } from '../../core/jobs/model.ts';
import { cancelJob, getJob, jobListQuery, listJobs } from '../../core/jobs/queries.ts';
import { withJobFileUrls } from '../../core/media/urls.ts';
import { fileLinks } from '../media/urls.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { cacheControlHeader, problemResponse } from '../responses.ts';
import { answerJob, jobHeaders, preferHeader } from './answer.ts';
import { streamJobEvents } from './events.ts';

export const jobParams = siteParams.extend({ job_id: z.uuid() });

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/jobs/',
    description:
      'Jobs of the site, oldest first or (`sort=-created_at`) newest first; filter by status and kind. Authors see the jobs they submitted; editors, admins and service accounts (jobs:read) all.',
    access: { site: 'read', scope: 'jobs:read' },
    request: { params: siteParams, query: jobListQuery },
    responses: { 200: { description: 'A page of jobs', schema: pageSchema(jobSchema) } },
    async handler({ query }, context) {
      const page = await listJobs(context.db, context.access, query);
      const links = fileLinks(context);
      return { body: { ...page, items: page.items.map((job) => withJobFileUrls(links, context.site, job)) } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/jobs/{job_id}',
    description:
      'One job. With `Prefer: wait=N` the answer waits until the job ends or N seconds pass (at most the timeout, 60 s).',
    access: { site: 'read', scope: 'jobs:read' },
    request: { params: jobParams, headers: preferHeader },
    responses: { 200: { description: 'The job', schema: jobSchema, headers: jobHeaders } },
    async handler({ params }, context, { req }) {
      const found = await getJob(context.db, context.access, params.job_id);
      return answerJob(context, req.get('prefer'), found, 'read');
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/jobs/{job_id}/cancel',
    description:
      'Cancels a queued, running or waiting job: a queued one leaves the queue, a running one is told to stop, and its reserved credits are released. 409 once it has finished.',
    access: { site: 'write', scope: 'jobs:write' },
    request: { params: jobParams },
    responses: {
      200: { description: 'The canceled job', schema: jobSchema },
      409: problemResponse('The job has already finished'),
    },
    async handler({ params }, context) {
      const job = await cancelJob(context.db, context.access, params.job_id);
      return { body: withJobFileUrls(fileLinks(context), context.site, job) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/jobs/{job_id}/events',
    description:
      'Server-sent events (`text/event-stream`): an event `job` with the whole job at once and after each change of state or progress, until it ends.',
    access: { site: 'read', scope: 'jobs:read' },
    request: { params: jobParams },
    responses: {
      200: {
        description: 'A stream of `job` events, each carrying the job as JSON',
        contentType: 'text/event-stream',
        schema: z.string().describe('Events: `id: n`, `event: job`, `data: <the Job as JSON>`'),
        headers: {
          'Cache-Control': { ...cacheControlHeader, description: '`no-cache, no-transform`', required: true },
        },
      },
    },
    async handler({ params }, context, { res }) {
      const found = await getJob(context.db, context.access, params.job_id);
      await streamJobEvents(context, res, found);
      return {};
    },
  }),
];
