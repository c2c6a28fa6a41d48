// Public Content: published content of public sites, without a token, in
// the locale asked (with the site's fallback chain), cacheable by browsers and
// CDNs (ETag and 304, Cache-Control, Surrogate-Key) and by this service
// (core/content/public-cache.ts).
import { z } from 'zod';
import { fallbackChain, localesSchema, siteLocalesView, wantedLocale } from '../../core/content/locales.ts';
import {
  listPublicElements,
  listPublicTypes,
  maxDepth,
  publicElementQuery,
  publicElementSchema,
  publicReferences,
  publicReferencesSchema,
  publicTypeSchema,
  readPublicElement,
} from '../../core/content/public.ts';
import {
  listPublicPages,
  navigationNodeSchema,
  publicNavigation,
  publicPageQuery,
  publicPageSchema,
  publicPageWithElementsSchema,
  readPublicPage,
} from '../../core/content/public-pages.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { cached, previewHeaders, publicAnswer } from './answers.ts';

const depth = z.coerce.number().int().min(0).max(maxDepth).default(1).describe('How deep references are resolved');

const elementParams = siteParams.extend({ element_id: z.uuid() });
const pageParams = siteParams.extend({ page_id: z.uuid() });

export const routes = [
  defineRoute({
    key: 'GET /public/{site_identifier}/locales',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description: 'The site’s locales, its default, and the fallback chain of each (e.g. de-CH → de → en).',
    request: { params: siteParams, headers: previewHeaders },
    responses: cached('The locales', localesSchema),
    async handler(_input, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, async () => ({
        body: siteLocalesView(site),
        tags: [`site:${site.id}`],
      }));
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/content-types',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description: 'The site’s content types, by api_id, with their fields.',
    request: { params: siteParams, headers: previewHeaders },
    responses: cached('The content types', z.object({ items: z.array(publicTypeSchema) })),
    async handler(_input, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) => listPublicTypes(read, site));
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/elements',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description:
      'Published elements in the locale asked, oldest first: each served in the best locale of the fallback chain, per item and per ' +
      'localized field (`served_locale` says which). `type` (api_id) and field filters as on the admin list, applied to the values served. ' +
      '`depth` resolves references and media.',
    request: { params: siteParams, query: publicElementQuery, headers: previewHeaders },
    responses: cached(
      'A page of elements',
      z.object({ items: z.array(publicElementSchema), next_cursor: z.string().nullable() }),
    ),
    async handler({ query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        listPublicElements(read, site, fallbackChain(site, query.locale), query),
      );
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/elements/{element_id}',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description: 'A published element in the locale asked, its references and media resolved to `depth`.',
    views: { kind: 'element', param: 'element_id' },
    request: { params: elementParams, query: z.object({ locale: wantedLocale, depth }), headers: previewHeaders },
    responses: cached('The element', publicElementSchema),
    async handler({ params, query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        readPublicElement(read, site, fallbackChain(site, query.locale), params.element_id, query.depth),
      );
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/elements/{element_id}/references',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description: 'The published pages that place the element and the published elements that refer to it.',
    request: { params: elementParams, headers: previewHeaders },
    responses: cached('What uses the element', publicReferencesSchema),
    async handler({ params }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) => publicReferences(read, site, params.element_id));
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/pages',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description:
      'Published pages, one per page and its translations, in the locale asked; `path` finds the page at a path (as served in that ' +
      'locale), `parent_id` lists children.',
    request: { params: siteParams, query: publicPageQuery, headers: previewHeaders },
    responses: cached(
      'A page of pages',
      z.object({ items: z.array(publicPageSchema), next_cursor: z.string().nullable() }),
    ),
    async handler({ query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        listPublicPages(read, site, fallbackChain(site, query.locale), query),
      );
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/pages/{page_id}',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description:
      'A published page (by its id or a translation’s) in the locale asked, with its published elements in that locale, their ' +
      'references resolved to `depth`.',
    views: { kind: 'page', param: 'page_id' },
    request: { params: pageParams, query: z.object({ locale: wantedLocale, depth }), headers: previewHeaders },
    responses: cached('The page with its elements', publicPageWithElementsSchema),
    async handler({ params, query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        readPublicPage(read, site, fallbackChain(site, query.locale), params.page_id, query.depth),
      );
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/navigation',
    access: 'public-site',
    reads: 'replica',
    publicCache: true,
    description: 'The published page tree with titles and paths in the locale asked, siblings by position.',
    request: { params: siteParams, query: z.object({ locale: wantedLocale }), headers: previewHeaders },
    responses: cached('The navigation', z.object({ items: z.array(navigationNodeSchema) })),
    async handler({ query }, { services, site, db }, { req }) {
      return publicAnswer({ services, site, db }, req, (read) =>
        publicNavigation(read, site, fallbackChain(site, query.locale)),
      );
    },
  }),
];
