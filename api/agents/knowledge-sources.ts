// Knowledge documents straight from a web page or a PDF (beyond the
// specification; see api/extensions.tsv): each makes a document and the
// rag_index job that fetches or reads its text with the post importers' code
// and indexes it, answered as every job-creating route is (202 and Location,
// Prefer: wait, Idempotency-Key, webhooks). Who may: as for from-text
// (core/knowledge/access.ts): global administrators and the administrators of
// the site's tenant; the agent must serve that tenant.
import { Problem } from '../../core/errors.ts';
import {
  addPdf,
  addUrl,
  fromPdfFields,
  fromPdfQuery,
  fromUrlBody,
  sourceTarget,
} from '../../core/knowledge/add-source.ts';
import { removeFiles } from '../../core/storage/index.ts';
import { requestPriorityFormField } from '../../core/jobs/request-priority.ts';
import { requestedWebhook, webhookFormFields } from '../../core/webhooks/request.ts';
import { answerJob, jobResponses, preferHeader } from '../jobs/answer.ts';
import { binaryFile, receiveFile, refuseFile } from '../media/upload.ts';
import { fromZodError } from '../middleware/problems.ts';
import { problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const agentParams = uuidParams('agent_id');
const writers =
  'Global administrators and the administrators of the site’s tenant; others who see the agent get 403, anyone else 404.';
const paid =
  'Paid as compute-rag-index is, by the caller: per 1,000 tokens embedded (nothing without EMBEDDING_PROVIDERS); ' +
  'what the source may hold at most is reserved, the tokens embedded are charged, never more than reserved.';
const documentIn =
  'The document’s id is the job’s `input.document_id`; it reads `text_pending: true` until its text is taken.';

const denied = {
  403: problemResponse('The caller sees the agent but may not change its knowledge base for this site'),
  404: problemResponse('No such agent the caller sees, or no such site the caller reaches'),
  409: problemResponse(
    'The site’s tenant is not assigned to the agent; or a request with this Idempotency-Key is still being processed',
    { 'Retry-After': { ...retryAfterHeader, required: false } },
  ),
};

// The webhook fields and the job's priority too: routes with a JSON body get them from ../jobs/webhook-fields.ts.
const pdfFields = fromPdfFields.safeExtend({
  ...webhookFormFields.shape,
  priority: requestPriorityFormField.optional(),
});
const pdfForm = pdfFields.extend({ file: binaryFile.describe('The PDF (at most PDF_MAX_BYTES)') });

export const routes = [
  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/from-url',
    access: 'signed-in',
    idempotent: true,
    description:
      'Adds the article at `url` to the knowledge base for a site (`site_identifier`), as a rag_index job: the worker fetches ' +
      'the page as a post’s import does (never from a private, local or reserved address, checked again after each redirect), ' +
      'extracts its article with Readability (title and language unless `title` and `locale` are given), keeps its text as ' +
      'the document’s (HTML, sanitised) and indexes it. Failures (address_not_allowed, fetch_failed, page_not_found, ' +
      `not_an_article, ...) are on the job and the document, and charge nothing. ${documentIn} ${paid} ${writers}`,
    request: { params: agentParams, body: fromUrlBody, headers: preferHeader },
    responses: {
      ...jobResponses,
      ...denied,
      422: problemResponse(
        'The body is not valid (`errors` lists each problem): a URL that is not http(s), a bad locale',
      ),
    },
    async handler({ params, body }, context, { req }) {
      const access = await sourceTarget(context.db, context.actor, params.agent_id, body.site_identifier);
      context.limitJobs(access.site.tenant_id);
      const job = await addUrl(context.db, context.services.config, access, params.agent_id, body, {
        webhook: context.webhook ?? null,
        priority: context.priority,
      });
      return answerJob({ ...context, site: access.site }, req.get('prefer'), job, 'submitted');
    },
  }),

  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/from-pdf',
    access: 'signed-in',
    idempotent: true,
    description:
      'Adds a PDF to the knowledge base for a site (`site_identifier`, in the query: who may is checked before the upload ' +
      'is read), as a rag_index job: multipart/form-data with the PDF in a part named `file`, and optionally `title`, ' +
      '`locale` and `max_pages`. The worker reads it as a post’s import does (large type as headings; at most `max_pages`, ' +
      'PDF_TIMEOUT_MS and PDF_MEMORY_MB), keeps its text as the document’s and indexes it; the upload is removed once ' +
      'the text is kept. A password-protected, damaged or image-only PDF fails the job (pdf_encrypted, pdf_unreadable, ' +
      `pdf_no_text) and charges nothing. ${documentIn} ${paid} ${writers}`,
    request: {
      params: agentParams,
      query: fromPdfQuery,
      rawBody: [{ contentType: 'multipart/form-data', schema: pdfForm, required: true }],
      headers: preferHeader,
    },
    responses: {
      ...jobResponses,
      ...denied,
      413: problemResponse('The file is larger than PDF_MAX_BYTES; nothing is kept'),
      415: problemResponse('Not multipart/form-data, or the file is not a PDF (its type is read from its bytes)'),
      422: problemResponse(
        'Not valid (`errors` lists each problem): no site_identifier, no file part, a bad field, more pages than PDF_MAX_PAGES',
      ),
    },
    async handler({ params, query }, context, { req }) {
      const access = await sourceTarget(context.db, context.actor, params.agent_id, query.site_identifier);
      context.limitJobs(access.site.tenant_id);
      const onSite = { ...context, site: access.site, access };
      const { config, storage } = context.services;
      const file = await receiveFile(req, onSite, { maxBytes: config.pdf.maxBytes });
      if (file.mimeType !== 'application/pdf')
        throw await refuseFile(onSite, file.key, new Problem(415, `The file is ${file.mimeType}, not a PDF.`));
      const fields = pdfFields.safeParse(file.fields);
      if (!fields.success) throw await refuseFile(onSite, file.key, fromZodError(fields.error, 'body'));
      const { webhook, webhook_events, priority, ...pdf } = fields.data;
      let job;
      try {
        job = await addPdf(context.db, config, access, params.agent_id, {
          file,
          fields: pdf,
          webhook: requestedWebhook(config, { webhook, webhook_events }),
          priority,
        });
      } catch (error) {
        // Refused (a bad field, 402): the job that would have read the file will not.
        await removeFiles(storage, context.log, [file.key]);
        throw error;
      }
      return answerJob(onSite, req.get('prefer'), job, 'submitted');
    },
  }),
];
