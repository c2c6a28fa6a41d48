// Fraud detection (global admins): what the sign-up screening refused and
// flagged, abuse patterns over a window, and blocking an abusive tenant.
import { z } from 'zod';
import { blockTenant, tenantBlockSchema } from '../../core/fraud/block-tenant.ts';
import { abusePatterns, abusePatternsSchema } from '../../core/fraud/patterns.ts';
import { listScreenings, screenedSignupSchema, screeningQuery } from '../../core/fraud/signups.ts';
import { pageSchema } from '../../core/pagination.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const screenings = pageSchema(screenedSignupSchema);

export const routes = [
  defineRoute({
    key: 'GET /admin/fraud/blocked-signups',
    access: 'global-admin',
    description:
      'Sign-ups the screening refused, oldest first, with why: a throwaway domain, too many from one address or network.',
    request: { query: screeningQuery },
    responses: { 200: { description: 'A page of refused sign-ups', schema: screenings } },
    async handler({ query }, { db }) {
      return { body: await listScreenings(db, 'blocked', query) };
    },
  }),

  defineRoute({
    key: 'GET /admin/fraud/suspicious-signups',
    access: 'global-admin',
    description:
      'Sign-ups let through with doubts, oldest first, with their reasons, score and the account each made: an address whose ' +
      'canonical form has an account already, a burst of similar addresses from one network, a busy network.',
    request: { query: screeningQuery },
    responses: { 200: { description: 'A page of flagged sign-ups', schema: screenings } },
    async handler({ query }, { db }) {
      return { body: await listScreenings(db, 'flagged', query) };
    },
  }),

  defineRoute({
    key: 'GET /admin/fraud/abuse-patterns',
    access: 'global-admin',
    description:
      'Over the last window_hours (default 24): sign-up attempts by outcome and reason, networks behind many of them, one ' +
      'mailbox behind several accounts, and tenants whose jobs fail or whose payments are refunded far more than everyone’s.',
    request: { query: z.object({ window_hours: z.coerce.number().int().min(1).max(720).default(24) }) },
    responses: { 200: { description: 'The patterns', schema: abusePatternsSchema } },
    async handler({ query }, { db }) {
      return { body: await abusePatterns(db, query.window_hours) };
    },
  }),

  defineRoute({
    key: 'POST /admin/fraud/block-tenant/{tenant_id}',
    access: 'global-admin',
    description:
      'Blocks the tenant in one transaction: its members’ tokens stop reaching it at once, its service accounts are disabled, its ' +
      'queued, waiting and running jobs are canceled with their credits released; who and why are recorded. Unblock with ' +
      'PATCH /admin/tenants/{tenant_id} {status: active}.',
    request: {
      params: uuidParams('tenant_id'),
      body: z.strictObject({ reason: z.string().trim().min(3).max(1000) }),
    },
    responses: {
      200: { description: 'Blocked', schema: tenantBlockSchema },
      409: problemResponse('The tenant is blocked already'),
    },
    async handler({ params, body }, { db, actor }) {
      return { body: await blockTenant(db, actor, params.tenant_id, body.reason) };
    },
  }),
];
