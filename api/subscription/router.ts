// Subscriptions: the tenant's plan, moving to a paid plan through Stripe,
// cancelling, the customer portal, monthly credits and storage against the
// plan's quota; and the plans themselves (global admins).
import { z } from 'zod';
import { allocateFreeCredits, allocationSchema } from '../../core/billing/monthly-credits.ts';
import { createPlan, listPlans, planChange, planInput, planSchema, updatePlan } from '../../core/billing/plans.ts';
import { storageUsage, storageUsageSchema } from '../../core/billing/storage.ts';
import { requireBillingAdmin, resolveSubscriber, subscriberQuery } from '../../core/billing/subscriber.ts';
import {
  cancel,
  currentSubscription,
  portal,
  subscriptionStatusSchema,
  upgrade,
  verifyUpgrade,
} from '../../core/billing/subscriptions.ts';
import { paymentProviderResponses, problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { flag, uuidParams } from '../schemas.ts';

const plans = z.object({ items: z.array(planSchema) });

const noPaidSubscription = problemResponse('The tenant has no paid subscription (it is on the free plan)');

/** Every route about the caller's tenant: a tenant_id that is not theirs, or a caller in no tenant. */
const unknownTenant = problemResponse('No such tenant among the caller’s');

const returnUrl = z.url().max(2000);

const tenantNote = ' With ?tenant_id= when the caller belongs to several tenants.';

export const routes = [
  defineRoute({
    key: 'GET /subscription/current',
    access: 'signed-in',
    description: `The tenant’s plan, status, current period, the plan’s credits granted this period and storage against the quota.${tenantNote}`,
    request: { query: subscriberQuery },
    responses: { 200: { description: 'The subscription', schema: subscriptionStatusSchema }, 404: unknownTenant },
    async handler({ query }, { db, actor }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      return { body: await currentSubscription(db, subscriber.tenantId) };
    },
  }),

  defineRoute({
    key: 'GET /subscription/plans',
    access: 'signed-in',
    description: 'The plans a tenant can be on, cheapest first (the free plan among them).',
    responses: { 200: { description: 'Active plans', schema: plans } },
    async handler(_input, { db }) {
      return { body: { items: await listPlans(db, true) } };
    },
  }),

  defineRoute({
    key: 'POST /subscription/upgrade',
    access: 'user',
    idempotent: true,
    description:
      'Moves the tenant to a paid plan (tenant admins). Without a live paid subscription: a Stripe Checkout Session in subscription ' +
      'mode (outcome `checkout`; send the customer to `checkout.url`, whose success_url may carry `{CHECKOUT_SESSION_ID}` for ' +
      'verify-upgrade). With one: its price changes at once, prorated by Stripe (outcome `changed`), and the pool is topped up to the ' +
      'new plan’s monthly credits for this period; the current plan again resumes a subscription set to cancel (`resumed`). ' +
      `Return URLs must be on a domain of the tenant’s sites or in PAYMENTS_RETURN_ORIGINS. Honours Idempotency-Key.${tenantNote}`,
    request: {
      query: subscriberQuery,
      body: z.strictObject({
        plan_id: z.uuid(),
        success_url: returnUrl.optional().describe('Required when a checkout is needed'),
        cancel_url: returnUrl.optional().describe('Required when a checkout is needed'),
      }),
    },
    responses: {
      200: {
        description: 'The checkout to complete, or the changed subscription',
        schema: z.object({
          outcome: z.enum(['checkout', 'changed', 'resumed', 'unchanged']),
          checkout: z.object({ id: z.string(), url: z.string() }).nullable(),
          subscription: subscriptionStatusSchema,
        }),
      },
      404: problemResponse('No such active plan, or no such tenant among the caller’s'),
      409: problemResponse(
        'The subscription waits for its first payment or has an unpaid invoice; or a request with this Idempotency-Key is ' +
          'still being processed (then with Retry-After)',
        { 'Retry-After': { ...retryAfterHeader, required: false } },
      ),
      ...paymentProviderResponses,
    },
    async handler({ query, body }, { db, actor, services }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      requireBillingAdmin(subscriber);
      const result = await upgrade(db, services.config, subscriber, body);
      return {
        body:
          result.outcome === 'checkout'
            ? {
                outcome: result.outcome,
                checkout: result.checkout,
                subscription: await currentSubscription(db, subscriber.tenantId),
              }
            : { outcome: result.outcome, checkout: null, subscription: result.subscription },
      };
    },
  }),

  defineRoute({
    key: 'GET /subscription/verify-upgrade',
    access: 'user',
    description:
      'After the customer returns from Checkout (tenant admins): Stripe’s word on the session, its subscription and first invoice, ' +
      `applied now; the webhook may come before or after, and the plan’s credits are granted once either way.${tenantNote}`,
    request: {
      query: subscriberQuery.extend({ session_id: z.string().min(1).max(255).describe('The Checkout Session') }),
    },
    responses: {
      200: { description: 'The subscription', schema: subscriptionStatusSchema },
      404: problemResponse('No such checkout session for this tenant, or no such tenant among the caller’s'),
      409: problemResponse('The checkout is not complete yet'),
      ...paymentProviderResponses,
    },
    async handler({ query }, { db, actor, services }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      requireBillingAdmin(subscriber);
      return { body: await verifyUpgrade(db, services.config, subscriber, query.session_id) };
    },
  }),

  defineRoute({
    key: 'POST /subscription/cancel',
    access: 'user',
    description:
      'Cancels the paid subscription (tenant admins): at the end of the current period by default, now with ?immediately=true. ' +
      `The tenant is then on the free plan; credits already granted stay until they expire.${tenantNote}`,
    request: { query: subscriberQuery.extend({ immediately: flag }) },
    responses: {
      200: { description: 'The subscription', schema: subscriptionStatusSchema },
      404: unknownTenant,
      409: noPaidSubscription,
      ...paymentProviderResponses,
    },
    async handler({ query }, { db, actor, services }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      requireBillingAdmin(subscriber);
      return { body: await cancel(db, services.config, subscriber, query.immediately) };
    },
  }),

  defineRoute({
    key: 'POST /subscription/portal',
    access: 'user',
    description:
      'A Stripe Customer Portal session (tenant admins): a short-lived URL that signs the customer in to manage payment methods and ' +
      `invoices. Never cached, never logged. return_url: a domain of the tenant’s sites or PAYMENTS_RETURN_ORIGINS.${tenantNote}`,
    request: { query: subscriberQuery, body: z.strictObject({ return_url: returnUrl }) },
    responses: {
      200: {
        description: 'The portal session',
        schema: z.object({ url: z.string() }),
        headers: { 'Cache-Control': { description: '`no-store`: the URL signs the customer in' } },
      },
      404: unknownTenant,
      409: problemResponse('The tenant has no billing account at Stripe yet'),
      ...paymentProviderResponses,
    },
    async handler({ query, body }, { db, actor, services }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      requireBillingAdmin(subscriber);
      return {
        body: await portal(db, services.config, subscriber, body.return_url),
        headers: { 'Cache-Control': 'no-store' },
      };
    },
  }),

  defineRoute({
    key: 'POST /subscription/allocate-monthly-credits',
    access: 'global-admin',
    description:
      'Runs the free plan’s monthly allocation now (global admins), as the hourly scheduled job does: this calendar month’s (UTC) ' +
      'credits to the pool of the tenant named, or of every active tenant without a paid subscription. Once per tenant per month: ' +
      'a second run grants nothing. Paid plans’ credits come with their invoices.',
    request: { body: z.strictObject({ tenant_id: z.uuid().optional() }).optional() },
    responses: {
      200: { description: 'What was allocated', schema: allocationSchema },
      404: problemResponse('No such tenant'),
    },
    async handler({ body }, { db, actor }) {
      return { body: await allocateFreeCredits(db, { tenantId: body?.tenant_id, actorId: actor.userId }) };
    },
  }),

  defineRoute({
    key: 'GET /subscription/storage',
    access: 'signed-in',
    description: `Bytes the tenant stores, per site and media kind (originals, variants, versions), against the plan’s quota.${tenantNote}`,
    request: { query: subscriberQuery },
    responses: { 200: { description: 'Storage use', schema: storageUsageSchema }, 404: unknownTenant },
    async handler({ query }, { db, actor }) {
      const subscriber = await resolveSubscriber(db, actor, query.tenant_id);
      return { body: await storageUsage(db, subscriber.tenantId) };
    },
  }),

  defineRoute({
    key: 'GET /admin/plans',
    access: 'global-admin',
    description: 'Every plan, active or not (global admins).',
    responses: { 200: { description: 'Plans', schema: plans } },
    async handler(_input, { db }) {
      return { body: { items: await listPlans(db, false) } };
    },
  }),

  defineRoute({
    key: 'POST /admin/plans',
    access: 'global-admin',
    description: 'Adds a paid plan (global admins): its recurring Stripe price, monthly credits and storage quota.',
    request: { body: planInput },
    responses: {
      201: { description: 'The plan', schema: planSchema },
      409: problemResponse('Another plan already uses this Stripe price'),
    },
    async handler({ body }, { db }) {
      return { status: 201, body: await createPlan(db, body) };
    },
  }),

  defineRoute({
    key: 'PATCH /admin/plans/{plan_id}',
    access: 'global-admin',
    description:
      'Changes a plan (global admins); active=false stops new subscriptions to it. Monthly credits and quota apply from the next ' +
      'grant and upload. The free plan keeps no Stripe price and stays active.',
    request: { params: uuidParams('plan_id'), body: planChange },
    responses: {
      200: { description: 'The plan', schema: planSchema },
      409: problemResponse('Another plan already uses this Stripe price'),
    },
    async handler({ params, body }, { db }) {
      return { body: await updatePlan(db, params.plan_id, body) };
    },
  }),
];
