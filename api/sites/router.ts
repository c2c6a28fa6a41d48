// Sites. Tenant admins create and change their tenant's sites; everyone with
// access reads them. {site_identifier} is the site's id or slug.
import { z } from 'zod';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import {
  createSite,
  deleteSite,
  listSites,
  loadSite,
  locale,
  site,
  siteSlug,
  updateSite,
} from '../../core/tenancy/sites.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, siteParams, uuidParams } from '../schemas.ts';

const domain = z
  .string()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, 'a host name such as www.example.com');

const newSite = z.strictObject({
  tenant_id: z.uuid(),
  name: z.string().trim().min(1).max(200),
  slug: siteSlug,
  default_locale: locale.optional().describe('Default: the first of locales, or en'),
  locales: z.array(locale).min(1).max(100).optional(),
  domain: domain.nullable().optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
  visibility: z
    .enum(['private', 'public'])
    .optional()
    .describe('Default private; public sites are served by the /public endpoints without a token'),
});

const siteChanges = newSite.omit({ tenant_id: true }).partial();

export const routes = [
  defineRoute({
    key: 'GET /sites/',
    description: 'The sites the caller can reach.',
    request: { query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(site) } },
    async handler({ query }, { db, actor }) {
      return { body: await db.connect((connection) => listSites(connection, actor, query)) };
    },
  }),

  defineRoute({
    key: 'POST /sites/',
    description: 'Creates a site in a tenant the caller administers. Slugs are unique across all tenants.',
    request: { body: newSite },
    responses: created('The site', site),
    async handler({ body }, { db, actor }) {
      return { status: 201, body: await db.connect((connection) => createSite(connection, actor, body)) };
    },
  }),

  defineRoute({
    key: 'GET /sites/by-tenant/{tenant_id}',
    description: 'The sites of one tenant that the caller can reach.',
    request: { params: uuidParams('tenant_id'), query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(site) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await db.connect((connection) => listSites(connection, actor, query, params.tenant_id)) };
    },
  }),

  defineRoute({
    key: 'GET /sites/{site_identifier}',
    request: { params: siteParams },
    responses: { 200: { description: 'The site', schema: site } },
    async handler({ params }, { db, actor }) {
      return { body: (await db.connect((connection) => loadSite(connection, actor, params.site_identifier))).site };
    },
  }),

  defineRoute({
    key: 'PATCH /sites/{site_identifier}',
    description: 'Tenant admins only. default_locale must stay one of locales.',
    request: { params: siteParams, body: siteChanges },
    responses: { 200: { description: 'The updated site', schema: site } },
    async handler({ params, body }, { db, actor }) {
      return { body: await db.connect((connection) => updateSite(connection, actor, params.site_identifier, body)) };
    },
  }),

  defineRoute({
    key: 'DELETE /sites/{site_identifier}',
    description: 'Tenant admins only. Deletes the site and everything it holds.',
    request: { params: siteParams },
    responses: noContent('Deleted'),
    async handler({ params }, { db, actor }) {
      await db.connect((connection) => deleteSite(connection, actor, params.site_identifier));
      return {};
    },
  }),
];
