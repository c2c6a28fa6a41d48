// Admin Content Types: global administrators give many sites the same
// content type at once.
import { z } from 'zod';
import { atLeastOneOf } from '../../core/field-rules.ts';
import { copyResultSchema, distributeType } from '../../core/content/type-copies.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';

export const routes = [
  defineRoute({
    key: 'POST /admin/content-types/distribute',
    description:
      'Copies a content type to every site in `site_ids` and every site of the tenants in `tenant_ids` (the types it refers to along, ' +
      'where a site lacks them). Idempotent by api_id: a site that has it already is reported as `exists` and left alone. One result per site.',
    access: 'global-admin',
    request: {
      body: z
        .strictObject({
          type_id: z.uuid(),
          site_ids: z.array(z.uuid()).max(1000).optional(),
          tenant_ids: z.array(z.uuid()).max(100).optional(),
        })
        .refine((body) => (body.site_ids?.length ?? 0) + (body.tenant_ids?.length ?? 0) > 0, {
          message: 'Name site_ids, tenant_ids or both.',
          path: ['site_ids'],
        })
        .meta(atLeastOneOf('site_ids', 'tenant_ids')),
    },
    responses: {
      200: {
        description: 'What happened on each site',
        schema: z
          .object({
            type_id: z.uuid(),
            api_id: z.string(),
            created: z.number().int().describe('Sites that got the type now'),
            results: z.array(copyResultSchema),
          })
          .meta({ id: 'ContentTypeDistribution' }),
      },
      404: problemResponse('No such content type'),
    },
    async handler({ body }, { db, actor }) {
      return { body: await distributeType(db, actor, body) };
    },
  }),
];
