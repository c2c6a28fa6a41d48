// Service accounts: machine clients of a tenant, managed by its admins.
import { z } from 'zod';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  scope,
  serviceAccountSchema,
  serviceAccountWithSecretSchema,
  updateServiceAccount,
} from '../../core/identity/service-accounts.ts';
import { noStore, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const params = uuidParams('service_account_id');

// Listing a scope twice means it once.
const scopeList = z
  .array(scope)
  .max(20)
  .transform((list) => [...new Set(list)]);

const newAccount = z.strictObject({
  tenant_id: z.uuid().optional().describe('Required unless you administer exactly one tenant'),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  scopes: scopeList.default([]),
  test_mode: z
    .boolean()
    .default(false)
    .describe(
      'A test account: its jobs run on the local stand-ins at no charge and are marked as test jobs. ' +
        'Fixed for the account’s life; make another for live work.',
    ),
});

const changes = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  scopes: scopeList.optional(),
  status: z.enum(['active', 'disabled']).optional(),
  rotate_secret: z
    .boolean()
    .optional()
    .describe('Issues a new client_secret (returned once); the old one stops working'),
});

export const routes = [
  defineRoute({
    key: 'GET /api/service-accounts/',
    access: 'user',
    description: 'Service accounts of the tenants the caller administers (all, for global admins).',
    request: { query: pageQuery.extend({ tenant_id: z.uuid().optional() }) },
    responses: { 200: { description: 'A page of service accounts', schema: pageSchema(serviceAccountSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listServiceAccounts(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /api/service-accounts/',
    access: 'user',
    description: 'Creates a service account; the answer carries its client_secret, shown this once.',
    request: { body: newAccount },
    responses: {
      201: { description: 'The account with its secret', schema: serviceAccountWithSecretSchema, headers: noStore },
      404: problemResponse('No such tenant, or not one you administer'),
    },
    async handler({ body }, { db, actor }) {
      return {
        status: 201,
        headers: { 'Cache-Control': 'no-store' },
        body: await createServiceAccount(db, actor, body),
      };
    },
  }),

  defineRoute({
    key: 'GET /api/service-accounts/{service_account_id}',
    access: 'user',
    request: { params },
    responses: { 200: { description: 'The account', schema: serviceAccountSchema } },
    async handler({ params }, { db, actor }) {
      return {
        body: await getServiceAccount(db, actor, params.service_account_id),
      };
    },
  }),

  defineRoute({
    key: 'PATCH /api/service-accounts/{service_account_id}',
    access: 'user',
    request: { params, body: changes },
    responses: {
      200: {
        description: 'The account (with client_secret when rotated)',
        schema: serviceAccountSchema.extend({ client_secret: z.string().optional() }),
        headers: noStore,
      },
    },
    async handler({ params, body }, { db, actor }) {
      return {
        headers: { 'Cache-Control': 'no-store' },
        body: await updateServiceAccount(db, actor, params.service_account_id, body),
      };
    },
  }),

  defineRoute({
    key: 'DELETE /api/service-accounts/{service_account_id}',
    access: 'user',
    description: 'Deletes the account; its tokens stop working at once.',
    request: { params },
    responses: noContent('Deleted'),
    async handler({ params }, { db, actor }) {
      await deleteServiceAccount(db, actor, params.service_account_id);
      return {};
    },
  }),
];
