// Reads a multipart/form-data upload as it arrives: the `file` part streams
// to storage (never whole in memory), the other parts are the item's fields.
// Too large, or past the tenant's storage quota → 413 and nothing kept; a type
// outside the allowlist → 415.
import busboy from 'busboy';
import { z } from 'zod';
import type { Request } from 'express';
import { checkStorageQuota } from '../../core/billing/storage.ts';
import { Problem } from '../../core/errors.ts';
import { recordUpload, storeUpload, uploadFields } from '../../core/media/upload.ts';
import type { MediaItem } from '../../core/media/items.ts';
import { removeFiles } from '../../core/storage/index.ts';
import type { SiteNeed } from '../../core/tenancy/site-access.ts';
import { unstorableFields } from '../../core/storable.ts';
import { requestedWebhook, webhookFormFields } from '../../core/webhooks/request.ts';
import { fromZodError } from '../middleware/problems.ts';
import type { ContextFor } from '../route.ts';

type SiteContext = ContextFor<SiteNeed>;

/** A file part, as the OpenAPI document shows it (generated clients send a Blob). */
export const binaryFile = z.string().meta({ format: 'binary' });

/** The multipart form of an upload, for the OpenAPI document: the parser reads it as it streams. */
export const uploadForm = z.object({
  file: binaryFile.describe('The file; its type is read from its bytes'),
  folder_id: z.uuid().optional(),
  alt: z.string().max(1000).optional(),
  title: z.string().max(300).optional(),
  caption: z.string().max(2000).optional(),
  tags: z.string().max(3000).optional().describe('Comma-separated, or a JSON array'),
  locale: z.string().optional().describe('A BCP 47 tag such as en or pt-BR'),
  ...webhookFormFields.shape,
});

/** The fields beside the file: the item's, and the webhook for its processing job, as a job-creating request takes it. */
const uploadWithWebhook = uploadFields.safeExtend(webhookFormFields.shape);

type Stored = Awaited<ReturnType<typeof storeUpload>>;

export type ReceivedFile = Stored & { fileName: string; fields: Record<string, string> };

/**
 * Reads a multipart body whose one file part, named file, streams to storage
 * for the site. Answers the stored file and the other parts; anything wrong
 * (too large, not exactly one file) is refused with the stored file removed.
 */
export async function receiveFile(
  req: Request,
  context: SiteContext,
  options: { maxBytes?: number } = {},
): Promise<ReceivedFile> {
  const { site } = context;
  if (!req.is('multipart/form-data')) {
    throw new Problem(415, 'Send the file as multipart/form-data, in a part named file.', {
      headers: { 'Accept-Post': 'multipart/form-data' },
    });
  }
  // A tenant already over its quota (its plan was lowered) is refused before
  // any byte is stored; the file's own size is checked once it is known, by
  // whoever records it.
  await checkStorageQuota(context.db, site.tenant_id, 0);
  const limit = options.maxBytes ?? context.services.config.media.maxUploadBytes;
  const parsed = await new Promise<{
    stored: Promise<Stored> | undefined;
    fields: Record<string, string>;
    fileName: string;
    truncated: boolean;
    extra: boolean;
  }>((resolve, reject) => {
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        limits: { fileSize: limit, files: 1, fields: 20, fieldSize: 16 * 1024, parts: 40 },
      });
    } catch (error) {
      reject(new Problem(400, `The multipart body cannot be read: ${(error as Error).message}.`));
      return;
    }
    const fields: Record<string, string> = {};
    let stored: Promise<Stored> | undefined;
    let fileName = '';
    let truncated = false;
    let extra = false;
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (name, stream, info) => {
      if (name !== 'file' || stored) {
        extra = true;
        stream.resume();
        return;
      }
      fileName = info.filename ?? '';
      stream.on('limit', () => {
        truncated = true;
      });
      stored = storeUpload(context.services.storage, site, stream);
      // A refused type leaves the rest of the part unread: drain it so the form can finish.
      stored.catch(() => stream.resume());
    });
    form.on('filesLimit', () => {
      extra = true;
    });
    form.on('error', (error: Error) =>
      reject(new Problem(400, `The multipart body cannot be read: ${error.message}.`)),
    );
    form.on('close', () => resolve({ stored, fields, fileName, truncated, extra }));
    // The endpoint's timeout, or a client that leaves, ends the upload.
    context.signal.addEventListener('abort', () => req.unpipe(form), { once: true });
    req.pipe(form);
  });
  if (!parsed.stored)
    throw new Problem(422, 'Send the file in a part named file.', {
      errors: [{ path: 'body.file', message: 'required' }],
    });
  const file = await parsed.stored;
  if (parsed.truncated)
    throw await refuseFile(context, file.key, new Problem(413, `The file is larger than ${limit} bytes.`));
  if (parsed.extra) {
    throw await refuseFile(
      context,
      file.key,
      new Problem(422, 'Send exactly one file, in a part named file.', {
        errors: [{ path: 'body.file', message: 'one file only' }],
      }),
    );
  }
  return { ...file, fileName: parsed.fileName, fields: parsed.fields };
}

/** Removes a stored file that will not be kept, and answers the problem to throw. */
export async function refuseFile(context: SiteContext, key: string, problem: Problem): Promise<Problem> {
  await removeFiles(context.services.storage, context.services.logger, [key]);
  return problem;
}

/** An upload into the site's library: the file, then its fields, then the item (with its processing job). */
export async function receiveUpload(req: Request, context: SiteContext): Promise<MediaItem> {
  const file = await receiveFile(req, context);
  const parsed = uploadWithWebhook.safeParse(file.fields);
  if (!parsed.success) throw await refuseFile(context, file.key, fromZodError(parsed.error, 'body'));
  const { webhook: url, webhook_events, ...fields } = parsed.data;
  const unstorable = unstorableFields(fields, 'body');
  if (unstorable.length > 0) {
    throw await refuseFile(
      context,
      file.key,
      new Problem(422, 'The request is not valid; see errors.', { errors: unstorable }),
    );
  }
  let webhook;
  try {
    webhook = requestedWebhook(context.services.config, { webhook: url, webhook_events });
  } catch (error) {
    // Refused: the file this upload stored is not kept.
    await removeFiles(context.services.storage, context.log, [file.key]);
    throw error;
  }
  return recordUpload(context.deps, { access: context.access, file, fields, webhook });
}
