// The posts' jobs: import from a URL or a PDF, recrawl an imported post,
// transform a post with the text provider. Each answers 202 with the job and
// its Location (200 when Prefer: wait saw it finish), honours Idempotency-Key,
// and reserves credits (402 when they do not cover the estimate).
import { z } from 'zod';
import { Problem } from '../../core/errors.ts';
import {
  fromPdfFields,
  fromPdfSubmission,
  fromUrlBody,
  fromUrlSubmission,
  recrawlSubmission,
  transformBody,
  transformSubmission,
} from '../../core/posts/post-jobs.ts';
import { requestPriorityFormField } from '../../core/jobs/request-priority.ts';
import { removeFiles } from '../../core/storage/index.ts';
import { requestedWebhook, webhookFormFields } from '../../core/webhooks/request.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { binaryFile, receiveFile, refuseFile } from '../media/upload.ts';
import { fromZodError } from '../middleware/problems.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

const postParams = siteParams.extend({ post_id: z.uuid() });
// Importing makes a post of the caller's (authors too); recrawl and transform change one, as PATCH does.
const write: { site: 'write'; scope: ('jobs:write' | 'content:write')[] } = {
  site: 'write',
  scope: ['jobs:write', 'content:write'],
};

// The webhook fields and the job's priority too: routes with a JSON body get them from ../jobs/webhook-fields.ts.
const pdfFields = fromPdfFields.safeExtend({
  ...webhookFormFields.shape,
  priority: requestPriorityFormField.optional(),
});
const pdfForm = pdfFields.extend({ file: binaryFile.describe('The PDF (at most PDF_MAX_BYTES)') });

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/posts/from-url',
    access: write,
    idempotent: true,
    description:
      'Imports the article at `url` as a draft post, as a job (one url_import unit). The page is fetched by the worker, never from a ' +
      'private, local or reserved address (checked for every address the name resolves to, and again after each redirect, at most 5); ' +
      'the article is extracted with Readability: title, byline, published time, language and lead image (og:image), the HTML body ' +
      'sanitised. With `import_lead_image`, the image goes into the media library as the featured image. The job’s output names ' +
      '`post_id` and what was extracted; failures have codes such as address_not_allowed, url_not_allowed, fetch_failed, ' +
      'page_not_found and not_an_article, and charge nothing.',
    request: { params: siteParams, body: fromUrlBody, headers: preferHeader },
    responses: jobResponses,
    async handler({ body }, context, { req }) {
      return submitAndAnswer(context, req.get('prefer'), fromUrlSubmission(context.access, body));
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/posts/from-pdf',
    access: write,
    idempotent: true,
    description:
      'Imports a PDF as a draft post, as a job: multipart/form-data with the PDF in a part named `file`, and optionally `title`, ' +
      '`locale` and `max_pages`. Its text becomes paragraphs, large type becomes headings. One pdf_import unit a page: `max_pages` ' +
      '(default PDF_MAX_PAGES) are reserved, the pages read are charged. A password-protected, damaged or image-only PDF fails the ' +
      'job (pdf_encrypted, pdf_unreadable, pdf_no_text) and charges nothing; so do more pages than allowed (pdf_too_many_pages) and ' +
      'a read longer than PDF_TIMEOUT_MS (pdf_timeout) or needing more memory than PDF_MEMORY_MB (pdf_too_complex). With an Idempotency-Key, a repeat answers the first job without reading its file.',
    request: {
      params: siteParams,
      rawBody: [{ contentType: 'multipart/form-data', schema: pdfForm, required: true }],
      headers: preferHeader,
    },
    responses: {
      ...jobResponses,
      413: problemResponse('The file is larger than PDF_MAX_BYTES; nothing is kept'),
      415: problemResponse('Not multipart/form-data, or the file is not a PDF (its type is read from its bytes)'),
    },
    async handler(_input, context, { req }) {
      const file = await receiveFile(req, context, { maxBytes: context.services.config.pdf.maxBytes });
      if (file.mimeType !== 'application/pdf')
        throw await refuseFile(context, file.key, new Problem(415, `The file is ${file.mimeType}, not a PDF.`));
      const fields = pdfFields.safeParse(file.fields);
      if (!fields.success) throw await refuseFile(context, file.key, fromZodError(fields.error, 'body'));
      const { webhook, webhook_events, priority, ...pdf } = fields.data;
      try {
        context.webhook = requestedWebhook(context.services.config, { webhook, webhook_events });
        context.priority = priority;
        const submission = fromPdfSubmission(context.services.config, context.access, file, pdf);
        return await submitAndAnswer(context, req.get('prefer'), submission);
      } catch (error) {
        // Refused (a bad field, 402, 429): the job that would have read the file will not.
        await removeFiles(context.services.storage, context.log, [file.key]);
        throw error;
      }
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/posts/{post_id}/recrawl',
    access: write,
    idempotent: true,
    description:
      'Fetches the post’s source URL again, as a job (one url_import unit), conditionally (If-None-Match with the stored ETag, ' +
      'If-Modified-Since with the stored Last-Modified). Unchanged (304, or the same article): the output says `changed: false`. ' +
      'Changed: the previous title and body are kept as a version, the post takes the new ones and its version goes up (If-Match ' +
      'clients see the change), and the output has a `diff` summary (paragraphs added, removed, changed; words before and after; ' +
      'whether the title changed). Authors recrawl only their own posts.',
    request: { params: postParams, headers: preferHeader },
    responses: { ...jobResponses, 409: problemResponse('The post was not imported from a URL') },
    async handler({ params }, context, { req }) {
      const submission = await recrawlSubmission(context.db, context.access, params.post_id);
      return submitAndAnswer(context, req.get('prefer'), submission);
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/posts/{post_id}/transform',
    access: write,
    idempotent: true,
    description:
      'Transforms the post with the text provider, as a job paid per 1,000 tokens (four characters a token, in and out, are reserved): ' +
      '`summarize`, `rewrite` (in a `tone`), `shorten`, `expand`, or `title_excerpt`. With a language model named in TEXT_PROVIDERS, it writes it. ' +
      'Without one, `summarize` is an extractive summary (the post’s most representative sentences, in order) and `title_excerpt` ' +
      'takes the first heading and sentences; the others fail with text_provider_not_configured and charge nothing. With `apply` ' +
      '(default) the result is saved into the post, its previous content kept as a version and its version raised; the status is ' +
      'left as it is. If the post changes while the job runs, it fails with post_changed. Authors transform only their own posts.',
    request: { params: postParams, body: transformBody, headers: preferHeader },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const submission = await transformSubmission(
        context.db,
        context.access,
        params.post_id,
        body,
        context.services.config.providers,
      );
      return submitAndAnswer(context, req.get('prefer'), submission);
    },
  }),
];
