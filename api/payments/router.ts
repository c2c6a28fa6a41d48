// Payments: credit packages bought through Stripe Checkout, the site's
// payments, and Stripe's webhook that settles them.
import { z } from 'zod';
import {
  createPackage,
  creditPackageInput,
  creditPackageSchema,
  listPackages,
  updatePackage,
} from '../../core/billing/packages.ts';
import {
  createCheckout,
  findPayment,
  listPayments,
  paymentSchema,
  paymentStatuses,
} from '../../core/billing/payments.ts';
import { receiveStripeEvent, stripeReceiptSchema } from '../../core/billing/webhook.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { locationHeader, paymentProviderResponses, problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { siteParams, uuidParams } from '../schemas.ts';

const packages = z.object({ items: z.array(creditPackageSchema) });

/** What a change names, and only that: a package left out of `active` keeps its state (no default applies). */
const packageChanges = creditPackageInput.extend({ active: z.boolean() }).partial();

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/payments/credit-packages',
    access: { site: 'read' },
    description: 'The credit packages on sale.',
    request: { params: siteParams },
    responses: { 200: { description: 'Active packages, cheapest first', schema: packages } },
    async handler(_input, { db }) {
      return { body: { items: await listPackages(db, true) } };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/payments/create-checkout-session',
    access: { site: 'read' },
    idempotent: true,
    description:
      'Starts buying a credit package: a pending payment and a Stripe Checkout Session (payment mode) naming it. Send the customer to `url`; ' +
      'the credits reach the buyer’s account on this site when Stripe reports the payment. success_url and cancel_url must be on the ' +
      'site’s domain (https) or an origin of PAYMENTS_RETURN_ORIGINS. Users only. Honours Idempotency-Key.',
    request: {
      params: siteParams,
      body: z.strictObject({
        package_id: z.uuid(),
        success_url: z.url().max(2000),
        cancel_url: z.url().max(2000),
      }),
    },
    responses: {
      201: {
        description: 'The Checkout Session',
        schema: z.object({ id: z.string(), url: z.string(), payment_id: z.uuid() }),
        headers: { Location: locationHeader },
      },
      404: problemResponse('No such active credit package'),
      ...paymentProviderResponses,
    },
    async handler({ params, body }, { db, access, services }) {
      const session = await createCheckout(db, services.config, access, body);
      return {
        status: 201,
        body: session,
        headers: { Location: `/${params.site_identifier}/payments/transactions/${session.payment_id}` },
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/payments/transactions',
    access: { site: 'read' },
    description: 'The site’s payments, oldest first: tenant admins see everyone’s, others their own.',
    request: {
      params: siteParams,
      query: pageQuery.omit({ include_total: true }).extend({
        status: z.enum(paymentStatuses).optional(),
        user_id: z.uuid().optional(),
      }),
    },
    responses: { 200: { description: 'A page of payments', schema: pageSchema(paymentSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listPayments(db, access, query) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/payments/transactions/{transaction_id}',
    access: { site: 'read' },
    request: { params: siteParams.extend(uuidParams('transaction_id').shape) },
    responses: { 200: { description: 'The payment', schema: paymentSchema } },
    async handler({ params }, { db, access }) {
      return { body: await findPayment(db, access, params.transaction_id) };
    },
  }),

  defineRoute({
    key: 'POST /payments/webhook',
    access: 'public',
    // Only failed signatures count against the sender: a busy provider is never turned away.
    rateLimit: 'signature-failures',
    description:
      'Where Stripe delivers events, signed with STRIPE_WEBHOOK_SECRET (the Stripe-Signature header, checked on the raw body before ' +
      'anything else; 400 otherwise). A repeated event answers 200 and changes nothing; events may come in any order. Handled: ' +
      'checkout.session.completed (payment and subscription mode), .async_payment_succeeded, .async_payment_failed, .expired, ' +
      'charge.refunded, customer.subscription.created, .updated and .deleted and invoice.payment_failed (the tenant’s ' +
      'subscription is synced to what Stripe says now, so their order does not matter), invoice.paid (a subscription’s creation ' +
      'or renewal: the plan’s monthly credits, once per invoice; a plan change: the top-up); other types are acknowledged and ignored.',
    request: {
      rawBody: [
        {
          contentType: 'application/json',
          schema: z.object({ id: z.string(), type: z.string() }).loose(),
          required: true,
        },
      ],
      headers: z.object({ 'stripe-signature': z.string().describe('`t=<unix seconds>,v1=<hex HMAC-SHA256>`') }),
    },
    responses: {
      200: { description: 'Received', schema: stripeReceiptSchema },
      400: problemResponse('The signature is missing, does not match, or is too old'),
      409: problemResponse(
        'The event names a payment not recorded yet, or a Stripe price no plan has; Stripe delivers it again later',
        { 'Retry-After': retryAfterHeader },
      ),
      502: problemResponse(
        'Stripe could not be asked for the subscription the event is about; Stripe delivers it again later',
      ),
      503: problemResponse('STRIPE_WEBHOOK_SECRET is not set'),
    },
    async handler(_input, { db, services }, { req }) {
      const raw = Buffer.isBuffer(req.body) ? req.body : undefined;
      return { body: await receiveStripeEvent(db, services.config, raw, req.get('stripe-signature')) };
    },
  }),

  defineRoute({
    key: 'GET /admin/credit-packages',
    access: 'global-admin',
    description: 'Every credit package, on sale or not (global admins).',
    responses: { 200: { description: 'Packages', schema: packages } },
    async handler(_input, { db }) {
      return { body: { items: await listPackages(db, false) } };
    },
  }),

  defineRoute({
    key: 'POST /admin/credit-packages',
    access: 'global-admin',
    description: 'Puts a credit package on sale (global admins).',
    request: { body: creditPackageInput },
    responses: { 201: { description: 'The package', schema: creditPackageSchema } },
    async handler({ body }, { db }) {
      return { status: 201, body: await createPackage(db, body) };
    },
  }),

  defineRoute({
    key: 'PATCH /admin/credit-packages/{package_id}',
    access: 'global-admin',
    description: 'Changes a package; active=false takes it off sale. Payments already made keep what they bought.',
    request: { params: uuidParams('package_id'), body: packageChanges },
    responses: { 200: { description: 'The package', schema: creditPackageSchema } },
    async handler({ params, body }, { db }) {
      return { body: await updatePackage(db, params.package_id, body) };
    },
  }),
];
