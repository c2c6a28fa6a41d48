// Global cost settings: the global price list (global admins keep it; any
// signed-in caller reads the active prices), and credits across tenants —
// overviews, pools, monthly limits and grants from outside the system.
import { z } from 'zod';
import { instantAs } from '../../core/timestamp.ts';
import {
  grantToUser,
  setMonthlyLimit,
  allocateToTenant,
  tenantCredits,
  tenantCreditsSchema,
} from '../../core/credits/ledger.ts';
import { balanceSchema } from '../../core/credits/accounts.ts';
import {
  allTenantCredits,
  allUserCredits,
  creditOverview,
  creditOverviewSchema,
  siteCreditDetails,
  siteCreditsSchema,
  tenantCreditRowSchema,
  tenantSorts,
  userCreditSummarySchema,
} from '../../core/credits/overview.ts';
import {
  activePrices,
  bulkCostSettings,
  costSettingChanges,
  costSettingInput,
  costSettingSchema,
  createCostSetting,
  currentPrices,
  deleteCostSetting,
  findCostSetting,
  listCostSettings,
  updateCostSetting,
} from '../../core/credits/price-list.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const base = '/admin/global-cost-settings';

const amount = z.number().int().min(1).max(1_000_000_000);
const reason = z.string().trim().max(500).default('');
const expiresAt = instantAs(
  'In the future (422 otherwise): the unspent rest of the grant expires then; spending takes the soonest-expiring credits first',
)
  .refine((value) => Date.parse(value) > Date.now(), 'must be in the future')
  .optional();

const period = z.object({
  from: instantAs('Default: the start of this month (UTC)').optional(),
  to: instantAs('Default: the start of next month (UTC)').optional(),
});

const publicPrice = costSettingSchema.pick({ kind: true, unit: true, credits_per_unit: true, description: true });

/** Who may set what, said on each route that sets a global price. */
const floors =
  'Global admins only. tenant_minimum is the floor of the kind’s site prices that tenant admins set ' +
  '(PUT /{site_identifier}/transactions/cost-settings); null makes the price itself the floor. Global admins may price ' +
  'a site below it through that same route.';

const clashes = problemResponse('The kind and unit have a price already, or the kind an active one');

