// Admin Content Types: global administrators give many sites the same
// content type at once, or bring the sites that have it its new fields.
import { z } from 'zod';
import { atLeastOneOf } from '../../core/field-rules.ts';
import { distributeType, distributionResultSchema } from '../../core/content/type-distribution.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';

export const routes = [
  defineRoute({
    key: 'POST /admin/content-types/distribute',
    description:
      'Brings a content type to every site in `site_ids` and every site of the tenants in `tenant_ids`. A site without a type of its ' +
      'api_id gets a copy (`created`; the types it refers to along, where the site lacks them). A site that has one gets the source’s ' +
      'fields it lacks and the source’s version of the fields both have (`updated`, naming `fields_added` and `fields_changed`), ' +
      'applied as an edit of that site’s type would be: checked against every element of it, `version` raised. A change its elements ' +
      'would fail (a new required field without default, a type changed, an enum value removed...) or its schema would not hold is ' +
      '`refused` for that site with the `reasons` and left unapplied; other sites still get theirs. Fields only the site has are kept. ' +
      'A site with every field as the source has it is `unchanged`, so a second distribution changes nothing. One result per site.',
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
            version: z.number().int().describe('The source type’s version'),
            created: z.number().int().describe('Sites that got the type now'),
            updated: z.number().int().describe('Sites whose type got new or changed fields'),
            unchanged: z.number().int().describe('Sites whose type had every field already'),
            refused: z
              .number()
              .int()
              .describe('Sites whose elements or schema would fail the change (nothing applied)'),
            results: z.array(distributionResultSchema),
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
