// The media library of a site: find, read, describe, file, view, edit and
// delete items; upload; and the generation jobs (speech, images, AI edits,
// metadata) and the asynchronous media provider's signed webhook. Video
// generation is in ./video.ts.
import { z } from 'zod';
import { Problem } from '../../core/errors.ts';
import { viewQuery } from '../../core/media/files.ts';
import { imageRequest, imageSubmission } from '../../core/media/generation.ts';
import { planFor } from '../../core/providers/plan.ts';
import {
  countMedia,
  deleteMedia,
  findMedia,
  forChange,
  getMedia,
  listMedia,
  mediaChanges,
  mediaFile,
  mediaFilters,
  mediaListQuery,
  moveMedia,
  updateMedia,
} from '../../core/media/library.ts';
import { speechInput, speechSubmission } from '../../core/media/speech.ts';
import {
  mediaItemResponseSchema,
  signedMediaFile,
  signedViewQuery,
  signingKey,
  withFileUrl,
} from '../../core/media/urls.ts';
import {
  editOperations,
  editorAccessSchema,
  imageEditorAccess,
  listVersions,
  mediaVersionSchema,
  saveEdited,
} from '../../core/media/versions.ts';
import { deliveryReceiptSchema, deliverySchema, receiveDelivery, webhookQuery } from '../../core/media/webhook.ts';
import { pageSchema } from '../../core/pagination.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { fromZodError } from '../middleware/problems.ts';
import { locationHeader, problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { flag, noContent, siteParams } from '../schemas.ts';
import { receiveFile, receiveUpload, refuseFile, uploadForm } from './upload.ts';
import { fileLinks } from './urls.ts';
import { redirectSeconds, streamMedia, viewResponses } from './view.ts';

const mediaParams = siteParams.extend({ media_id: z.uuid() });
const forceQuery = z.object({ force: flag.describe('Delete even while something uses it') });

const inUse = problemResponse(
  'Something still uses the item (`references` lists what); pass force=true to delete anyway',
);
const tooLarge = problemResponse(
  'The file is larger than MEDIA_MAX_UPLOAD_BYTES (/problems/payload-too-large), or storing it would take the tenant past its ' +
    'plan’s storage quota (/problems/storage-quota-exceeded, with quota_bytes, used_bytes and incoming_bytes); nothing is kept',
);
const notAllowedType = problemResponse('The file’s type (read from its bytes) is not one that may be uploaded');

/** The item, under either of the specification's two paths. */
const readItem = (key: 'GET /{site_identifier}/media/{media_id}' | 'GET /{site_identifier}/media/by-id/{media_id}') =>
  defineRoute({
    key,
    access: { site: 'read', scope: 'media:read' },
    request: { params: mediaParams },
    responses: { 200: { description: 'The media item', schema: mediaItemResponseSchema } },
    async handler({ params }, context) {
      const { db, access } = context;
      const item = await getMedia(db, access, params.media_id);
      return { body: withFileUrl(fileLinks(context), access.site, item) };
    },
  });

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/media/',
    access: { site: 'read', scope: 'media:read' },
    description: 'Media items of the site, oldest first; filter by folder, kind, status, tag, text and creation date.',
    request: { params: siteParams, query: mediaListQuery },
    responses: { 200: { description: 'A page of media items', schema: pageSchema(mediaItemResponseSchema) } },
    async handler({ query }, context) {
      const { db, access } = context;
      const page = await listMedia(db, access, query);
      const links = fileLinks(context);
      return { body: { ...page, items: page.items.map((item) => withFileUrl(links, access.site, item)) } };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/',
    access: { site: 'write', scope: 'media:write' },
    description:
      'Uploads a file as multipart/form-data: the file in a part named `file`, and optionally `folder_id`, `alt`, `title`, `caption`, ' +
      '`tags` (comma-separated or a JSON array) and `locale`. The file streams to storage; its type is read from its bytes (415 outside ' +
      'JPEG, PNG, WebP, GIF, AVIF, MP4, WebM, QuickTime, MP3, WAV, Ogg, M4A and PDF; SVG is refused), and its size is limited by ' +
      'MEDIA_MAX_UPLOAD_BYTES and by the storage quota of the tenant’s plan (413). The item is `processing` until its job ' +
      '(`job_id`) has read its metadata and made its variants; `webhook` and `webhook_events` send that job’s events, as a ' +
      'job-creating request’s do.',
    request: { params: siteParams, rawBody: [{ contentType: 'multipart/form-data', schema: uploadForm }] },
    responses: {
      201: { description: 'The media item', schema: mediaItemResponseSchema, headers: { Location: locationHeader } },
      413: tooLarge,
      415: notAllowedType,
    },
    async handler({ params }, context, { req }) {
      const item = await receiveUpload(req, context);
      return {
        status: 201,
        body: withFileUrl(fileLinks(context), context.site, item),
        headers: { Location: `/${params.site_identifier}/media/${item.id}` },
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/count',
    access: { site: 'read', scope: 'media:read' },
    description: 'How many media items match the same filters as the list.',
    request: { params: siteParams, query: mediaFilters },
    responses: { 200: { description: 'The count', schema: z.object({ count: z.number().int() }) } },
    async handler({ query }, { db, access }) {
      return { body: await countMedia(db, access, query) };
    },
  }),

  readItem('GET /{site_identifier}/media/{media_id}'),
  readItem('GET /{site_identifier}/media/by-id/{media_id}'),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/view',
    access: { site: 'read', scope: 'media:read' },
    description:
      'The file itself, with ETag / Last-Modified (304 on If-None-Match or If-Modified-Since) and byte ranges (206; 416 outside the file) for seeking. ' +
      '`?variant=` serves one of the item’s variants; `?width=` (320, 640, 1280, 1920) and `format` (webp, avif) the responsive size that fits. ' +
      'With S3 and S3_REDIRECT_SECONDS, a 302 to a presigned URL instead. Needs a bearer token that reaches the site (media:read for service accounts); ' +
      'GET /public/{site}/media/{id}/view serves public sites without one.',
    request: { params: mediaParams, query: viewQuery },
    responses: viewResponses,
    async handler({ params, query }, { db, access, services }, { req, res }) {
      const file = await mediaFile(db, access, params.media_id, query);
      await streamMedia(req, res, services.storage, file, 'private, max-age=300', redirectSeconds(services.config));
      return {};
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/signed-view',
    access: 'public',
    description:
      'The file, as GET …/view serves it (variants, responsive sizes, ranges, 304), to whoever holds the signed URL a media item ' +
      'or a job gave as `url`: no token. The signature covers the site, the item and `expires`; `variant`, `width` and `format` ' +
      'may be added. A changed signature or expiry, or a URL past `expires`, is a 403; an item deleted since, a 404.',
    request: { params: mediaParams, query: signedViewQuery },
    responses: {
      ...viewResponses,
      403: problemResponse(
        'The signature does not match the URL, or the URL has expired (read the item again for a fresh one)',
      ),
    },
    async handler({ params, query }, { db, services }, { req, res }) {
      const file = await signedMediaFile(db, signingKey(services.config), {
        siteIdentifier: params.site_identifier,
        mediaId: params.media_id,
        query,
      });
      // Whoever holds the URL may keep the file until the URL expires; shared caches do not.
      await streamMedia(req, res, services.storage, file, 'private, max-age=300', redirectSeconds(services.config));
      return {};
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/image-editor-access',
    access: { site: 'read', scope: 'media:read' },
    description: 'Whether you may edit this image and why (reason), your role, and what an AI edit would cost you.',
    request: { params: mediaParams },
    responses: { 200: { description: 'The answer', schema: editorAccessSchema } },
    async handler({ params }, { db, access }) {
      return { body: await imageEditorAccess(db, access, params.media_id) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/{media_id}/image-versions',
    access: { site: 'read', scope: 'media:read' },
    description:
      'The versions of the item, newest first: the current one, then each it replaced, kept when an edit was saved.',
    request: { params: mediaParams },
    responses: { 200: { description: 'The versions', schema: z.object({ items: z.array(mediaVersionSchema) }) } },
    async handler({ params }, { db, access }) {
      return { body: await listVersions(db, access, params.media_id) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/save-edited-image',
    access: { site: 'write', scope: 'media:write' },
    description:
      'Saves a new version of an image: either JSON `{operations: [...]}` (crop, rotate, resize, flip, adjust — applied in order with sharp) ' +
      'or multipart/form-data with the new image in a part named `file`. The replaced version is kept (see image-versions); the item ' +
      'processes again for its variants. Authors edit only the media they added. The new file counts against the tenant’s ' +
      'storage quota, beside the version it replaces (413 when it does not fit).',
    request: {
      params: mediaParams,
      rawBody: [
        { contentType: 'application/json', schema: editOperations },
        { contentType: 'multipart/form-data', schema: uploadForm.pick({ file: true }) },
      ],
    },
    responses: {
      200: { description: 'The item, now at its new version', schema: mediaItemResponseSchema },
      409: problemResponse('The item is not an image, or its file is missing'),
      413: tooLarge,
      415: problemResponse('The body is neither JSON nor multipart, or the new file is not an image'),
    },
    async handler({ params }, context, { req }) {
      const { access, deps, db } = context;
      const links = fileLinks(context);
      const save = async (edit: Parameters<typeof saveEdited>[1]['edit']) =>
        withFileUrl(links, access.site, await saveEdited(deps, { access, id: params.media_id, edit }));
      if (req.is('application/json')) {
        const body = editOperations.safeParse(req.body);
        if (!body.success) throw fromZodError(body.error, 'body');
        return { body: await save({ kind: 'operations', operations: body.data.operations }) };
      }
      // A file: the item must be changeable by the caller before anything is stored.
      await forChange(db, access, params.media_id);
      const file = await receiveFile(req, context);
      if (Object.keys(file.fields).length > 0) {
        throw await refuseFile(
          context,
          file.key,
          new Problem(422, 'Send only the file.', { errors: [{ path: 'body', message: 'no other parts' }] }),
        );
      }
      return { body: await save({ kind: 'file', key: file.key, mimeType: file.mimeType, size: file.size }) };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/media/{media_id}',
    access: { site: 'write', scope: 'media:write' },
    description:
      'Changes the alt text, title, caption, tags (lower-cased, without repeats) or focal point. Authors change only the media they added.',
    request: { params: mediaParams, body: mediaChanges },
    responses: { 200: { description: 'The media item', schema: mediaItemResponseSchema } },
    async handler({ params, body }, context) {
      const { db, access } = context;
      const item = await updateMedia(db, access, params.media_id, body);
      return { body: withFileUrl(fileLinks(context), access.site, item) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/move',
    access: { site: 'write', scope: 'media:write' },
    description: 'Files the item into a folder of the site, or into none with null.',
    request: { params: mediaParams, body: z.strictObject({ folder_id: z.uuid().nullable() }) },
    responses: { 200: { description: 'The media item', schema: mediaItemResponseSchema } },
    async handler({ params, body }, context) {
      const { db, access } = context;
      const item = await moveMedia(db, access, params.media_id, body.folder_id);
      return { body: withFileUrl(fileLinks(context), access.site, item) };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/media/{media_id}',
    access: { site: 'write', scope: 'media:write' },
    description:
      'Deletes the item, its file, variants and earlier versions. While something uses it (a job not yet finished that will read it) the answer is 409 ' +
      'with the `references`, unless `force=true`.',
    request: { params: mediaParams, query: forceQuery },
    responses: { ...noContent('Deleted'), 409: inUse },
    async handler({ params, query }, { deps, access }) {
      await deleteMedia(deps, { access, id: params.media_id, force: query.force });
      return {};
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/tts',
    access: { site: 'write', scope: ['jobs:write', 'media:write'] },
    idempotent: true,
    description:
      'Speaks the text into an audio file (mp3, wav or ogg) as a job: 202 with the job and its Location; when it succeeds, `media_id` is the audio’s media item. ' +
      'Credits for the estimated seconds are reserved now (402 when they are not available); the seconds actually made are debited. ' +
      'The providers SPEECH_PROVIDERS names are tried in turn (OpenAI, ElevenLabs, the local espeak-ng, whose audio is a ' +
      'placeholder); `model` names one the operator allows. Honours Idempotency-Key and `Prefer: wait=N` (then 200 if it finished).',
    request: { params: siteParams, body: speechInput, headers: preferHeader },
    responses: jobResponses,
    async handler({ body }, context, { req }) {
      return submitAndAnswer(context, req.get('prefer'), speechSubmission(context.services.config, body));
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/generate',
    access: { site: 'write', scope: ['jobs:write', 'media:write'] },
    idempotent: true,
    description:
      'Generates images from a prompt as a job: 202 with the job; when it succeeds, `media_ids` are the new images (in `folder_id` if given). ' +
      'Credits for `count` images are reserved now (402 when not available) and debited per image made. The providers IMAGE_PROVIDERS ' +
      'names are tried in turn (one answering 429, 5xx or not at all passes the job on); the local renderer draws deterministic ' +
      'abstract placeholders (the same prompt and seed, the same images; `output.placeholder` true). `model` names one of the ' +
      'models the operator allows, and `size` must be one it makes (a 422 names them). ' +
      'Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: siteParams, body: imageRequest, headers: preferHeader },
    responses: jobResponses,
    async handler({ body }, context, { req }) {
      const submission = await imageSubmission(context.db, context.services.config, context.site.id, body);
      return submitAndAnswer(context, req.get('prefer'), submission);
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/edit-with-ai',
    access: { site: 'write', scope: ['jobs:write', 'media:write'] },
    idempotent: true,
    description:
      'Edits the image by instruction, as a job (one image_edit unit); the result becomes the item’s new version (the old one is kept). ' +
      'Locally: background removal (by colour, or by `mask_media_id`: an image whose lightness is kept), upscaling (2–4x) and style ' +
      'filters (black and white, sepia, blur, sharpen, invert), chosen by words in the instruction; anything else fails with ' +
      'unsupported_instruction. A vendor named in IMAGE_EDIT_PROVIDERS (OpenAI’s /images/edits and compatible ones) follows ' +
      'any instruction; the mask then marks what to keep (light) and what to edit (dark).',
    request: {
      params: mediaParams,
      body: z.strictObject({ instruction: z.string().trim().min(1).max(1000), mask_media_id: z.uuid().optional() }),
      headers: preferHeader,
    },
    responses: { ...jobResponses, 409: problemResponse('The item is not an image') },
    async handler({ params, body }, context, { req }) {
      const { db, access } = context;
      const item = await forChange(db, access, params.media_id);
      if (item.kind !== 'image') throw new Problem(409, `Only images can be edited; this item is ${item.kind}.`);
      if (body.mask_media_id) {
        const mask = await findMedia(db, access.site.id, body.mask_media_id).catch(() => null);
        if (mask?.kind !== 'image') {
          throw new Problem(422, 'The mask is not an image of this site.', {
            errors: [{ path: 'body.mask_media_id', message: 'no such image in this site' }],
          });
        }
      }
      const providers = planFor(context.services.config.providers, 'image_edit');
      return submitAndAnswer(context, req.get('prefer'), {
        kind: 'image_edit',
        input: {
          media_id: params.media_id,
          instruction: body.instruction,
          ...(body.mask_media_id ? { mask_media_id: body.mask_media_id } : {}),
          providers,
        },
        estimatedUnits: 1,
        plan: { calls: providers, estimate: { item: 1 } },
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/{media_id}/generate-metadata',
    access: { site: 'write', scope: ['jobs:write', 'media:write'] },
    idempotent: true,
    description:
      'Writes alt text, a caption and tags for the item, as a job (one media_metadata unit). Fills only empty fields unless `overwrite` is true. ' +
      'Locally they come from technical metadata and the file name, and the job’s output says so; a language model named in TEXT_PROVIDERS looks at the picture.',
    request: {
      params: mediaParams,
      body: z.strictObject({ overwrite: z.boolean().default(false) }).default({ overwrite: false }),
      headers: preferHeader,
    },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      await forChange(context.db, context.access, params.media_id);
      return submitAndAnswer(context, req.get('prefer'), {
        kind: 'media_metadata',
        input: { media_id: params.media_id, overwrite: body.overwrite },
        estimatedUnits: 1,
      });
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/webhook/mediaprovider',
    access: 'public',
    // Only failed signatures count against the sender: a busy provider is never turned away.
    rateLimit: 'signature-failures',
    description:
      'Where the vendors that take work and call back deliver it: the URL the platform gives them names the vendor ' +
      '(`provider`) and the job. Each is verified by its own scheme before the body is read: Replicate signs the ' +
      'Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of ' +
      'id.timestamp.body>` with the account’s signing secret, 5 minutes’ tolerance); fal with ED25519 over ' +
      '`request_id, user_id, timestamp, sha256(body)` (`X-Fal-Webhook-*` headers), verified against its published keys. ' +
      'A repeated event answers 200 and changes nothing; progress and late events are acknowledged and ignored; a ' +
      'failure fails the job and releases its credits here; a success is finished by a worker.',
    request: {
      params: siteParams,
      query: webhookQuery,
      rawBody: [{ contentType: 'application/json', schema: deliverySchema, required: true }],
      headers: z.object({
        'webhook-id': z.string().optional().describe('Replicate: the event’s id; a repeat is answered 200 and ignored'),
        'webhook-timestamp': z.string().optional().describe('Replicate: Unix seconds when it was signed'),
        'webhook-signature': z
          .string()
          .optional()
          .describe('Replicate: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`'),
        'x-fal-webhook-request-id': z.string().optional().describe('fal: the request the delivery is for'),
        'x-fal-webhook-user-id': z.string().optional().describe('fal: the account it was made by'),
        'x-fal-webhook-timestamp': z.string().optional().describe('fal: Unix seconds when it was signed'),
        'x-fal-webhook-signature': z.string().optional().describe('fal: the hex ED25519 signature'),
      }),
    },
    responses: {
      200: { description: 'Received', schema: deliveryReceiptSchema },
      401: problemResponse('The signature is missing, wrong or too old'),
      404: problemResponse('No job of this site waits for that work, or the vendor is not configured here'),
      409: problemResponse('The job is not ready for a result yet; retry after Retry-After seconds', {
        'Retry-After': retryAfterHeader,
      }),
      503: problemResponse('The vendor’s signing secret or keys could not be read; deliver again shortly'),
    },
    async handler({ params, query }, { db, services, log }, { req }) {
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
      );
      const raw = Buffer.isBuffer(req.body) ? req.body : undefined;
      const deps = { db, config: services.config, logger: log };
      return { body: await receiveDelivery(deps, params.site_identifier, query, headers, raw) };
    },
  }),
];
