// Global cost settings: for now a tenant's credit pool, for global admins
// (credits enter it here until the billing area sells them).
import { z } from 'zod';
import { allocateToTenant, tenantCredits, tenantCreditsSchema } from '../../core/credits/ledger.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

export const routes = [
  defineRoute({
    key: 'POST /admin/global-cost-settings/tenant-credits/allocate',
    access: 'global-admin',
    idempotent: true,
    description: 'Global admins add credits to a tenant’s pool. Honours Idempotency-Key.',
    request: {
      body: z.strictObject({
        tenant_id: z.uuid(),
        amount: z.number().int().min(1).max(1_000_000_000),
        reason: z.string().trim().max(500).default(''),
      }),
    },
    responses: {
      201: { description: 'The tenant’s credits now', schema: tenantCreditsSchema },
      404: problemResponse('No such tenant'),
    },
    async handler({ body }, { db, services, actor }) {
      return {
        status: 201,
        body: await allocateToTenant(db, actor, { tenantId: body.tenant_id, amount: body.amount, reason: body.reason }),
      };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/tenant-credits/{tenant_id}',
    access: 'global-admin',
    description: 'A tenant’s pool, monthly limit and what was allocated from it this month (global admins).',
    request: { params: uuidParams('tenant_id') },
    responses: { 200: { description: 'The tenant’s credits', schema: tenantCreditsSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await tenantCredits(db, actor, params.tenant_id) };
    },
  }),
];
