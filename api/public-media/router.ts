// The public media endpoints: metadata and the file of a ready item of a
// public site, without a token, cacheable by browsers and shared caches.
import { z } from 'zod';
import { findPublicMedia, publicMediaFile, publicMediaItem, toPublic } from '../../core/media/public.ts';
import { viewQuery } from '../../core/media/files.ts';
import { createStorage } from '../../core/storage/index.ts';
import { redirectSeconds, streamMedia, viewResponses } from '../media/view.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

const params = siteParams.extend({ media_id: z.uuid() });

export const routes = [
  defineRoute({
    key: 'GET /public/{site_identifier}/media/{media_id}',
    description:
      'A ready media item of a public site (visibility public), without its owner, job or folder: 404 for anything not public.',
    request: { params },
    responses: { 200: { description: 'The public media item', schema: publicMediaItem } },
    async handler({ params }, { services }) {
      const item = await services.db.connect((connection) =>
        findPublicMedia(connection, params.site_identifier, params.media_id),
      );
      return { body: toPublic(item), headers: { 'Cache-Control': 'public, max-age=60' } };
    },
  }),

  defineRoute({
    key: 'GET /public/{site_identifier}/media/{media_id}/view',
    description:
      'The file of a ready media item of a public site, as GET /{site}/media/{id}/view serves it (variants, responsive sizes, ranges, 304), ' +
      'cacheable by shared caches for an hour.',
    request: { params, query: viewQuery },
    responses: viewResponses,
    async handler({ params, query }, { services }, { req, res }) {
      const file = await services.db.connect((connection) =>
        publicMediaFile(connection, params.site_identifier, params.media_id, query),
      );
      await streamMedia(
        req,
        res,
        createStorage(services.config),
        file,
        'public, max-age=3600',
        redirectSeconds(services.config),
      );
      return {};
    },
  }),
];
