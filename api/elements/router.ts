// Content Elements Admin: the entries of a site's content types. Anyone who
// reaches the site reads them (content:read); authors create elements and
// change the ones they made, editors and administrators (content:write) any.
import { z } from 'zod';
import { deleteElement } from '../../core/content/element-deletes.ts';
import { createElement, updateElement } from '../../core/content/element-writes.ts';
import { elementListQuery, elementSchema, getElement, listElements } from '../../core/content/elements.ts';
import { pageSchema } from '../../core/pagination.ts';
import { instant } from '../../core/timestamp.ts';
import { draftRoutes } from '../content-drafts.ts';
import { etagHeader, locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { ifMatchHeader, ifMatchVersion, noContent, siteParams, versionTag } from '../schemas.ts';

const elementParams = siteParams.extend({ element_id: z.uuid() });
const read = { site: 'read', scope: 'content:read' } as const;
const write = { site: 'write', scope: 'content:write' } as const;
const withTag = { ETag: etagHeader };
const elementName = z.string().trim().min(1).max(300);
const data = z
  .record(z.string(), z.unknown())
  .describe('Values by field id, checked against the type (drafts may leave required fields empty)');
const inUse = problemResponse('Pages or other elements use it; `references` lists them');

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/elements/',
    description:
      'The site’s elements. Filters: `type` (id or api_id), `status`, `locale`, `masters_only`, `q` (part of the name), `has_draft`, and, with a type, ' +
      'field values: `filter[field]=value` or `filter[field][op]=value` (op: eq, ne, gt, gte, lt, lte, in (comma-separated), contains, exists). ' +
      '`sort`: created_at, updated_at, published_at or name, `-` first for descending.',
    access: read,
    request: { params: siteParams, query: elementListQuery },
    responses: { 200: { description: 'A page of elements', schema: pageSchema(elementSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listElements(db, access, query) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/elements/',
    description:
      'Creates an element of `type` (id or api_id) or `type_id` (its id, as element reads name it; both given, they must name the same ' +
      'type), in `locale` (default: the site’s). With `master_id`, a translation of that element: ' +
      'of its type, in another locale, holding only localized fields. Defaults fill absent fields; `status: published` checks every rule. ' +
      '422 lists every problem of the data, each with its path.',
    access: write,
    request: {
      params: siteParams,
      body: z.strictObject({
        type: z.string().min(1).max(100).optional().describe('The content type, by id or api_id'),
        type_id: z.uuid().optional().describe('The content type’s id, as element reads give it: instead of `type`'),
        name: elementName,
        locale: z.string().min(2).max(35).optional(),
        master_id: z.uuid().optional(),
        data: data.default({}),
        status: z.enum(['draft', 'published']).default('draft'),
      }),
    },
    responses: {
      201: { description: 'The element', schema: elementSchema, headers: { Location: locationHeader, ...withTag } },
      409: problemResponse('The master has a translation in that locale'),
    },
    async handler({ params, body }, { db, access }) {
      const element = await createElement(db, access, body);
      return {
        status: 201,
        body: element,
        headers: {
          Location: `/${params.site_identifier}/elements/${element.id}`,
          ETag: versionTag(element.version),
        },
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/elements/{element_id}',
    access: read,
    request: { params: elementParams },
    responses: { 200: { description: 'The element', schema: elementSchema, headers: withTag } },
    async handler({ params }, { db, access }) {
      const element = await getElement(db, access, params.element_id);
      return { body: element, headers: { ETag: versionTag(element.version) } };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/elements/{element_id}',
    description:
      'Changes the name, the status (draft, published, archived) and/or data: the fields given replace theirs, the others stay. ' +
      'The result is checked against the type’s current fields. On a published element, name and data go into its `draft` ' +
      '(checked by the draft rules; public delivery keeps the live ones until POST …/publish); `status: published` publishes, ' +
      'the draft and what is given included; another status unpublishes, the draft becoming the element’s own fields. ' +
      '`publish_at` plans a publication (null cancels it). `If-Match` with the ETag: 412 when someone saved first.',
    access: write,
    request: {
      params: elementParams,
      headers: ifMatchHeader,
      body: z
        .strictObject({
          name: elementName.optional(),
          data: data.optional(),
          status: z.enum(['draft', 'published', 'archived']).optional(),
          publish_at: instant.nullable().optional().describe('When to publish the draft (in the future); null cancels'),
        })
        .refine((body) => Object.keys(body).length > 0, 'Send name, data, status or publish_at.'),
    },
    responses: {
      200: { description: 'The element', schema: elementSchema, headers: withTag },
      412: problemResponse('The element changed since the version in If-Match'),
    },
    async handler({ params, body }, { db, access }, { req }) {
      const element = await updateElement(db, access, params.element_id, body, ifMatchVersion(req.get('if-match')));
      return { body: element, headers: { ETag: versionTag(element.version) } };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/elements/{element_id}',
    description:
      'Deletes the element and its translations. 409 with `references` (pages placing it, elements referring to it) while it is used.',
    access: write,
    request: { params: elementParams },
    responses: { ...noContent('Deleted'), 409: inUse },
    async handler({ params }, { db, access }) {
      await deleteElement(db, access, params.element_id, false);
      return {};
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/elements/{element_id}/force',
    description:
      'Deletes the element and its translations with every use, in one transaction: it leaves the pages that placed it, and the ' +
      'elements that referred to it lose the value (a reference becomes null, a list entry goes).',
    access: write,
    request: { params: elementParams },
    responses: { ...noContent('Deleted, with its uses') },
    async handler({ params }, { db, access }) {
      await deleteElement(db, access, params.element_id, true);
      return {};
    },
  }),

  ...draftRoutes('element', {
    diff: 'GET /{site_identifier}/elements/{element_id}/draft-diff',
    discard: 'DELETE /{site_identifier}/elements/{element_id}/draft',
    publish: 'POST /{site_identifier}/elements/{element_id}/publish',
    versions: 'GET /{site_identifier}/elements/{element_id}/versions',
    compare: 'GET /{site_identifier}/elements/{element_id}/versions/compare',
    version: 'GET /{site_identifier}/elements/{element_id}/versions/{number}',
    restore: 'POST /{site_identifier}/elements/{element_id}/versions/{number}/restore',
  }),
];
