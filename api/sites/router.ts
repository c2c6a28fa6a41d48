// Sites. Tenant admins create and change their tenant's sites; everyone with
// access reads them. {site_identifier} is the site's id or slug.
import { z } from 'zod';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import {
  createSite,
  deleteSite,
  listSites,
  locale,
  siteSchema,
  siteSlug,
  updateSite,
} from '../../core/tenancy/sites.ts';
import { locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, siteParams, uuidParams } from '../schemas.ts';

const domain = z
  .string()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/,
    'a host name such as www.example.com',
  );

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
    access: 'signed-in',
    request: { query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(siteSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listSites(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /sites/',
    description: 'Creates a site in a tenant the caller administers. Slugs are unique across all tenants.',
    access: 'signed-in',
    request: { body: newSite },
    responses: {
      201: { description: 'The site', schema: siteSchema, headers: { Location: locationHeader } },
      404: problemResponse('No such tenant, or not one you administer'),
      409: problemResponse('The slug or the domain is taken'),
    },
    async handler({ body }, { db, actor }) {
      const created = await createSite(db, actor, body);
      return { status: 201, body: created, headers: { Location: `/sites/${created.slug}` } };
    },
  }),

  defineRoute({
    key: 'GET /sites/by-tenant/{tenant_id}',
    description: 'The sites of one tenant that the caller can reach.',
    access: 'signed-in',
    request: { params: uuidParams('tenant_id'), query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(siteSchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listSites(db, actor, query, params.tenant_id) };
    },
  }),

  defineRoute({
    key: 'GET /sites/{site_identifier}',
    access: { site: 'read' },
    request: { params: siteParams },
    responses: { 200: { description: 'The site', schema: siteSchema } },
    async handler(_input, { site }) {
      return { body: site };
    },
  }),

  defineRoute({
    key: 'PATCH /sites/{site_identifier}',
    description: 'Tenant admins only. default_locale must stay one of locales.',
    access: { site: 'admin' },
    request: { params: siteParams, body: siteChanges },
    responses: {
      200: { description: 'The updated site', schema: siteSchema },
      409: problemResponse('The slug or the domain is taken'),
    },
    async handler({ body }, { db, site }) {
      return { body: await updateSite(db, site, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /sites/{site_identifier}',
    description: 'Tenant admins only. Deletes the site and everything it holds.',
    access: { site: 'admin' },
    request: { params: siteParams },
    responses: noContent('Deleted'),
    async handler(_input, { db, site }) {
      await deleteSite(db, site);
      return {};
    },
  }),
];
