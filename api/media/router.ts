// Media endpoints built so far: the library (find, read, describe, file,
// delete), text to speech (a job) and the asynchronous media provider's signed
// webhook. Upload, view and generation come with the rest of the media issue.
import { z } from 'zod';
import { Problem } from '../../core/errors.ts';
import { mediaItem } from '../../core/media/items.ts';
import { authenticate } from '../../core/identity/authenticate.ts';
import {
  countMedia,
  deleteMedia,
  forChange as forChangeOf,
  getMedia,
  listMedia,
  mediaChanges,
  mediaFile,
  mediaFilters,
  mediaListQuery,
  moveMedia,
  updateMedia,
} from '../../core/media/library.ts';
import { pageSchema } from '../../core/pagination.ts';
import { createStorage } from '../../core/storage/index.ts';
import { estimateSeconds, speechInput } from '../../core/media/speech.ts';
import { imageRequest } from '../../core/media/generation.ts';
import { requireFolder } from '../../core/media/folders.ts';
import { deliveryReceipt, receiveDelivery } from '../../core/media/webhook.ts';
import { jobResponses, submitAndAnswer } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { receiveFile, receiveUpload, refuseFile } from './upload.ts';
import {
  editOperations,
  editorAccess,
  imageEditorAccess,
  listVersions,
  mediaVersion,
  saveEdited,
} from '../../core/media/versions.ts';
import { fromZodError } from '../middleware/problems.ts';
import { redirectSeconds, streamMedia, viewResponses } from './view.ts';
import { viewQuery } from '../../core/media/files.ts';
import { flag, noContent, siteParams } from '../schemas.ts';

const mediaParams = siteParams.extend({ media_id: z.uuid() });
const forceQuery = z.object({ force: flag.describe('Delete even while something uses it') });

