// Pauses of the queue, for global admins (beyond the specification; see
// api/extensions.tsv): a kind of job, or one tenant's jobs. Queued jobs of a
// paused kind or tenant wait, with a stage saying so; running ones finish.
// Every worker applies a change within a round trip (worker/queue-gate.ts).
// And the kinds' priorities: lower runs first, within each tenant's share of
// the worker slots (core/jobs/priorities.ts).
import { z } from 'zod';
import { listPauses, pause, pauseRequest, pauseSchema, pausesSchema, resume } from '../../core/jobs/pauses.ts';
import {
  kindSettingRequest,
  kindSettingSchema,
  kindSettingsSchema,
  listKindSettings,
  setKindPriority,
} from '../../core/jobs/priorities.ts';
import { noContent, uuidParams } from '../schemas.ts';
import { defineRoute } from '../route.ts';

const kindParams = z.object({
  kind: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a kind of job: lower-case letters, digits and underscores')
    .describe('A kind of job (speech, video, ...)'),
});
const tenantParams = uuidParams('tenant_id');

export const routes = [
  defineRoute({
    key: 'GET /admin/queue/pauses',
    access: 'global-admin',
    description: 'The paused kinds of job and the tenants whose jobs are paused, oldest pause first.',
    responses: { 200: { description: 'The pauses', schema: pausesSchema } },
    async handler(_input, { db, actor }) {
      return { body: await listPauses(db, actor) };
    },
  }),

  defineRoute({
    key: 'PUT /admin/queue/pauses/kinds/{kind}',
    access: 'global-admin',
    description:
      'Pauses a kind of job on every worker: its queued jobs wait (their stage says why) and new ones queue behind ' +
      'them; running ones finish. Pausing it again replaces the reason. 404 for a kind the platform does not know.',
    request: { params: kindParams, body: pauseRequest.optional() },
    responses: { 200: { description: 'The pause', schema: pauseSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await pause(db, actor, { kind: params.kind }, body?.reason) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/queue/pauses/kinds/{kind}',
    access: 'global-admin',
    description: 'Resumes a paused kind of job: its queued jobs run again. 404 when it was not paused.',
    request: { params: kindParams },
    responses: noContent('Resumed'),
    async handler({ params }, { db, actor }) {
      await resume(db, actor, { kind: params.kind });
      return {};
    },
  }),

  defineRoute({
    key: 'PUT /admin/queue/pauses/tenants/{tenant_id}',
    access: 'global-admin',
    description:
      'Pauses a tenant’s jobs, of every kind, on every worker: its queued jobs wait (their stage says why); running ' +
      'ones finish. Pausing it again replaces the reason.',
    request: { params: tenantParams, body: pauseRequest.optional() },
    responses: { 200: { description: 'The pause', schema: pauseSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await pause(db, actor, { tenantId: params.tenant_id }, body?.reason) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/queue/pauses/tenants/{tenant_id}',
    access: 'global-admin',
    description: 'Resumes a tenant’s jobs: its queued jobs run again. 404 when they were not paused.',
    request: { params: tenantParams },
    responses: noContent('Resumed'),
    async handler({ params }, { db, actor }) {
      await resume(db, actor, { tenantId: params.tenant_id });
      return {};
    },
  }),

  defineRoute({
    key: 'GET /admin/queue/kinds',
    access: 'global-admin',
    description: 'Every kind of job with its priority (0 unless set), by name.',
    responses: { 200: { description: 'The kinds', schema: kindSettingsSchema } },
    async handler(_input, { db, actor }) {
      return { body: await listKindSettings(db, actor) };
    },
  }),

  defineRoute({
    key: 'PUT /admin/queue/kinds/{kind}',
    access: 'global-admin',
    description:
      'Sets a kind of job’s priority: lower runs first among the jobs a worker may take, so within each tenant’s share ' +
      'of the slots, never past it. It applies to the kind’s queued jobs at once and to every later run of its jobs ' +
      '(retries too); running ones are not touched. 404 for a kind the platform does not know.',
    request: { params: kindParams, body: kindSettingRequest },
    responses: { 200: { description: 'The kind’s setting', schema: kindSettingSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await setKindPriority(db, actor, params.kind, body.priority) };
    },
  }),
];
