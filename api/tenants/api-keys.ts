// API keys of a tenant (beyond the specification; see api/extensions.tsv):
// long-lived keys an app sends as `Authorization: Bearer cap_live_…`, made by
// the tenant's admins for a service account or a member. Under
// /api/tenants/{tenant_id} beside the webhook secret, the other credential
// tenant admins manage; the domain is core/identity/api-keys.ts.
import { z } from 'zod';
import { scopes } from '../../core/identity/access.ts';
import {
  apiKeySchema,
  apiKeyWithSecretSchema,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../core/identity/api-keys.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { instantAs } from '../../core/timestamp.ts';
import { noStore } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const newKey = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    service_account_id: z.uuid().optional().describe('The holder, a service account of the tenant (or user_id)'),
    user_id: z.uuid().optional().describe('The holder, a member of the tenant (or service_account_id)'),
    scopes: z
      .array(z.enum(scopes))
      .min(1)
      .max(20)
      .transform((list) => [...new Set(list)])
      .describe(
        'What the key may do; a service account’s key only scopes the account has. Site routes need sites:read',
      ),
    site_ids: z
      .array(z.uuid())
      .max(100)
      .transform((list) => [...new Set(list)])
      .nullable()
      .optional()
      .describe('The sites the key reaches (the holder must reach them); omitted: every site the holder reaches'),
    expires_at: instantAs('When the key stops working; omitted: never').nullable().optional(),
  })
  .refine((body) => (body.service_account_id === undefined) !== (body.user_id === undefined), {
    message: 'name exactly one holder: service_account_id or user_id',
    path: ['service_account_id'],
  })
  .meta({
    examples: [
      {
        name: 'Nightly speech batch',
        service_account_id: '7a0d3f7e-3c1b-4a59-9a43-2f1d6c2b9e10',
        scopes: ['sites:read', 'jobs:read', 'jobs:write', 'media:write'],
        expires_at: '2027-06-30T00:00:00Z',
      },
    ],
  });

export const routes = [
  defineRoute({
    key: 'POST /api/tenants/{tenant_id}/api-keys',
    access: 'user',
    description:
      'Makes an API key for a service account or a member of the tenant; the answer carries the key, shown this once. ' +
      'Send it as `Authorization: Bearer <key>` wherever an access token is taken. Tenant admins only.',
    request: { params: uuidParams('tenant_id'), body: newKey },
    responses: { 201: { description: 'The key, with its secret', schema: apiKeyWithSecretSchema, headers: noStore } },
    async handler({ params, body }, { db, actor }) {
      return {
        status: 201,
        headers: { 'Cache-Control': 'no-store' },
        body: await createApiKey(db, actor, params.tenant_id, body),
      };
    },
  }),

  defineRoute({
    key: 'GET /api/tenants/{tenant_id}/api-keys',
    access: 'user',
    description: 'The tenant’s API keys, without their secrets. Tenant admins only.',
    request: { params: uuidParams('tenant_id'), query: pageQuery },
    responses: { 200: { description: 'A page of keys', schema: pageSchema(apiKeySchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listApiKeys(db, actor, params.tenant_id, query) };
    },
  }),

  defineRoute({
    key: 'DELETE /api/tenants/{tenant_id}/api-keys/{api_key_id}',
    access: 'user',
    description: 'Revokes the key: every API process refuses it from now on. Tenant admins only.',
    request: { params: uuidParams('tenant_id', 'api_key_id') },
    responses: noContent('Revoked'),
    async handler({ params }, { db, actor }) {
      await revokeApiKey(db, actor, params.tenant_id, params.api_key_id);
      return {};
    },
  }),
];
