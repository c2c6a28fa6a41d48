// Preview tokens of a site (beyond the specification; see api/extensions.tsv):
// what a front end sends as `Preview-Token` to the public delivery endpoints
// to read drafts there. Made, listed and revoked by those who write the
// site's content; the domain is core/content/preview-tokens.ts.
import { z } from 'zod';
import {
  createPreviewToken,
  listPreviewTokens,
  longestPreviewSeconds,
  previewTokenSchema,
  previewTokenWithSecretSchema,
  revokePreviewToken,
} from '../../core/content/preview-tokens.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { noStore } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, siteParams } from '../schemas.ts';

const writers = { site: 'write', scope: 'content:write' } as const;

const newToken = z
  .strictObject({
    name: z.string().trim().min(1).max(200).describe('Who or what it is for, e.g. the staging front end'),
    expires_in_seconds: z
      .number()
      .int()
      .min(60)
      .max(longestPreviewSeconds)
      .default(3600)
      .describe('How long it works, from now: a minute to a week (default an hour)'),
  })
  .meta({ examples: [{ name: 'Staging front end', expires_in_seconds: 86400 }] });

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/preview-tokens',
    access: writers,
    description:
      'Makes a preview token for the site; the answer carries it, shown this once. Sent as the `Preview-Token` header of ' +
      'the public delivery endpoints (/public/{site_identifier}/…), it shows drafts as if published, uncached, until it ' +
      'expires or is revoked. Anyone who may write the site’s content.',
    request: { params: siteParams, body: newToken },
    responses: {
      201: { description: 'The token, with its secret', schema: previewTokenWithSecretSchema, headers: noStore },
    },
    async handler({ body }, { db, access }) {
      return {
        status: 201,
        headers: { 'Cache-Control': 'no-store' },
        body: await createPreviewToken(db, access, body),
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/preview-tokens',
    access: writers,
    description: 'The site’s preview tokens that have not expired, without their secrets.',
    request: { params: siteParams, query: pageQuery },
    responses: { 200: { description: 'A page of tokens', schema: pageSchema(previewTokenSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listPreviewTokens(db, access, query) };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/preview-tokens/{token_id}',
    access: writers,
    description: 'Revokes the token: the next public read that sends it is refused (401).',
    request: { params: siteParams.extend({ token_id: z.uuid() }) },
    responses: noContent('Revoked'),
    async handler({ params }, { db, access }) {
      await revokePreviewToken(db, access, params.token_id);
      return {};
    },
  }),
];
