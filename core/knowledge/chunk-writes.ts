// Writing a document's chunks at the end of an indexing run, in the job's
// settling transaction: the old chunks (and their signatures) go, the new
// ones come with their full-text vectors, embeddings and the hashes those
// were made from, and with what a search filters by (site, locale, kind of
// source) on the chunks and on the signatures alike.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Chunk } from './chunking.ts';
import { signature } from './embeddings.ts';
import type { Source, StoredDocument } from './source.ts';

const chunkIds = z.object({ id: z.uuid(), ordinal: z.number() });

/** PostgreSQL array text of each vector (null: not embedded), cast to the embedding column's type on insert. */
const vectorTexts = (chunks: Chunk[], vectors: number[][]) =>
  chunks.map((_, i) => (vectors[i] ? `{${vectors[i].join(',')}}` : null));

export type Embedded = { model: string; vectors: number[][]; hashes: string[] } | null;

/** The document's chunks (and their signatures) replaced, if this job is still the one indexing it; false otherwise. */
export async function replaceChunks(
  tx: CommonQueryMethods,
  jobId: string,
  stored: StoredDocument,
  source: Source,
  chunks: Chunk[],
  embedded: Embedded,
): Promise<boolean> {
  const ours = await tx.exists(sql.type(z.object({}))`
    select 1 from knowledge_documents where id = ${stored.id} and index_job_id = ${jobId} for update`);
  if (!ours) return false;
  await tx.query(sql.typeAlias('void')`delete from knowledge_chunks where document_id = ${stored.id}`);
  if (chunks.length === 0) return true;
  const column = <T>(pick: (chunk: Chunk, i: number) => T) => chunks.map(pick);
  const made = await tx.any(sql.type(chunkIds)`
    insert into knowledge_chunks (document_id, agent_id, tenant_id, site_id, locale, source_kind, ordinal, content, tokens,
                                  start_offset, end_offset, tsv, embedding, embedding_hash)
    select ${stored.id}, ${stored.agent_id}, ${stored.tenant_id}, ${stored.site_id}, ${source.locale}, ${stored.kind},
           c.ordinal, c.content, c.tokens, c.start_offset, c.end_offset,
           setweight(to_tsvector(search_config(${source.locale}), ${source.title}), 'B')
             || to_tsvector(search_config(${source.locale}), c.content),
           c.embedding::real[], c.embedding_hash
    from unnest(${sql.array(
      column((chunk) => chunk.ordinal),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.content),
      'text',
    )}, ${sql.array(
      column((chunk) => chunk.tokens),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.start),
      'int4',
    )}, ${sql.array(
      column((chunk) => chunk.end),
      'int4',
    )}, ${sql.array(vectorTexts(chunks, embedded?.vectors ?? []), 'text')}, ${sql.array(
      column((_, i) => embedded?.hashes[i] ?? null),
      'text',
    )}) as c (ordinal, content, tokens, start_offset, end_offset, embedding, embedding_hash)
    returning id, ordinal`);
  if (!embedded || embedded.vectors.length === 0) return true;
  const byOrdinal = new Map(made.map((row) => [row.ordinal, row.id]));
  await tx.query(sql.typeAlias('void')`
    insert into knowledge_signatures (chunk_id, agent_id, tenant_id, site_id, locale, source_kind, model, signature)
    select s.chunk_id, ${stored.agent_id}, ${stored.tenant_id}, ${stored.site_id}, ${source.locale}, ${stored.kind},
           ${embedded.model}, s.signature::bit(256)
    from unnest(${sql.array(
      column((chunk) => byOrdinal.get(chunk.ordinal)!),
      'uuid',
    )}, ${sql.array(embedded.vectors.map(signature), 'text')}) as s (chunk_id, signature)`);
  return true;
}
