// The tenant's key for signing its job webhooks (beyond the specification; see
// api/extensions.tsv): tenant admins read it, to verify deliveries, and
// rotate it. Under /api like the other things tenant admins manage
// (/api/service-accounts); /admin/tenants is for global admins.
import { z } from 'zod';
import { readWebhookSecret, rotateWebhookSecret, webhookSecretSchema } from '../../core/webhooks/secrets.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const params = uuidParams('tenant_id');
const day = 86_400;

const rotation = z
  .strictObject({
    grace_period_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * day)
      .default(day)
      .describe('How long deliveries are also signed with the old secret (default a day; 0: it stops at once)'),
  })
  .default({ grace_period_seconds: day });

export const routes = [
  defineRoute({
    key: 'GET /api/tenants/{tenant_id}/webhook-secret',
    access: 'signed-in',
    description:
      'The secret the tenant’s job webhooks are signed with (`whsec_…`, for any Standard Webhooks library), made on first ' +
      'use. Tenant admins only.',
    request: { params },
    responses: { 200: { description: 'The secret', schema: webhookSecretSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await readWebhookSecret(db, actor, params.tenant_id) };
    },
  }),

  defineRoute({
    key: 'POST /api/tenants/{tenant_id}/webhook-secret/rotate',
    access: 'signed-in',
    description:
      'Replaces the secret. For `grace_period_seconds` (default a day) deliveries carry a signature by each, so receivers ' +
      'that still know the old one keep accepting them while they switch; with 0 the old one stops at once. Tenant admins only.',
    request: { params, body: rotation },
    responses: { 200: { description: 'The new secret', schema: webhookSecretSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await rotateWebhookSecret(db, actor, params.tenant_id, body.grace_period_seconds) };
    },
  }),
];
