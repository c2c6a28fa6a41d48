// Transactions: a site's credits — balances, movements, prices and usage —
// read from and written to the ledger (core/credits).
import { z } from 'zod';
import { balanceSchema } from '../../core/credits/accounts.ts';
import {
  affordability,
  allocateFromTenant,
  balanceWithTenant,
  grantToUser,
  userBalance,
} from '../../core/credits/ledger.ts';
import { effectivePrices, priceSchema, quoteSchema, setSiteOverrides, units } from '../../core/credits/prices.ts';
import {
  entryKinds,
  listTransactions,
  month,
  monthlyUsage,
  siteUserCredits,
  transactionSchema,
  transactionStats,
  userCreditsSchema,
} from '../../core/credits/reports.ts';
import { spendable, spendableSchema } from '../../core/credits/spendable.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

const movement = z.strictObject({
  user_id: z.uuid(),
  amount: z.number().int().min(1).max(1_000_000_000),
  reason: z.string().trim().max(500).optional(),
});

const userQuery = z.object({ user_id: z.uuid().optional().describe('Another user (tenant admins)') });

const prices = z.object({ items: z.array(priceSchema) });

const notEnough = problemResponse(
  'The tenant’s monthly limit (/problems/monthly-limit-exceeded) or the pool’s balance (/problems/insufficient-credits) does not cover it',
);

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/transactions/',
    access: { site: 'read' },
    description:
      'Ledger entries of the site, oldest first. Tenant admins see everyone’s (filter with user_id); others their own. Users only.',
    request: {
      params: siteParams,
      query: pageQuery.extend({ user_id: z.uuid().optional(), kind: z.enum(entryKinds).optional() }),
    },
    responses: { 200: { description: 'A page of entries', schema: pageSchema(transactionSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listTransactions(db, access, query) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/cost-settings',
    access: { site: 'read' },
    description:
      'What each kind of job costs on this site: the global price, or the site’s own where it sets one, with the lowest ' +
      'price a tenant admin may set (tenant_minimum).',
    request: { params: siteParams },
    responses: { 200: { description: 'Prices by job kind', schema: prices } },
    async handler(_input, { db, site }) {
      return { body: { items: await effectivePrices(db, site.id) } };
    },
  }),

  defineRoute({
    key: 'PUT /{site_identifier}/transactions/cost-settings',
    access: { site: 'admin' },
    description:
      'Sets the site’s own prices for the kinds listed; price null returns a kind to the global price. Tenant admins may ' +
      'not go below a kind’s floor (tenant_minimum in GET …/cost-settings: the floor a global admin set on the global ' +
      'price, else the global price itself): 422 naming the kind and the floor, and nothing is changed. Global admins may ' +
      'set any price, below the floor too. A tenant admin’s price that a later rise of the floor overtakes is charged at ' +
      'the floor.',
    request: {
      params: siteParams,
      body: z.strictObject({
        settings: z
          .array(
            z.strictObject({
              kind: z.string().max(50),
              price: z
                .number()
                .min(0)
                .max(1_000_000)
                .nullable()
                .describe('Credits per unit, stored to 4 decimal places; at least the kind’s floor for tenant admins'),
              unit: z.enum(units).optional(),
            }),
          )
          .min(1)
          .max(100),
      }),
    },
    responses: { 200: { description: 'The prices now in force', schema: prices } },
    async handler({ body }, { db, site, actor }) {
      return { body: { items: await setSiteOverrides(db, actor, site.id, body.settings) } };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/transactions/credits/add',
    // Global admins reach every site; the site is looked up by the grant itself.
    access: 'global-admin',
    idempotent: true,
    description:
      'Global admins grant credits, from outside the system, to a member of the site’s tenant. Honours Idempotency-Key.',
    request: { params: siteParams, body: movement },
    responses: { 201: { description: 'The user’s credits on the site now', schema: balanceSchema } },
    async handler({ params, body }, { db, actor }) {
      return { status: 201, body: await grantToUser(db, actor, params.site_identifier, body) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/transactions/credits/allocate-from-tenant',
    access: { site: 'admin' },
    idempotent: true,
    description:
      'Tenant admins move credits from the tenant’s pool to a member’s account on this site, within the tenant’s monthly limit ' +
      '(402 /problems/monthly-limit-exceeded) and the pool’s balance (402 /problems/insufficient-credits). Honours Idempotency-Key.',
    request: { params: siteParams, body: movement },
    responses: {
      201: {
        description: 'Both accounts after the move',
        schema: z.object({ user: balanceSchema, tenant_pool: balanceSchema }),
      },
      402: notEnough,
    },
    async handler({ body }, { db, access }) {
      return { status: 201, body: await allocateFromTenant(db, access, body) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/credits/balance',
    access: { site: 'read' },
    description: 'Your credits on the site, or (tenant admins) another member’s with user_id. Users only.',
    request: { params: siteParams, query: userQuery },
    responses: { 200: { description: 'Credits', schema: balanceSchema.extend({ user_id: z.uuid() }) } },
    async handler({ query }, { db, access }) {
      const found = await userBalance(db, access, query.user_id);
      return { body: { user_id: found.userId, ...found.balance } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/credits/available',
    access: { site: 'read', scope: 'jobs:read' },
    description:
      'What the caller can spend on jobs on this site now, and from which balance: a user’s jobs (whatever their role, ' +
      'with a token or an API key) are paid from their own credits on the site, a service account’s from the tenant’s ' +
      'pool. Says how that balance is funded (who adds credits, with which endpoint), and, in test mode, that jobs are ' +
      'free. Service accounts need jobs:read.',
    request: { params: siteParams },
    responses: { 200: { description: 'The balance that pays', schema: spendableSchema } },
    async handler(_input, { db, access }) {
      return { body: await spendable(db, access) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/credits/balance-with-tenant',
    access: { site: 'read' },
    description:
      'Your credits on the site with the tenant’s monthly limit; tenant admins also see the pool. Users only.',
    request: { params: siteParams, query: userQuery },
    responses: {
      200: {
        description: 'Credits and tenant context',
        schema: z.object({
          user_id: z.uuid(),
          user: balanceSchema,
          tenant: z.object({
            id: z.uuid(),
            name: z.string(),
            monthly_limit: z.number().int().nullable(),
            allocated_this_month: z.number().int(),
            pool: balanceSchema.nullable().describe('Tenant admins only'),
          }),
        }),
      },
    },
    async handler({ query }, { db, access }) {
      return { body: await balanceWithTenant(db, access, query.user_id) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/transactions/credits/check',
    access: { site: 'read' },
    description:
      'Whether you (or, for tenant admins, user_id) can afford `units` of a kind of job on this site, and what it costs. Users only.',
    request: {
      params: siteParams,
      body: z.strictObject({
        kind: z.string().max(50),
        units: z.number().positive().max(1e9),
        user_id: z.uuid().optional(),
      }),
    },
    responses: {
      200: {
        description: 'The quote',
        schema: z.object({ affordable: z.boolean(), available: z.number().int(), quote: quoteSchema }),
      },
    },
    async handler({ body }, { db, access }) {
      return { body: await affordability(db, access, body) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/credits/site-users',
    access: { site: 'admin' },
    description: 'Tenant admins: every user who can work on the site, with their credits there.',
    request: { params: siteParams },
    responses: { 200: { description: 'Users and credits', schema: z.object({ items: z.array(userCreditsSchema) }) } },
    async handler(_input, { db, site }) {
      return { body: await siteUserCredits(db, site) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/monthly-usage',
    access: { site: 'read' },
    description:
      'Credits spent in a month (UTC; default the current one) by job kind, by user and by day. Others than tenant admins see their own. Users only.',
    request: { params: siteParams, query: z.object({ month: month.optional() }) },
    responses: {
      200: {
        description: 'Usage',
        schema: z.object({
          month: z.string(),
          total: z.number().int(),
          by_kind: z.record(z.string(), z.number().int()),
          by_user: z.record(z.string(), z.number().int()),
          by_day: z.record(z.string(), z.number().int()),
        }),
      },
    },
    async handler({ query }, { db, access }) {
      return { body: await monthlyUsage(db, access, query.month) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/transactions/stats',
    access: { site: 'read' },
    description:
      'Totals per entry kind and what the site’s accounts hold (yours only, unless you administer the tenant). Users only.',
    request: { params: siteParams },
    responses: {
      200: {
        description: 'Totals',
        schema: z.object({
          by_kind: z.record(z.string(), z.object({ entries: z.number().int(), amount: z.number().int() })),
          accounts: z.number().int(),
          balance: z.number().int(),
          reserved: z.number().int(),
          available: z.number().int(),
        }),
      },
    },
    async handler(_input, { db, access }) {
      return { body: await transactionStats(db, access) };
    },
  }),
];
