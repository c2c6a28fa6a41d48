// The embedding side of a knowledge search: the chunks whose embeddings are
// nearest the query's, by cosine similarity.
//
// - `real[]` (no pgvector): every embedding of the agent is ranked by the
//   Hamming distance of its 256-bit signature to the query's (a scan of
//   narrow rows, about 0.3 µs each), and exact cosine similarity is computed
//   for the `shortlist` nearest, which are ranked by it.
// - `vector` (pgvector installed when the migrations ran): ranked exactly by
//   pgvector's cosine distance.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { signature } from './embeddings.ts';
import type { Ranked } from './full-text.ts';

/** How many signature-nearest embeddings get their exact similarity computed. */
const shortlist = 200;

type Storage = 'vector' | 'real[]';
let storage: Promise<Storage> | undefined;

/** How this database stores embeddings (decided by migration 0027), asked once per process. */
function storageOf(db: CommonQueryMethods): Promise<Storage> {
  storage ??= db
    .oneFirst(
      sql.type(z.object({ type: z.string() }))`
      select format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = 'knowledge_embeddings'::regclass and attname = 'embedding'`,
    )
    .then((type) => (type === 'real[]' ? 'real[]' : 'vector'))
    .catch((error: unknown) => {
      storage = undefined;
      throw error;
    });
  return storage;
}

/** Whether the agent has chunks embedded with this model (else a search need not embed its query). */
export const hasEmbeddings = (db: CommonQueryMethods, agentId: string, model: string) =>
  db.exists(sql.type(z.object({}))`
    select 1 from knowledge_embeddings where agent_id = ${agentId} and model = ${model} limit 1`);

/** The `limit` chunks nearest the (normalised) query vector, among those in `sites` (null: all). */
export async function vectorRanking(
  db: CommonQueryMethods,
  agentId: string,
  sites: string[] | null,
  model: string,
  vector: number[],
  limit: number,
): Promise<Ranked[]> {
  const inSites = sites ? sql.fragment`and e.site_id = any(${sql.array(sites, 'uuid')})` : sql.fragment``;
  const query = sql.array(vector, 'float4');
  const rows =
    (await storageOf(db)) === 'real[]'
      ? await db.any(sql.type(z.object({ id: z.uuid(), score: z.number() }))`
          select near.chunk_id as id, (select sum(x * y) from unnest(near.embedding, ${query}) as u (x, y))::float8 as score
          from (
            select e.chunk_id, e.embedding from knowledge_embeddings e
            where e.agent_id = ${agentId} and e.model = ${model} ${inSites}
            order by bit_count(e.signature # ${signature(vector)}::bit(256)), e.chunk_id
            limit ${Math.max(shortlist, limit)}
          ) near
          order by score desc, id limit ${limit}`)
      : await db.any(sql.type(z.object({ id: z.uuid(), score: z.number() }))`
          select e.chunk_id as id, (1 - (e.embedding <=> ${query}::vector))::float8 as score
          from knowledge_embeddings e
          where e.agent_id = ${agentId} and e.model = ${model} ${inSites}
          order by e.embedding <=> ${query}::vector, e.chunk_id limit ${limit}`);
  return [...rows];
}
