// The embedding side of a knowledge search: the chunks whose embeddings are
// nearest the query's, by cosine similarity. Every embedding of the agent is
// ranked by the Hamming distance of its 256-bit signature to the query's
// (knowledge_signatures: a scan of narrow rows, about 0.15 µs each), and the
// exact similarity is computed for the `shortlist` nearest, which are ranked
// by it: by pgvector's cosine distance where the embeddings are `vector`s,
// else as the dot product of the (normalised) real[] arrays.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { signature } from './embeddings.ts';
import { filterConditions, type ChunkFilter, type Ranked } from './full-text.ts';

/** How many signature-nearest embeddings get their exact similarity computed. */
const shortlist = 64;

type Storage = 'vector' | 'real[]';
let storage: Promise<Storage> | undefined;

/** How this database stores embeddings (decided by migration 0027), asked once per process. */
function storageOf(db: CommonQueryMethods): Promise<Storage> {
  storage ??= db
    .oneFirst(
      sql.type(z.object({ type: z.string() }))`
      select format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = 'knowledge_chunks'::regclass and attname = 'embedding'`,
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
    select 1 from knowledge_signatures where agent_id = ${agentId} and model = ${model} limit 1`);

/** The `limit` chunks nearest the (normalised) query vector, among those the filter takes. */
export async function vectorRanking(
  db: CommonQueryMethods,
  agentId: string,
  filter: ChunkFilter,
  model: string,
  vector: number[],
  limit: number,
): Promise<Ranked[]> {
  const query = sql.array(vector, 'float4');
  const similarity =
    (await storageOf(db)) === 'real[]'
      ? sql.fragment`(select sum(x * y) from unnest(c.embedding, ${query}) as u (x, y))`
      : sql.fragment`1 - (c.embedding <=> ${query}::vector)`;
  const rows = await db.any(sql.type(z.object({ id: z.uuid(), score: z.number() }))`
    select c.id, (${similarity})::float8 as score
    from (
      select s.chunk_id from knowledge_signatures s
      where s.agent_id = ${agentId} and s.model = ${model} ${filterConditions('s', filter)}
      order by bit_count(s.signature # ${signature(vector)}::bit(256)), s.chunk_id
      limit ${Math.max(shortlist, limit)}
    ) near
    join knowledge_chunks c on c.id = near.chunk_id
    order by score desc, c.id limit ${limit}`);
  return [...rows];
}
