// Refreshing the knowledge documents taken from a post whose text changed
// (queued by ./follow-posts.ts): each gets a rag_index job, as
// compute-rag-index would make it, with the chunk settings it was last indexed
// with, so its unchanged chunks keep their embeddings (./chunk-embeddings.ts).
//
// No caller asked for it, so no caller pays: the job is the tenant's, paid
// from its pool (core/jobs/submit.ts pays a service account's jobs from
// there; the job is made as one acting for the tenant, named by the
// document, with no user behind it). When the pool cannot cover the estimate
// the document says so (state error, insufficient_credits), keeps its chunks
// and stays stale; compute-rag-index, paid by its caller, renews it.
//
// Only documents indexed before are refreshed: one never indexed waits for
// its administrator to index it, as it did before the post changed. Safe to
// run twice: a document whose job has not started yet (it will read the post
// as it is then) or whose index is current is left as it is.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { ServiceActor } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import { resolveSite } from '../tenancy/site-access.ts';
import { embeddingModel } from './embeddings.ts';
import { indexHash, isCurrent, loadStored, sourceOf, type StoredDocument } from './source.ts';
import { submitIndex } from './submit-index.ts';

export type Refreshed = 'submitted' | 'pending' | 'current' | 'unpaid' | 'gone';

/** The tenant acting on its own knowledge base: the job has no user, and its pool pays. */
const tenantActor = (document: StoredDocument): ServiceActor => ({
  kind: 'service',
  serviceAccountId: document.id,
  tenantId: document.tenant_id,
  scopes: [],
});

const idOnly = z.object({ id: z.uuid() });

/** Whether the document's job is queued and not started: it will read the post as it is when it starts. */
const jobNotStarted = (db: CommonQueryMethods, document: StoredDocument) =>
  document.index_state === 'waiting' && document.index_job_id
    ? db.exists(sql.type(z.object({}))`
        select 1 from jobs where id = ${document.index_job_id} and status = 'queued'`)
    : Promise.resolve(false);

async function refreshDocument(db: CommonQueryMethods, config: Config, documentId: string): Promise<Refreshed> {
  return db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`select from knowledge_documents where id = ${documentId} for update`);
    const stored = await loadStored(tx, documentId);
    if (!stored?.post_id) return 'gone';
    if (await jobNotStarted(tx, stored)) return 'pending';
    const source = await sourceOf(tx, stored);
    if (source.postVersion === stored.post_version) return 'current';
    const chunkTokens = stored.chunk_tokens ?? config.knowledge.chunkTokens;
    const overlapTokens =
      stored.overlap_tokens ?? Math.min(config.knowledge.overlapTokens, Math.floor(chunkTokens / 2));
    const options = { chunkTokens, overlapTokens };
    if (isCurrent(stored, indexHash(source, options, embeddingModel(config)))) {
      await tx.query(sql.typeAlias('void')`
        update knowledge_documents set post_version = ${source.postVersion} where id = ${documentId}`);
      return 'current';
    }
    const site = await resolveSite(tx, stored.site_id);
    if (!site) return 'gone';
    try {
      await submitIndex(tx, config, { actor: tenantActor(stored), site, role: 'service' }, documentId, {
        chunk_tokens: chunkTokens,
        overlap_tokens: overlapTokens,
      });
      return 'submitted';
    } catch (error) {
      if (!(error instanceof Problem) || error.status !== 402) throw error;
      await tx.query(sql.typeAlias('void')`
        update knowledge_documents
        set index_state = 'error', error_at = now(), index_error = ${sql.jsonb({
          code: 'insufficient_credits',
          message:
            'The post changed, and the tenant’s credit pool could not cover indexing it again; compute the index to renew it.',
        })}
        where id = ${documentId}`);
      return 'unpaid';
    }
  });
}

/** Refreshes each document taken from the post that is behind it; answers how many ended which way. */
export async function refreshPostDocuments(
  deps: { db: CommonQueryMethods; config: Config },
  postId: string,
): Promise<Record<Refreshed, number>> {
  const counts: Record<Refreshed, number> = { submitted: 0, pending: 0, current: 0, unpaid: 0, gone: 0 };
  const documents = await deps.db.anyFirst(sql.type(idOnly)`
    select d.id from knowledge_documents d join posts p on p.id = d.post_id
    where d.post_id = ${postId} and p.version <> d.post_version and d.indexed_hash is not null
    order by d.id`);
  for (const id of documents) counts[await refreshDocument(deps.db, deps.config, id)]++;
  return counts;
}
