// Content Types: the schemas of a site's content. Anyone who reaches the site
// reads them (content:read); editors and administrators (content:write)
// create, change, copy and delete them.
import { z } from 'zod';
import { dependenciesSchema, copyResultSchema, copyType, typeDependencies } from '../../core/content/type-copies.ts';
import { updateType } from '../../core/content/type-changes.ts';
import {
  apiId,
  contentTypeSchema,
  createType,
  deleteType,
  fieldsSchema,
  getType,
  listTypes,
  typeDescription,
  typeListQuery,
  typeName,
  validateSchema,
} from '../../core/content/types.ts';
import { fieldSchema } from '../../core/content/fields.ts';
import { pageSchema } from '../../core/pagination.ts';
import { etagHeader, locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { ifMatchHeader, ifMatchVersion, noContent, siteParams, versionTag } from '../schemas.ts';

const typeParams = siteParams.extend({ type_id: z.uuid() });
const read = { site: 'read', scope: 'content:read' } as const;
const manage = { site: 'manage', scope: 'content:write' } as const;
const withTag = { ETag: etagHeader };
const located = (site: string, id: string) => `/${site}/contenttypes/${id}`;

const issueSchema = z.object({ path: z.string(), message: z.string() });

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/contenttypes/',
    description: 'The site’s content types, oldest first; `q` matches part of the name or api_id.',
    access: read,
    request: { params: siteParams, query: typeListQuery },
    responses: { 200: { description: 'A page of content types', schema: pageSchema(contentTypeSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listTypes(db, access, query) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/contenttypes/',
    description:
      'Creates a content type. The schema is checked whole first: 422 lists every problem, each with its path ' +
      '(field ids, validations that fit the type, safe patterns, enum values, nesting depth, defaults, reference types of the site).',
    access: manage,
    request: {
      params: siteParams,
      body: z.strictObject({
        name: typeName,
        api_id: apiId.describe('Unique in the site; how public clients and references name the type'),
        description: typeDescription.optional(),
        fields: fieldsSchema.default([]),
      }),
    },
    responses: {
      201: {
        description: 'The content type',
        schema: contentTypeSchema,
        headers: { Location: locationHeader, ...withTag },
      },
      409: problemResponse('The site has a content type with that api_id'),
    },
    async handler({ params, body }, { db, access }) {
      const type = await createType(db, access, body);
      return {
        status: 201,
        body: type,
        headers: { Location: located(params.site_identifier, type.id), ETag: versionTag(type.version) },
      };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/contenttypes/validate',
    description:
      'Checks a content type without saving it: the body create takes (name, api_id, description, fields; each ' +
      'judged when given), and sample data against the fields when given (`mode`: draft rules or publish rules). ' +
      'Answers every problem at once, each with its path (a malformed or taken api_id among them); `valid` says ' +
      'whether there were none.',
    access: manage,
    request: {
      params: siteParams,
      body: z.strictObject({
        // Any text is taken here, so that what is wrong with it is reported beside the rest rather than alone.
        name: z.string().max(10_000).optional().describe('The type’s name, judged as create judges it'),
        api_id: z
          .string()
          .max(1_000)
          .optional()
          .describe('The type’s own api_id, judged as create judges it; its reference fields may name it'),
        description: z.string().max(100_000).optional().describe('Judged as create judges it'),
        fields: z.array(z.unknown()).max(1000).default([]).describe('The fields to check, as ContentField objects'),
        sample: z.record(z.string(), z.unknown()).optional().describe('Element data to check against the fields'),
        mode: z.enum(['draft', 'publish']).default('publish'),
      }),
    },
    responses: {
      200: {
        description: 'What was found',
        schema: z
          .object({
            valid: z.boolean(),
            errors: z.array(issueSchema),
            fields: z.array(fieldSchema).optional().describe('The fields as they would be saved (defaults filled)'),
          })
          .meta({ id: 'ContentTypeValidation' }),
      },
    },
    async handler({ body }, { db, access }) {
      return { body: await validateSchema(db, access, body) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/contenttypes/{type_id}',
    access: read,
    request: { params: typeParams },
    responses: { 200: { description: 'The content type', schema: contentTypeSchema, headers: withTag } },
    async handler({ params }, { db, access }) {
      const type = await getType(db, access, params.type_id);
      return { body: type, headers: { ETag: versionTag(type.version) } };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/contenttypes/{type_id}',
    description:
      'Changes the name, description or fields (the api_id stays). A change of the fields raises `version` and is checked against every ' +
      'element of the type first: 409 with `element_count`, the first `element_ids` and their `problems` when some would no longer be valid ' +
      '(a type changed, a field made required, an enum value removed...). `If-Match` with the ETag: 412 when someone changed it since.',
    access: manage,
    request: {
      params: typeParams,
      headers: ifMatchHeader,
      body: z
        .strictObject({
          name: typeName.optional(),
          description: typeDescription.optional(),
          fields: fieldsSchema.optional(),
        })
        .refine((body) => Object.keys(body).length > 0, 'Send name, description or fields.'),
    },
    responses: {
      200: { description: 'The content type', schema: contentTypeSchema, headers: withTag },
      409: problemResponse('Existing elements would not satisfy the new fields'),
      412: problemResponse('The content type changed since the version in If-Match'),
    },
    async handler({ params, body }, { db, access }, { req }) {
      const type = await updateType(db, access, params.type_id, body, ifMatchVersion(req.get('if-match')));
      return { body: type, headers: { ETag: versionTag(type.version) } };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/contenttypes/{type_id}',
    description:
      'Deletes a content type without elements that no other type refers to; 409 with the counts (`in_use`) otherwise.',
    access: manage,
    request: { params: typeParams },
    responses: {
      ...noContent('Deleted'),
      409: problemResponse('The type has elements, or other types refer to it'),
    },
    async handler({ params }, { db, access }) {
      await deleteType(db, access, params.type_id);
      return {};
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/contenttypes/{type_id}/copy',
    description:
      'Copies the type: in the same site under a new `api_id`, or to `target_site` (id or slug), a site of the same tenant that the caller ' +
      'manages. Types it refers to are mapped to the target’s types of the same api_id, or copied along when it has none.',
    access: manage,
    request: {
      params: typeParams,
      body: z.strictObject({
        api_id: apiId.optional().describe('The copy’s api_id; needed in the same site, else the original’s'),
        name: typeName.optional(),
        target_site: z.string().min(1).max(100).optional().describe('Another site of the tenant (id or slug)'),
      }),
    },
    responses: {
      201: {
        description: 'The copy, and what came along',
        schema: z.object({ type: contentTypeSchema, result: copyResultSchema }),
        headers: { Location: locationHeader },
      },
      409: problemResponse('The target site has a content type with that api_id'),
    },
    async handler({ params, body }, { db, access }) {
      const copied = await copyType(db, access, params.type_id, body);
      return { status: 201, body: copied, headers: { Location: located(copied.type.site_id, copied.type.id) } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/contenttypes/{type_id}/dependencies',
    description:
      'What the type refers to (the types its reference fields allow) and what refers to it: other types, its elements, elements that ' +
      'refer to those, and pages that place them.',
    access: read,
    request: { params: typeParams },
    responses: { 200: { description: 'Its dependencies', schema: dependenciesSchema } },
    async handler({ params }, { db, access }) {
      return { body: await typeDependencies(db, access, params.type_id) };
    },
  }),
];
