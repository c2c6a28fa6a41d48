// Submitting compute-rag-index: a rag_index job on the document's site, paid
// by the caller there (a user's credits on the site, a service account's
// tenant pool), reserving what embedding the text may cost: nothing without
// an embedding provider, nothing for a document already indexed as it is.
// The document waits (its stages cleared) unless it is current, in which
// case it stays completed and the job will find nothing to do. A page's or a
// PDF's document whose text is not taken yet reserves what its source may
// hold at most (./source.ts); a PDF's first run gets the upload to read.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import type { Job } from '../jobs/model.ts';
import { submitJob } from '../jobs/submit.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { JobWebhook } from '../webhooks/request.ts';
import { requireWriter } from './access.ts';
import { documentById } from './documents.ts';
import { embeddingModel } from './embeddings.ts';
import { ragIndexKind, type RagIndexInput } from './indexing.ts';
import {
  estimatedEmbeddingTokens,
  indexHash,
  isCurrent,
  loadStored,
  pendingEmbeddingTokens,
  sourceOf,
} from './source.ts';

export const computeIndexBody = z
  .strictObject({
    chunk_tokens: z
      .number()
      .int()
      .min(50)
      .max(8000)
      .optional()
      .describe('Most tokens a chunk holds (default KNOWLEDGE_CHUNK_TOKENS, 500)'),
    overlap_tokens: z
      .number()
      .int()
      .min(0)
      .max(4000)
      .optional()
      .describe('Tokens a chunk repeats of the one before, at most half a chunk (default KNOWLEDGE_CHUNK_OVERLAP, 50)'),
  })
  .optional();
export type ComputeIndexBody = z.output<typeof computeIndexBody>;

/** The caller on the document's site, as one who may index it (404, 403): whose site the job runs on and who pays. */
export async function indexTarget(db: CommonQueryMethods, actor: Actor, documentId: string): Promise<SiteAccess> {
  const found = await documentById(db, actor, documentId);
  return requireWriter(db, actor, found.site_id, 'No such document.');
}

export type SubmitIndexOptions = {
  /** Where the job's events go, if the request named a webhook. */
  webhook?: JobWebhook | null;
  /** The job's own priority, if the request asked for one (core/jobs/request-priority.ts). */
  priority?: number | undefined;
  /** A PDF document's upload, for its first run to read: the stored file and the most pages to read. */
  upload?: { fileKey: string; maxPages: number };
};

export async function submitIndex(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  documentId: string,
  body: ComputeIndexBody,
  { webhook = null, upload, priority }: SubmitIndexOptions = {},
): Promise<Job> {
  const chunkTokens = body?.chunk_tokens ?? config.knowledge.chunkTokens;
  // Unless given, the configured overlap, cut to half of a smaller chunk asked for.
  const overlapTokens = body?.overlap_tokens ?? Math.min(config.knowledge.overlapTokens, Math.floor(chunkTokens / 2));
  const options = { chunkTokens, overlapTokens };
  if (options.overlapTokens * 2 > options.chunkTokens)
    throw new Problem(422, 'The overlap must be at most half a chunk.', {
      errors: [{ path: 'body.overlap_tokens', message: `at most ${Math.floor(options.chunkTokens / 2)}` }],
    });
  const input: RagIndexInput = {
    document_id: documentId,
    chunk_tokens: options.chunkTokens,
    overlap_tokens: options.overlapTokens,
    ...(upload ? { file_key: upload.fileKey, max_pages: upload.maxPages } : {}),
  };
  return db.transaction(async (tx) => {
    // Locked: a concurrent submit for the same document waits, then sees this one's job.
    await tx.query(sql.typeAlias('void')`select from knowledge_documents where id = ${documentId} for update`);
    const stored = await loadStored(tx, documentId);
    if (!stored) throw new Problem(404, 'No such document.');
    const model = embeddingModel(config);
    const source = await sourceOf(tx, stored);
    const current = !stored.text_pending && isCurrent(stored, indexHash(source, options, model));
    const tokens =
      current || !model
        ? 0
        : stored.text_pending
          ? pendingEmbeddingTokens(
              stored.kind === 'url' ? 'url' : 'pdf',
              upload?.maxPages ?? config.pdf.maxPages,
              options,
            )
          : estimatedEmbeddingTokens(source, options);
    const job = await submitJob(tx, config, access, {
      kind: ragIndexKind,
      input,
      estimatedUnits: tokens / 1000,
      webhook,
      priority,
    });
    await tx.query(sql.typeAlias('void')`
      update knowledge_documents set index_job_id = ${job.id}
      ${
        current
          ? sql.fragment``
          : sql.fragment`, index_state = 'waiting', waiting_at = now(), parsing_at = null, splitting_at = null,
              indexing_at = null, completed_at = null, error_at = null, index_error = null`
      }
      where id = ${documentId}`);
    return job;
  });
}
