// Cache Management: global administrators drop public answers kept by the
// API processes, for one element, one site, or all.
import { z } from 'zod';
import { clearAll, clearElement, clearSite, clearedSchema } from '../../core/content/cache-admin.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const cleared = { 200: { description: 'What every API process dropped', schema: clearedSchema } };

export const routes = [
  defineRoute({
    key: 'DELETE /admin/cache/all',
    description: 'Drops every public answer kept by every API process.',
    access: 'global-admin',
    responses: cleared,
    async handler(_input, { db }) {
      return { body: await clearAll(db) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/cache/element/{element_id}/site/{site_id}',
    description: 'Drops the public answers that show the element (and its translations), in every API process.',
    access: 'global-admin',
    request: { params: uuidParams('element_id', 'site_id') },
    responses: cleared,
    async handler({ params }, { db }) {
      return { body: await clearElement(db, params.element_id, params.site_id) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/cache/site/{site_id}',
    description: 'Drops every public answer of the site, in every API process.',
    access: 'global-admin',
    request: { params: z.object({ site_id: z.uuid() }) },
    responses: cleared,
    async handler({ params }, { db }) {
      return { body: await clearSite(db, params.site_id) };
    },
  }),
];
