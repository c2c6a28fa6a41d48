// The public media endpoints: metadata and the file of a ready item of a
// public site, without a token, cacheable by browsers and shared caches.
import { z } from 'zod';
import { viewQuery } from '../../core/media/files.ts';
import { findPublicMedia, publicMediaFile, publicMediaItemSchema, toPublic } from '../../core/media/public.ts';
import { redirectSeconds, streamMedia, viewResponses } from '../media/view.ts';
import { cacheControlHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

const params = siteParams.extend({ media_id: z.uuid() });

export const routes = [
  defineRoute({
    key: 'GET /public/{site_identifier}/media/{media_id}',
    access: 'public-site',
    reads: 'replica',
    description:
      'A ready media item of a public site (visibility public), without its owner, job or folder: 404 for anything not public.',
    request: { params },
    responses: {
      200: {
        description: 'The public media item',
        schema: publicMediaItemSchema,
        headers: { 'Cache-Control': cacheControlHeader },
      },
    },
    async handler({ params }, { db, site }) {
      const item = await findPublicMedia(db, site, params.media_id);
      return { body: toPublic(item), headers: { 'Cache-Control': 'public, max-age=60' } };
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/media/{media_id}/view',
    access: 'public-site',
    reads: 'replica',
    views: { kind: 'media', param: 'media_id' },
    description:
      'The file of a ready media item of a public site, as GET /{site}/media/{id}/view serves it (variants, responsive sizes, ranges, 304), ' +
      'cacheable by shared caches for an hour.',
    request: { params, query: viewQuery },
    responses: viewResponses,
    async handler({ params, query }, { db, site, services }, { req, res }) {
      const file = await publicMediaFile(db, site, params.media_id, query);
      await streamMedia(req, res, services.storage, file, 'public, max-age=3600', redirectSeconds(services.config));
      return {};
    },
  }),
];
