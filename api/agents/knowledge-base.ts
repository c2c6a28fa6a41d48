// An agent's knowledge base: its documents (snapshots of posts, or texts
// given; pages and PDFs are ./knowledge-sources.ts) and the job that indexes one. Who may do what
// (core/knowledge/access.ts):
// - reading: whoever sees the agent (global admins; members and service
//   accounts, with content:read, of a tenant it is assigned to), and of its
//   documents those of the sites they reach;
// - writing (adding, removing, indexing): global admins and the
//   administrators of the document's tenant; editors, authors and service
//   accounts get 403.
import { z } from 'zod';
import { addPost, addText, fromTextBody } from '../../core/knowledge/add.ts';
import {
  deleteDocument,
  documentListQuery,
  getDocument,
  knowledgeDocumentSchema,
  knowledgeDocumentWithBodySchema,
  listDocuments,
} from '../../core/knowledge/documents.ts';
import { computeIndexBody, indexTarget, submitIndex } from '../../core/knowledge/submit-index.ts';
import { pageSchema } from '../../core/pagination.ts';
import { answerJob, jobResponses, preferHeader } from '../jobs/answer.ts';
import { locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const agentParams = uuidParams('agent_id');
const documentParams = uuidParams('agent_id', 'doc_id');
const documentPath = (agentId: string, documentId: string) => `/api/agents/${agentId}/knowledge-base/${documentId}`;
const created = {
  description: 'The document, waiting to be indexed (compute-rag-index)',
  schema: knowledgeDocumentSchema,
  headers: { Location: locationHeader },
};
const writers =
  'Global administrators and the administrators of the tenant the document belongs to; others who see the agent get 403.';

export const routes = [
  defineRoute({
    key: 'GET /api/agents/{agent_id}/knowledge-base',
    access: 'signed-in',
    description:
      'The agent’s documents the caller sees (those of the sites they reach), oldest first, each with its indexing state ' +
      '(waiting → parsing → splitting → indexing → completed, or error with its code; a timestamp per stage) and, for a ' +
      'post’s snapshot, a link to the post and whether it changed since (`stale`). Filters: `state`, `stale`.',
    request: { params: agentParams, query: documentListQuery },
    responses: { 200: { description: 'A page of documents', schema: pageSchema(knowledgeDocumentSchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listDocuments(db, actor, params.agent_id, query) };
    },
  }),

  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/from-post/{post_id}',
    access: 'signed-in',
    description:
      'Adds a snapshot of the post (its title, excerpt and body now, and its version) to the knowledge base, for the post’s ' +
      'site. The post must be of a tenant the agent is assigned to (409 otherwise). Once indexed, the document follows the ' +
      'post: when the post’s text changes (title, excerpt, body; not its tags or status), a rag_index job indexes it again ' +
      'a moment later, with the chunk settings it was indexed with, embedding only the chunks whose text changed, paid from ' +
      'the tenant’s credit pool (no caller asked for it); if the pool cannot cover it, the document stays stale with the ' +
      `error insufficient_credits, and computing its index again takes the post’s new text. ${writers}`,
    request: { params: agentParams.extend({ post_id: z.uuid() }) },
    responses: {
      201: created,
      409: problemResponse(
        'The post is already in the knowledge base (`document_id` names it), or its tenant is not assigned to the agent',
      ),
    },
    async handler({ params }, { db, actor }) {
      const document = await addPost(db, actor, params.agent_id, params.post_id);
      return { status: 201, body: document, headers: { Location: documentPath(params.agent_id, document.id) } };
    },
  }),

  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/from-text',
    access: 'signed-in',
    description:
      'Adds a plain-text or Markdown document for a site (`site_identifier`) of a tenant the agent is assigned to (409 ' +
      `otherwise). ${writers}`,
    request: { params: agentParams, body: fromTextBody },
    responses: { 201: created, 409: problemResponse('The site’s tenant is not assigned to the agent') },
    async handler({ params, body }, { db, actor }) {
      const document = await addText(db, actor, params.agent_id, body);
      return { status: 201, body: document, headers: { Location: documentPath(params.agent_id, document.id) } };
    },
  }),

  defineRoute({
    key: 'GET /api/agents/{agent_id}/knowledge-base/{doc_id}',
    access: 'signed-in',
    description: 'One document with its snapshot (`body`) and indexing state.',
    request: { params: documentParams },
    responses: { 200: { description: 'The document', schema: knowledgeDocumentWithBodySchema } },
    async handler({ params }, { db, actor }) {
      return { body: await getDocument(db, actor, params.agent_id, params.doc_id) };
    },
  }),

  defineRoute({
    key: 'DELETE /api/agents/{agent_id}/knowledge-base/{doc_id}',
    access: 'signed-in',
    description: `Removes the document with its chunks and embeddings; searches stop finding it at once. ${writers}`,
    request: { params: documentParams },
    responses: { ...noContent('Removed') },
    async handler({ params }, { db, actor }) {
      await deleteDocument(db, actor, params.agent_id, params.doc_id);
      return {};
    },
  }),

  defineRoute({
    key: 'POST /api/agents/knowledge-base/{doc_id}/compute-rag-index',
    access: 'signed-in',
    idempotent: true,
    description:
      'Indexes the document, as a rag_index job on its site (Location: `/{site}/jobs/{job_id}`): its text (a post’s as it ' +
      'is now, which renews a stale snapshot) is cleaned and split into chunks of at most `chunk_tokens` tokens repeating ' +
      '`overlap_tokens` of the one before, cut at paragraph ends, else sentence ends, else word ends; each chunk is indexed ' +
      'for full text and, when EMBEDDING_PROVIDERS names a provider, embedded by its model; a chunk whose text (under the ' +
      'title) the same model embedded before keeps its stored embedding, and only the others are embedded and charged. ' +
      'A page’s or a PDF’s document whose text is not taken yet (its first job failed) has it fetched first; a PDF’s ' +
      'upload is gone by then, so such a job fails with pdf_missing. ' +
      'Paid per 1,000 tokens embedded (the rag_index price), reserved at submit from an estimate; full-text indexing alone ' +
      'is free. A document whose text, settings and model are those it was indexed with is left as it is and nothing is ' +
      'charged. The new chunks replace the old ones when the job succeeds; until then searches find the old ones. ' +
      'Failures (document_missing, provider_unavailable, provider_rejected, ...) are on the job and the document. ' +
      writers,
    request: { params: uuidParams('doc_id'), body: computeIndexBody, headers: preferHeader },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const access = await indexTarget(context.db, context.actor, params.doc_id);
      context.limitJobs(access.site.tenant_id);
      const job = await submitIndex(context.db, context.services.config, access, params.doc_id, body, {
        webhook: context.webhook ?? null,
        priority: context.priority,
      });
      return answerJob({ ...context, site: access.site }, req.get('prefer'), job, 'submitted');
    },
  }),
];
