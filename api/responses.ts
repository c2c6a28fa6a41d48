// Pieces of responses that many routes share, for the OpenAPI document: the
// problem body every error has, and the headers routes answer with.
import { z } from 'zod';
import { fundingSchema, payingBalanceSchema } from '../core/credits/funding.ts';
import { scopes } from '../core/identity/access.ts';
import type { HeaderSpec, ResponseSpec } from './route.ts';

export const problemSchema = z
  .object({
    type: z
      .string()
      .describe(
        'A URI reference naming the kind of problem, e.g. /problems/validation-failed: GET it for a page saying when it happens and what to do',
      ),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional().describe('The path of the request that failed'),
    request_id: z.string().optional().describe('Also in the X-Request-Id header and the logs'),
    errors: z
      .array(z.object({ path: z.string().describe('e.g. body.email'), message: z.string() }))
      .optional()
      .describe('Each invalid field, for 422'),
    missing_permissions: z
      .array(z.enum(scopes))
      .optional()
      .describe('For a 403 to a service account or an API key: every scope it lacks for this operation, all at once'),
  })
  .loose()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

/** An error answer: a problem document, and the headers that come with it. */
export const problemResponse = (description: string, headers?: Record<string, HeaderSpec>): ResponseSpec => ({
  description,
  schema: problemSchema,
  contentType: 'application/problem+json',
  ...(headers ? { headers } : {}),
});

/** The 402 of a balance too short (core/credits/accounts.ts insufficientCredits): which balance, by how much, and how it is funded. */
export const insufficientCreditsSchema = problemSchema
  .extend({
    balance: payingBalanceSchema.describe(
      'Which balance was short: `user`, the caller’s own credits on the site (a user’s jobs, whatever their role); `tenant`, the tenant’s pool (a service account’s jobs)',
    ),
    required: z.number().int().describe('Credits needed'),
    available: z.number().int().describe('Credits the balance had available (reserved ones not counted)'),
    funding: fundingSchema,
  })
  .meta({
    id: 'InsufficientCreditsProblem',
    description: 'A problem of type /problems/insufficient-credits: the balance that pays was short',
  });

export const insufficientCreditsResponse = (description: string): ResponseSpec => ({
  description,
  schema: insufficientCreditsSchema,
  contentType: 'application/problem+json',
});

export const locationHeader: HeaderSpec = { description: 'Where the resource can be read', required: true };

export const retryAfterHeader: HeaderSpec = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'string', pattern: '^[0-9]+$' },
  required: true,
};

export const cacheControlHeader: HeaderSpec = { description: 'How long and by whom the answer may be cached' };

export const etagHeader: HeaderSpec = { description: 'The version of the answer, for If-None-Match', required: true };

/** Headers of an answer that must not be cached (tokens, secrets, health). */
export const noStore = { 'Cache-Control': { ...cacheControlHeader, description: '`no-store`', required: true } };

/** The answer of a rate-limited endpoint over its limit (login, sign-up, reset, token). */
export const tooManyAttempts = problemResponse('Too many attempts from this address or for this account', {
  'Retry-After': retryAfterHeader,
});

/** What a route that calls Stripe may answer beside its own statuses. */
export const paymentProviderResponses = {
  502: problemResponse('Stripe refused or failed the request (/problems/payment-provider-error)'),
  503: problemResponse('Payments are not configured: STRIPE_SECRET_KEY is not set (/problems/payments-not-configured)'),
};
