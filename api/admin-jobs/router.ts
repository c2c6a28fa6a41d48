// Jobs across tenants, for global admins (beyond the specification; see
// api/extensions.tsv): what runs, what waits, what failed and why.
import { runStepSchema } from '../../core/agents/run-steps.ts';
import { z } from 'zod';
import {
  adminCancelJob,
  adminJobSchema,
  attemptSchema,
  jobStatistics,
  jobStatsSchema,
  jobWithAttempts,
  retryJob,
} from '../../core/jobs/admin.ts';
import { adminJobListItemSchema, adminJobQuery, listAllJobs } from '../../core/jobs/admin-list.ts';
import { bulkCancel, bulkJobRequest, bulkJobResultSchema, bulkLimit, bulkRetry } from '../../core/jobs/bulk.ts';
import { jobsPerMinute, perMinuteQuery, perMinuteSchema } from '../../core/jobs/per-minute.ts';
import { pageSchema } from '../../core/pagination.ts';
import { providerCallSchema } from '../../core/providers/calls.ts';
import { fileLinks } from '../media/urls.ts';
import { insufficientCreditsResponse, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const jobParams = uuidParams('job_id');

export const routes = [
  defineRoute({
    key: 'GET /admin/jobs/',
    access: 'global-admin',
    description:
      'Every tenant’s jobs, oldest first or (`sort=-created_at`) newest first; filter by status, kind, tenant (its id, ' +
      'or a part of its name or slug), site, user, age and error code. Each row names its tenant and site.',
    request: { query: adminJobQuery },
    responses: { 200: { description: 'A page of jobs', schema: pageSchema(adminJobListItemSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listAllJobs(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'GET /admin/jobs/stats',
    access: 'global-admin',
    description:
      'Jobs per state and kind, queued jobs and the age of the oldest per kind, worker processes and their heartbeats, and the queue beneath.',
    responses: { 200: { description: 'Counts', schema: jobStatsSchema } },
    async handler(_input, { db, actor, services }) {
      return { body: await jobStatistics(db, actor, services.config) };
    },
  }),

  defineRoute({
    key: 'GET /admin/jobs/per-minute',
    access: 'global-admin',
    description:
      'The last `hours` minute by minute, per kind of job: how many succeeded, failed and were canceled, how many ' +
      'waited in the queue, and the median and 95th percentile wait and run times of those that finished. Read ' +
      'from the jobs themselves, for the admin console’s charts.',
    request: { query: perMinuteQuery },
    responses: { 200: { description: 'Minutes and kinds', schema: perMinuteSchema } },
    async handler({ query }, { db, actor }) {
      return { body: await jobsPerMinute(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /admin/jobs/bulk-retry',
    access: 'global-admin',
    description:
      'Retries every failed job that matches the filter (the list’s: kind, tenant, site, user, age, error code), ' +
      'each as the single retry does: its credits reserved again; one whose payer can no longer cover them is skipped. ' +
      '`dry_run: true` only counts them. ' +
      `At most ${bulkLimit.toLocaleString('en')} jobs a call, in id order; \`remaining\` says how many are left for the next call. ` +
      'Each call that acts is written to the log as an audit line: who, the filter and the counts.',
    request: { body: bulkJobRequest },
    responses: { 200: { description: 'How many matched, and how many were retried', schema: bulkJobResultSchema } },
    async handler({ body }, { db, actor, log, deadline }) {
      return { body: await bulkRetry(db, actor, body, { logger: log, deadline }) };
    },
  }),

  defineRoute({
    key: 'POST /admin/jobs/bulk-cancel',
    access: 'global-admin',
    description:
      'Cancels every queued or waiting job that matches the filter (the list’s: kind, tenant, site, user, age, error ' +
      'code), each as the single cancel does: its credits released, a vendor holding its work told to stop. Running ' +
      'jobs are left to finish (cancel them one by one). `dry_run: true` only counts them. ' +
      `At most ${bulkLimit.toLocaleString('en')} jobs a call, in id order; \`remaining\` says how many are left for the next call. ` +
      'Each call that acts is written to the log as an audit line: who, the filter and the counts.',
    request: { body: bulkJobRequest },
    responses: { 200: { description: 'How many matched, and how many were canceled', schema: bulkJobResultSchema } },
    async handler({ body }, { db, actor, log, deadline }) {
      return { body: await bulkCancel(db, actor, body, { logger: log, deadline }) };
    },
  }),

  defineRoute({
    key: 'GET /admin/jobs/{job_id}',
    access: 'global-admin',
    description:
      'One job, naming its tenant and site, with every attempt (the worker that ran it, when, and how it ended) and every call it made to an AI ' +
      'provider (which vendor and model, how long, and how it ended: a provider that passed the job on shows beside ' +
      'the one that made it), and, for an agent run, its steps.',
    request: { params: jobParams },
    responses: {
      200: {
        description: 'The job and its attempts',
        schema: adminJobListItemSchema.extend({
          attempts: z.array(attemptSchema),
          provider_calls: z.array(providerCallSchema),
          agent_steps: z
            .array(runStepSchema)
            .describe('An agent run’s steps: each model call and tool call with its input, output, tokens and cost'),
        }),
      },
    },
    async handler({ params }, context) {
      return { body: await jobWithAttempts(context.db, context.actor, params.job_id, fileLinks(context)) };
    },
  }),

  defineRoute({
    key: 'POST /admin/jobs/{job_id}/retry',
    access: 'global-admin',
    description:
      'Runs a failed job again from the start, reserving its credits again (402 when the payer can no longer cover them). 409 unless it failed.',
    request: { params: jobParams },
    responses: {
      202: { description: 'The job, queued again', schema: adminJobSchema },
      402: insufficientCreditsResponse('The balance that pays for the job (`balance`) can no longer cover it'),
      409: problemResponse('Only failed jobs can be retried'),
    },
    async handler({ params }, { db, services, actor }) {
      return { status: 202, body: await retryJob(db, services.config, actor, params.job_id) };
    },
  }),

  defineRoute({
    key: 'POST /admin/jobs/{job_id}/cancel',
    access: 'global-admin',
    description:
      'Cancels any tenant’s queued, running or waiting job and releases its credits. 409 once it has finished.',
    request: { params: jobParams },
    responses: {
      200: { description: 'The canceled job', schema: adminJobSchema },
      409: problemResponse('The job has already finished'),
    },
    async handler({ params }, { db, actor }) {
      return { body: await adminCancelJob(db, actor, params.job_id) };
    },
  }),
];
