// Pages Admin: a site's page tree and the elements placed on each page.
// Anyone who reaches the site reads them (content:read); authors create pages
// and change the ones they made; editors and administrators (content:write)
// change any, and alone reorder and move many at once.
import { z } from 'zod';
import { batchMove, movePage, reorderPages } from '../../core/content/page-moves.ts';
import {
  addSlot,
  areaName,
  getPageWithElements,
  pageWithElementsSchema,
  removeSlot,
  replaceLayout,
  slotSchema,
  slotSettings,
  updateSlot,
} from '../../core/content/page-elements.ts';
import {
  createPage,
  deletePage,
  listPages,
  pageListQuery,
  pageNodeSchema,
  pageSchema,
  pageSlug,
  cachedPageTree,
  seoSchema,
} from '../../core/content/pages.ts';
import { updatePage } from '../../core/content/page-writes.ts';
import { instant } from '../../core/timestamp.ts';
import { draftRoutes } from '../content-drafts.ts';
import { pageSchema as listPageSchema } from '../../core/pagination.ts';
import { etagHeader, locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { flag, ifMatchHeader, ifMatchVersion, noContent, siteParams, versionTag } from '../schemas.ts';

export const pageParams = siteParams.extend({ page_id: z.uuid() });
const slotParams = pageParams.extend({ element_id: z.uuid() });
const read = { site: 'read', scope: 'content:read' } as const;
const write = { site: 'write', scope: 'content:write' } as const;
const manage = { site: 'manage', scope: 'content:write' } as const;
const withTag = { ETag: etagHeader };
const position = z.number().int().min(0).max(100_000);
const parentId = z.uuid().nullable().describe('The new parent; null for the top level');
const title = z.string().trim().min(1).max(300);
const template = z.string().max(100).nullable();
const stale = problemResponse('The page changed since the version in If-Match');
const pathTakenOrCycle = problemResponse('A sibling has the slug in that locale, or the move would go under itself');
const pagesSchema = z.object({ items: z.array(pageSchema) });

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/pages/',
    description:
      'The site’s pages, oldest first. Filters: `parent_id` (`root` for the top level), `status`, `locale`, `path`, `q` (part of the title), ' +
      '`has_draft`.',
    access: read,
    request: { params: siteParams, query: pageListQuery },
    responses: { 200: { description: 'A page of pages', schema: listPageSchema(pageSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listPages(db, access, query) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/pages/',
    description:
      'Creates a page under `parent_id` (or at the top) at `position` (the end by default); its path is the parent’s plus its slug. ' +
      'With `master_id`, a translation of that page in another locale. 409 when a sibling in that locale has the slug.',
    access: write,
    request: {
      params: siteParams,
      body: z.strictObject({
        parent_id: parentId.optional(),
        position: position.optional(),
        slug: pageSlug,
        title,
        locale: z.string().min(2).max(35).optional(),
        master_id: z.uuid().optional(),
        status: z.enum(['draft', 'published']).default('draft'),
        seo: seoSchema.optional(),
        template: template.optional(),
      }),
    },
    responses: {
      201: { description: 'The page', schema: pageSchema, headers: { Location: locationHeader, ...withTag } },
      409: problemResponse('A sibling in that locale has the slug, or the master has a translation in that locale'),
    },
    async handler({ params, body }, { db, access }) {
      const page = await createPage(db, access, body);
      return {
        status: 201,
        body: page,
        headers: { Location: `/${params.site_identifier}/pages/${page.id}`, ETag: versionTag(page.version) },
      };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/pages/batch-move',
    description:
      'Applies the moves in order, all or nothing, and answers the pages moved as they ended. Editors and administrators.',
    access: manage,
    request: {
      params: siteParams,
      body: z.strictObject({
        moves: z
          .array(z.strictObject({ page_id: z.uuid(), parent_id: parentId, position: position.optional() }))
          .min(1)
          .max(1000),
      }),
    },
    responses: { 200: { description: 'The pages moved', schema: pagesSchema }, 409: pathTakenOrCycle },
    async handler({ body }, { db, access }) {
      return { body: { items: await batchMove(db, access, body.moves) } };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/pages/reorder',
    description:
      'Puts one parent’s children (`parent_id` null: the top level) in the order of `page_ids`, which lists every child once. ' +
      'Editors and administrators.',
    access: manage,
    request: {
      params: siteParams,
      body: z.strictObject({ parent_id: parentId, page_ids: z.array(z.uuid()).max(10_000) }),
    },
    responses: { 200: { description: 'The children in their new order', schema: pagesSchema } },
    async handler({ body }, { db, access }) {
      return { body: { items: await reorderPages(db, access, body.parent_id, body.page_ids) } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/pages/tree',
    description:
      'The whole tree, nested, siblings by position, each page with its element count; in one query, kept until a page or a layout ' +
      'of the site changes (every API process drops it when one does).',
    access: read,
    request: { params: siteParams },
    responses: {
      200: {
        description: 'The top-level pages with their children',
        schema: z.object({ items: z.array(pageNodeSchema) }),
      },
    },
    async handler(_input, { db, access, services }) {
      return { json: await cachedPageTree(db, access, services.publicCache) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/pages/{page_id}',
    description: 'The page with the elements placed on it (by area, then position), in one query.',
    access: read,
    request: { params: pageParams },
    responses: { 200: { description: 'The page', schema: pageWithElementsSchema, headers: withTag } },
    async handler({ params }, { db, access }) {
      const page = await getPageWithElements(db, access, params.page_id);
      return { body: page, headers: { ETag: versionTag(page.version) } };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/pages/{page_id}',
    description:
      'Changes the title, slug, status, seo or template. A new slug rewrites the paths of the page and everything below it. ' +
      'On a published page, title, seo and template go into its `draft` (public delivery keeps the live ones until ' +
      'POST …/publish); the slug, moves and the elements placed change the live page. `status: published` publishes, the draft ' +
      'and what is given included; another status unpublishes, the draft becoming the page’s own fields. `publish_at` plans a ' +
      'publication (null cancels it). `If-Match` with the ETag: 412 when someone changed it since.',
    access: write,
    request: {
      params: pageParams,
      headers: ifMatchHeader,
      body: z
        .strictObject({
          title: title.optional(),
          slug: pageSlug.optional(),
          status: z.enum(['draft', 'published', 'archived']).optional(),
          seo: seoSchema.optional(),
          template: template.optional(),
          publish_at: instant.nullable().optional().describe('When to publish the draft (in the future); null cancels'),
        })
        .refine((body) => Object.keys(body).length > 0, 'Send something to change.'),
    },
    responses: {
      200: { description: 'The page', schema: pageSchema, headers: withTag },
      409: problemResponse('A sibling in that locale has the slug'),
      412: stale,
    },
    async handler({ params, body }, { db, access }, { req }) {
      const page = await updatePage(db, access, params.page_id, body, ifMatchVersion(req.get('if-match')));
      return { body: page, headers: { ETag: versionTag(page.version) } };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/pages/{page_id}',
    description: 'Deletes the page (its elements stay, unplaced). 409 when it has children, unless `recursive=true`.',
    access: write,
    request: { params: pageParams, query: z.object({ recursive: flag }) },
    responses: { ...noContent('Deleted'), 409: problemResponse('The page has children (without recursive)') },
    async handler({ params, query }, { db, access }) {
      await deletePage(db, access, params.page_id, query.recursive);
      return {};
    },
  }),

  defineRoute({
    key: 'PUT /{site_identifier}/pages/{page_id}/move',
    description:
      'Moves the page (and everything below it) under `parent_id` at `position` (the end by default), rewriting the paths. ' +
      '409 for a move under itself or when the new path is taken.',
    access: write,
    request: {
      params: pageParams,
      headers: ifMatchHeader,
      body: z.strictObject({ parent_id: parentId, position: position.optional() }),
    },
    responses: {
      200: { description: 'The page', schema: pageSchema, headers: withTag },
      409: pathTakenOrCycle,
      412: stale,
    },
    async handler({ params, body }, { db, access }, { req }) {
      const page = await movePage(
        db,
        access,
        { page_id: params.page_id, ...body },
        ifMatchVersion(req.get('if-match')),
      );
      return { body: page, headers: { ETag: versionTag(page.version) } };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/pages/{page_id}/elements',
    description:
      'Places an element of the site on the page, in `area` at `position` (the end by default). 409 when it is there.',
    access: write,
    request: {
      params: pageParams,
      body: z.strictObject({
        element_id: z.uuid(),
        area: areaName.default('main'),
        position: position.optional(),
        settings: slotSettings.optional(),
      }),
    },
    responses: {
      201: { description: 'The slot', schema: slotSchema },
      409: problemResponse('The element is on the page already'),
    },
    async handler({ params, body }, { db, access }) {
      return { status: 201, body: await addSlot(db, access, params.page_id, body) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/pages/{page_id}/elements/batch-update',
    description:
      'Replaces the page’s whole layout with `elements`, in one transaction, all or nothing: per area in the order of their `position` ' +
      '(else of the list). `If-Match` with the page’s ETag: 412 when someone changed it since.',
    access: write,
    request: {
      params: pageParams,
      headers: ifMatchHeader,
      body: z.strictObject({
        elements: z
          .array(
            z.strictObject({
              element_id: z.uuid(),
              area: areaName.default('main'),
              position: position.optional(),
              settings: slotSettings.optional(),
            }),
          )
          .max(1000),
      }),
    },
    responses: {
      200: { description: 'The page with its new layout', schema: pageWithElementsSchema, headers: withTag },
      412: stale,
    },
    async handler({ params, body }, { db, access }, { req }) {
      const page = await replaceLayout(db, access, params.page_id, body.elements, ifMatchVersion(req.get('if-match')));
      return { body: page, headers: { ETag: versionTag(page.version) } };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/pages/{page_id}/elements/{element_id}',
    description: 'Takes the element off the page (the element itself stays).',
    access: write,
    request: { params: slotParams },
    responses: { ...noContent('Removed') },
    async handler({ params }, { db, access }) {
      await removeSlot(db, access, params.page_id, params.element_id);
      return {};
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/pages/{page_id}/elements/{element_id}',
    description: 'Moves the element to another area or position on the page, or changes its settings.',
    access: write,
    request: {
      params: slotParams,
      body: z
        .strictObject({ area: areaName.optional(), position: position.optional(), settings: slotSettings.optional() })
        .refine((body) => Object.keys(body).length > 0, 'Send area, position or settings.'),
    },
    responses: { 200: { description: 'The slot', schema: slotSchema } },
    async handler({ params, body }, { db, access }) {
      return { body: await updateSlot(db, access, params.page_id, params.element_id, body) };
    },
  }),

  ...draftRoutes('page', {
    diff: 'GET /{site_identifier}/pages/{page_id}/draft-diff',
    discard: 'DELETE /{site_identifier}/pages/{page_id}/draft',
    publish: 'POST /{site_identifier}/pages/{page_id}/publish',
    versions: 'GET /{site_identifier}/pages/{page_id}/versions',
    compare: 'GET /{site_identifier}/pages/{page_id}/versions/compare',
    version: 'GET /{site_identifier}/pages/{page_id}/versions/{number}',
    restore: 'POST /{site_identifier}/pages/{page_id}/versions/{number}/restore',
  }),
];