const readItem = defineRoute({
  key: 'GET /{site_identifier}/media/{media_id}',
  request: { params: mediaParams },
  responses: { 200: { description: 'The media item', schema: mediaItem } },
  async handler({ params }, { db, actor }) {
    return {
      body: await db.connect((connection) => getMedia(connection, actor, params.site_identifier, params.media_id)),
    };
  },
});

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/media/',
    description: 'Media items of the site, oldest first; filter by folder, kind, status, tag, text and creation date.',
    request: { params: siteParams, query: mediaListQuery },
    responses: { 200: { description: 'A page of media items', schema: pageSchema(mediaItem) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await db.connect((connection) => listMedia(connection, actor, params.site_identifier, query)) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/',
    description:
      'Uploads a file as multipart/form-data: the file in a part named `file`, and optionally `folder_id`, `alt`, `title`, `caption`, ' +
      '`tags` (comma-separated or a JSON array) and `locale`. The file streams to storage; its type is read from its bytes (415 outside ' +
      'JPEG, PNG, WebP, GIF, AVIF, MP4, WebM, QuickTime, MP3, WAV, Ogg, M4A and PDF; SVG is refused), and its size is limited by ' +
      'MEDIA_MAX_UPLOAD_BYTES (413).',
    request: { params: siteParams },
    responses: { 201: { description: 'The media item', schema: mediaItem } },
    async handler({ params }, context, { req }) {
      const item = await receiveUpload(req, context, params.site_identifier);
      return { status: 201, body: item, headers: { Location: `/${params.site_identifier}/media/${item.id}` } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/count',
    description: 'How many media items match the same filters as the list.',
    request: { params: siteParams, query: mediaFilters },
    responses: { 200: { description: 'The count', schema: z.object({ count: z.number().int() }) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await db.connect((connection) => countMedia(connection, actor, params.site_identifier, query)) };
    },
  }),

  readItem,
  // The same item under the specification's second path.
  { ...readItem, key: 'GET /{site_identifier}/media/by-id/{media_id}' as const },

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/view',
    auth: 'custom',
    description:
      'The file itself, with ETag / Last-Modified (304 on If-None-Match or If-Modified-Since) and byte ranges (206; 416 outside the file) for seeking. ' +
      '`?variant=` serves one of the item’s variants; `?width=` (320, 640, 1280, 1920) and `format` (webp, avif) the responsive size that fits. ' +
      'With S3 and S3_REDIRECT_SECONDS, a 302 to a presigned URL instead. Needs a bearer token that reaches the site (media:read for service accounts); ' +
      'GET /public/{site}/media/{id}/view serves public sites without one.',
    request: { params: mediaParams, query: viewQuery },
    responses: viewResponses,
    async handler({ params, query }, { services }, { req, res }) {
      const { actor } = await authenticate(services.db, services.config, req.get('authorization'));
      const file = await services.db.connect((connection) =>
        mediaFile(connection, actor, params.site_identifier, params.media_id, query),
      );
      await streamMedia(
        req,
        res,
        createStorage(services.config),
        file,
        'private, max-age=300',
        redirectSeconds(services.config),
      );
      return {};
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/image-editor-access',
    description: 'Whether you may edit this image and why (reason), your role, and what an AI edit would cost you.',
    request: { params: mediaParams },
    responses: { 200: { description: 'The answer', schema: editorAccess } },
    async handler({ params }, { db, actor }) {
      return {
        body: await db.connect((connection) =>
          imageEditorAccess(connection, actor, params.site_identifier, params.media_id),
        ),
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/image-versions',
    description:
      'The versions of the item, newest first: the current one, then each it replaced, kept when an edit was saved.',
    request: { params: mediaParams },
    responses: { 200: { description: 'The versions', schema: z.object({ items: z.array(mediaVersion) }) } },
    async handler({ params }, { db, actor }) {
      return {
        body: await db.connect((connection) =>
          listVersions(connection, actor, params.site_identifier, params.media_id),
        ),
      };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/save-edited-image',
    description:
      'Saves a new version of an image: either JSON `{operations: [...]}` (crop, rotate, resize, flip, adjust — applied in order with sharp) ' +
      'or multipart/form-data with the new image in a part named `file`. The replaced version is kept (see image-versions); the item ' +
      'processes again for its variants. Authors edit only the media they added.',
    request: { params: mediaParams },
    responses: { 200: { description: 'The item, now at its new version', schema: mediaItem } },
    async handler({ params }, context, { req }) {
      const { services, actor } = context;
      const storage = createStorage(services.config);
      const save = (edit: Parameters<typeof saveEdited>[7]) =>
        saveEdited(
          services.db,
          services.config,
          storage,
          services.logger,
          actor,
          params.site_identifier,
          params.media_id,
          edit,
        );
      if (req.is('application/json')) {
        const body = editOperations.safeParse(req.body);
        if (!body.success) throw fromZodError(body.error, 'body');
        return { body: await save({ kind: 'operations', operations: body.data.operations }) };
      }
      // A file: the item must be changeable by the caller before anything is stored.
      const { site } = await services.db.connect((connection) =>
        forChangeOf(connection, actor, params.site_identifier, params.media_id),
      );
      const file = await receiveFile(req, context, site, storage);
      if (Object.keys(file.fields).length > 0) {
        throw await refuseFile(
          context,
          storage,
          file.key,
          new Problem(422, 'Send only the file.', { errors: [{ path: 'body', message: 'no other parts' }] }),
        );
      }
      return { body: await save({ kind: 'file', key: file.key, mimeType: file.mimeType, size: file.size }) };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/media/{media_id}',
    description:
      'Changes the alt text, title, caption, tags (lower-cased, without repeats) or focal point. Authors change only the media they added.',
    request: { params: mediaParams, body: mediaChanges },
    responses: { 200: { description: 'The media item', schema: mediaItem } },
    async handler({ params, body }, { services, actor }) {
      return { body: await updateMedia(services.db, actor, params.site_identifier, params.media_id, body) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/move',
    description: 'Files the item into a folder of the site, or into none with null.',
    request: { params: mediaParams, body: z.strictObject({ folder_id: z.uuid().nullable() }) },
    responses: { 200: { description: 'The media item', schema: mediaItem } },
    async handler({ params, body }, { services, actor }) {
      return { body: await moveMedia(services.db, actor, params.site_identifier, params.media_id, body.folder_id) };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/media/{media_id}',
    description:
      'Deletes the item, its file, variants and earlier versions. While something uses it (a job not yet finished that will read it) the answer is 409 ' +
      'with the `references`, unless `force=true`.',
    request: { params: mediaParams, query: forceQuery },
    responses: noContent('Deleted'),
    async handler({ params, query }, { services, actor }) {
      await deleteMedia(
        services.db,
        createStorage(services.config),
        services.logger,
        actor,
        params.site_identifier,
        params.media_id,
        query.force,
      );
      return {};
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/tts',
    idempotent: true,
    description:
      'Speaks the text into an audio file (mp3, wav or ogg) as a job: 202 with the job and its Location; when it succeeds, `media_id` is the audio’s media item. ' +
      'Credits for the estimated seconds are reserved now (402 when they are not available); the seconds actually made are debited. ' +
      'Honours Idempotency-Key and `Prefer: wait=N` (then 200 if it finished).',
    request: { params: siteParams, body: speechInput },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const limit = context.services.config.speech.maxCharacters;
      if (body.text.length > limit) {
        throw new Problem(422, `The text is longer than ${limit} characters.`, {
          errors: [{ path: 'body.text', message: `at most ${limit} characters` }],
        });
      }
      return submitAndAnswer(context, req.get('prefer'), params.site_identifier, {
        kind: 'speech',
        input: body,
        estimatedUnits: estimateSeconds(body),
        scope: 'media:write',
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/generate',
    idempotent: true,
    description:
      'Generates images from a prompt as a job: 202 with the job; when it succeeds, `media_ids` are the new images (in `folder_id` if given). ' +
      'Credits for `count` images are reserved now (402 when not available) and debited per image made. The local provider draws ' +
      'deterministic abstract images (the same prompt and seed, the same images); IMAGE_PROVIDER=openai calls an OpenAI-compatible endpoint. ' +
      'Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: siteParams, body: imageRequest },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const { services, actor } = context;
      if (body.folder_id)
        await services.db.connect((connection) =>
          requireFolder(connection, actor, params.site_identifier, body.folder_id!),
        );
      return submitAndAnswer(context, req.get('prefer'), params.site_identifier, {
        kind: 'image',
        input: body,
        estimatedUnits: body.count,
        scope: 'media:write',
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/edit-with-ai',
    idempotent: true,
    description:
      'Edits the image by instruction, as a job (one image_edit unit); the result becomes the item’s new version (the old one is kept). ' +
      'Locally: background removal (by colour, or by `mask_media_id`: an image whose lightness is kept), upscaling (2–4x) and style ' +
      'filters (black and white, sepia, blur, sharpen, invert), chosen by words in the instruction; anything else fails with ' +
      'unsupported_instruction. IMAGE_PROVIDER=openai sends it to an OpenAI-compatible /images/edits.',
    request: {
      params: mediaParams,
      body: z.strictObject({ instruction: z.string().trim().min(1).max(1000), mask_media_id: z.uuid().optional() }),
    },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const { services, actor } = context;
      await services.db.connect(async (connection) => {
        const { item, site } = await forChangeOf(connection, actor, params.site_identifier, params.media_id);
        if (item.kind !== 'image') throw new Problem(409, `Only images can be edited; this item is ${item.kind}.`);
        if (body.mask_media_id) {
          const mask = await getMedia(connection, actor, site.id, body.mask_media_id).catch(() => null);
          if (mask?.kind !== 'image')
            throw new Problem(422, 'The mask is not an image of this site.', {
              errors: [{ path: 'body.mask_media_id', message: 'no such image in this site' }],
            });
        }
      });
      return submitAndAnswer(context, req.get('prefer'), params.site_identifier, {
        kind: 'image_edit',
        input: {
          media_id: params.media_id,
          instruction: body.instruction,
          ...(body.mask_media_id ? { mask_media_id: body.mask_media_id } : {}),
        },
        estimatedUnits: 1,
        scope: 'media:write',
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/generate-metadata',
    idempotent: true,
    description:
      'Writes alt text, a caption and tags for the item, as a job (one media_metadata unit). Fills only empty fields unless `overwrite` is true. ' +
      'Locally they come from technical metadata and the file name, and the job’s output says so; TEXT_PROVIDER=openai asks a vision-capable model.',
    request: {
      params: mediaParams,
      body: z.strictObject({ overwrite: z.boolean().default(false) }).default({ overwrite: false }),
    },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const { services, actor } = context;
      await services.db.connect((connection) =>
        forChangeOf(connection, actor, params.site_identifier, params.media_id),
      );
      return submitAndAnswer(context, req.get('prefer'), params.site_identifier, {
        kind: 'media_metadata',
        input: { media_id: params.media_id, overwrite: body.overwrite },
        estimatedUnits: 1,
        scope: 'media:write',
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/webhook/mediaprovider',
    description:
      'Where the asynchronous media provider delivers a result. Signed with MEDIA_PROVIDER_WEBHOOK_SECRET: `webhook-id`, `webhook-timestamp` (Unix seconds, within 5 minutes) and ' +
      '`webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`. The body is a MediaProviderDelivery `{job_ref, status, output?, error?}`; ' +
      'it is read only after the signature checks out. A repeated webhook-id answers 200 and changes nothing.',
    request: { params: siteParams },
    responses: { 200: { description: 'Received', schema: deliveryReceipt } },
    async handler({ params }, { services }, { req }) {
      const headers = {
        id: req.get('webhook-id'),
        timestamp: req.get('webhook-timestamp'),
        signature: req.get('webhook-signature'),
      };
      const raw = Buffer.isBuffer(req.body) ? req.body : undefined;
      return { body: await receiveDelivery(services.db, services.config, params.site_identifier, headers, raw) };
    },
  }),
];