export const routes = [
  defineRoute({
    key: 'GET /admin/global-cost-settings/',
    access: 'global-admin',
    description: 'The global price list, active and inactive, oldest first.',
    request: {
      query: pageQuery.extend({
        kind: z.string().max(50).optional(),
        active: z
          .enum(['true', 'false'])
          .transform((value) => value === 'true')
          .optional(),
      }),
    },
    responses: { 200: { description: 'A page of prices', schema: pageSchema(costSettingSchema) } },
    async handler({ query }, { db }) {
      return { body: await listCostSettings(db, query) };
    },
  }),

  defineRoute({
    key: 'POST /admin/global-cost-settings/',
    access: 'global-admin',
    description:
      'Adds a price for a kind of job and a unit. At most one price per kind is active: the one jobs are charged by. ' +
      floors,
    request: { body: costSettingInput },
    responses: {
      201: { description: 'The price', schema: costSettingSchema, headers: { Location: locationHeader } },
      409: clashes,
    },
    async handler({ body }, { db }) {
      const created = await createCostSetting(db, body);
      return { status: 201, body: created, headers: { Location: `${base}/${created.id}` } };
    },
  }),

  defineRoute({
    key: 'PUT /admin/global-cost-settings/bulk',
    access: 'global-admin',
    description:
      'Sets many prices at once, matched by kind and unit, in one transaction: all or nothing, with every problem reported at once (422). ' +
      'mode=replace also deletes every global price not listed. A listed price’s omitted tenant_minimum is null (the price). ' +
      floors,
    request: {
      body: z.strictObject({
        mode: z.enum(['upsert', 'replace']).default('upsert'),
        settings: z.array(costSettingInput).min(1).max(500),
      }),
    },
    responses: {
      200: { description: 'The whole global price list now', schema: z.object({ items: z.array(costSettingSchema) }) },
    },
    async handler({ body }, { db }) {
      return { body: await bulkCostSettings(db, body.settings, body.mode) };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/credit-overview',
    access: 'global-admin',
    description:
      'Credits granted, bought, received by subscription, spent, reserved, expired and taken back in a period (default this month), ' +
      'in total, for the top tenants and by job kind.',
    request: { query: period.extend({ top: z.coerce.number().int().min(1).max(100).default(10) }) },
    responses: { 200: { description: 'The period’s credit flows', schema: creditOverviewSchema } },
    async handler({ query }, { db }) {
      return { body: await creditOverview(db, query, query.top) };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/public',
    access: 'signed-in',
    description: 'The active price of every kind of job, for any signed-in caller.',
    responses: { 200: { description: 'Active prices', schema: z.object({ items: z.array(publicPrice) }) } },
    async handler(_input, { db }) {
      return { body: { items: await activePrices(db) } };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/readonly/current',
    access: 'global-admin',
    description: 'The prices in force: the active global ones, or with ?site_id= that site’s, its overrides merged.',
    request: { query: z.object({ site_id: z.uuid().optional() }) },
    responses: {
      200: {
        description: 'Prices in force',
        schema: z.object({
          site_id: z.uuid().nullable(),
          items: z.array(publicPrice.extend({ source: z.enum(['global', 'site']) })),
        }),
      },
    },
    async handler({ query }, { db }) {
      return { body: { site_id: query.site_id ?? null, items: await currentPrices(db, query.site_id) } };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/sites/{site_id}/credits',
    access: 'global-admin',
    description: 'A site’s users with their credits there, and its spend by job kind in a period (default this month).',
    request: { params: uuidParams('site_id'), query: period },
    responses: {
      200: { description: 'The site’s credits', schema: siteCreditsSchema },
      404: problemResponse('No such site'),
    },
    async handler({ params, query }, { db }) {
      return { body: await siteCreditDetails(db, params.site_id, query) };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/tenant-credits',
    access: 'global-admin',
    description: 'Every tenant’s pool, monthly limit and this month’s allocation and spend, in the order asked.',
    request: {
      query: pageQuery.omit({ include_total: true }).extend({
        sort: z.enum(Object.keys(tenantSorts) as [keyof typeof tenantSorts]).default('name'),
        order: z.enum(['asc', 'desc']).default('asc'),
      }),
    },
    responses: {
      200: {
        description: 'A page of tenants',
        schema: z.object({ items: z.array(tenantCreditRowSchema), next_cursor: z.string().nullable() }),
      },
    },
    async handler({ query }, { db }) {
      return { body: await allTenantCredits(db, query) };
    },
  }),

  defineRoute({
    key: 'POST /admin/global-cost-settings/tenant-credits/allocate',
    access: 'global-admin',
    idempotent: true,
    description:
      'Global admins add credits to a tenant’s pool, from outside the system, optionally expiring. Honours Idempotency-Key.',
    request: { body: z.strictObject({ tenant_id: z.uuid(), amount, reason, expires_at: expiresAt }) },
    responses: {
      201: { description: 'The tenant’s credits now', schema: tenantCreditsSchema },
      404: problemResponse('No such tenant'),
    },
    async handler({ body }, { db, actor }) {
      const grant = { tenantId: body.tenant_id, amount: body.amount, reason: body.reason, expiresAt: body.expires_at };
      return { status: 201, body: await allocateToTenant(db, actor, grant) };
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

  defineRoute({
    key: 'PATCH /admin/global-cost-settings/tenant-credits/{tenant_id}/monthly-limit',
    access: 'global-admin',
    description:
      'How many credits the tenant’s admins may move from its pool to users per calendar month; null lifts the limit.',
    request: {
      params: uuidParams('tenant_id'),
      body: z.strictObject({ monthly_limit: z.number().int().min(0).max(1_000_000_000_000).nullable() }),
    },
    responses: {
      200: { description: 'The tenant’s credits', schema: tenantCreditsSchema },
      404: problemResponse('No such tenant'),
    },
    async handler({ params, body }, { db, actor }) {
      return { body: await setMonthlyLimit(db, actor, params.tenant_id, body.monthly_limit) };
    },
  }),

  defineRoute({
    key: 'POST /admin/global-cost-settings/user-credits/allocate',
    access: 'global-admin',
    idempotent: true,
    description:
      'Grants credits to a user on a site, from outside the system, with a reason and optionally an expiry; the ledger records who. ' +
      'Honours Idempotency-Key.',
    request: { body: z.strictObject({ site_id: z.uuid(), user_id: z.uuid(), amount, reason, expires_at: expiresAt }) },
    responses: {
      201: { description: 'The user’s credits on the site now', schema: balanceSchema },
      404: problemResponse('No such site, or the user is not a member of its tenant'),
    },
    async handler({ body }, { db, actor }) {
      return { status: 201, body: await grantToUser(db, actor, body.site_id, body) };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/users/credits',
    access: 'global-admin',
    description: 'Every user holding credits, with the total and the balance on each site; ?email= finds one user.',
    request: { query: pageQuery.omit({ include_total: true }).extend({ email: z.string().max(320).optional() }) },
    responses: { 200: { description: 'A page of users', schema: pageSchema(userCreditSummarySchema) } },
    async handler({ query }, { db }) {
      return { body: await allUserCredits(db, query) };
    },
  }),

  defineRoute({
    key: 'GET /admin/global-cost-settings/{setting_id}',
    access: 'global-admin',
    request: { params: uuidParams('setting_id') },
    responses: { 200: { description: 'The price', schema: costSettingSchema } },
    async handler({ params }, { db }) {
      return { body: await findCostSetting(db, params.setting_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /admin/global-cost-settings/{setting_id}',
    access: 'global-admin',
    description: `Changes a price; its kind stays. ${floors}`,
    request: {
      params: uuidParams('setting_id'),
      body: costSettingChanges,
    },
    responses: { 200: { description: 'The price', schema: costSettingSchema }, 409: clashes },
    async handler({ params, body }, { db }) {
      return { body: await updateCostSetting(db, params.setting_id, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/global-cost-settings/{setting_id}',
    access: 'global-admin',
    description: 'Deletes a price. Jobs of a kind without an active price cannot be priced (422) until one is added.',
    request: { params: uuidParams('setting_id') },
    responses: noContent('Deleted'),
    async handler({ params }, { db }) {
      await deleteCostSetting(db, params.setting_id);
      return { status: 204 };
    },
  }),
];
