// Searching an agent's knowledge base: the chunks that best answer a query,
// with their document, among the documents the caller sees.
//
// Without embeddings (no AI_EMBEDDING_MODEL, or none of the agent's chunks
// embedded with it) it is full text alone (./full-text.ts), scored by cover
// density. With them it is hybrid: the query is embedded too, and the full-
// text ranking and the cosine-similarity ranking (./vector.ts) are fused by
// reciprocal rank fusion: a chunk scores the sum over the rankings it is in
// of 1 / (60 + its place), so a chunk both find outranks one only either
// finds, without weighing incomparable scores. Each hit says which found it.
// If the provider fails to embed the query, the answer is the full-text one
// and says why. Queries are not charged (only indexing embeds at a price).
//
// Filters (a site, a language, a kind of source) narrow both rankings alike,
// on the columns each reads (0047), so neither half ranks chunks the other
// would leave out.
//
// `searchKnowledge` is what both the REST route and the MCP tool
// `knowledge_search` call.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { requireVisibleAgent, visibleSites } from './access.ts';
import { documentKinds } from './documents.ts';
import { embedTexts, embeddingModel, KnowledgeError } from './embeddings.ts';
import { fullTextRanking, type ChunkFilter, type Ranked } from './full-text.ts';
import { locale } from '../tenancy/sites.ts';
import { hasEmbeddings, vectorRanking } from './vector.ts';

/** Reciprocal rank fusion's constant: places matter less the further down they are. */
export const rrfK = 60;
/** How deep each ranking is read for fusing. */
const depth = 50;

export const knowledgeSearchInput = z
  .strictObject({
    query: z.string().trim().min(1).max(1000).describe('A question or keywords'),
    limit: z.number().int().min(1).max(50).default(5).describe('How many chunks to answer'),
    site_id: z
      .uuid()
      .optional()
      .describe('Only the documents of this site (one the caller reaches; else nothing is found)'),
    locale: locale
      .optional()
      .describe('Only the documents in this language, as indexed; `en` takes its regional variants (`en-GB`) too'),
    source_kind: z
      .enum(documentKinds)
      .optional()
      .describe('Only the documents of this kind: post, text, url (a web page) or pdf'),
  })
  .meta({ id: 'KnowledgeSearchInput' });
export type KnowledgeSearchInput = z.input<typeof knowledgeSearchInput>;

export const searchMethods = ['full_text', 'vector', 'both'] as const;

export const knowledgeHitSchema = z
  .object({
    chunk_id: z.uuid(),
    ordinal: z.number().int().describe('The chunk’s place in its document, from 0'),
    content: z.string(),
    tokens: z.number().int(),
    document: z.object({
      id: z.uuid(),
      title: z.string(),
      kind: z.enum(documentKinds),
      site_id: z.uuid(),
      post_id: z.uuid().nullable(),
      post_url: z.string().nullable().describe('The post in the API, for a post’s snapshot'),
    }),
    score: z
      .number()
      .describe('hybrid: the fused score, Σ 1/(60 + place); full_text: the cover-density rank. Higher is better'),
    method: z.enum(searchMethods).describe('Which ranking found it: full_text, vector, or both'),
    text_rank: z.number().nullable().describe('Its full-text rank (cover density), when full text found it'),
    similarity: z.number().nullable().describe('Its cosine similarity to the query, when the vector ranking found it'),
  })
  .meta({ id: 'KnowledgeHit' });

export const knowledgeSearchResultSchema = z
  .object({
    mode: z.enum(['full_text', 'hybrid']),
    embedding_model: z.string().nullable().describe('The model the query was embedded with (hybrid)'),
    notice: z.string().nullable().describe('Why a search that could have been hybrid is full text only'),
    items: z.array(knowledgeHitSchema),
  })
  .meta({ id: 'KnowledgeSearchResult' });
export type KnowledgeSearchResult = z.infer<typeof knowledgeSearchResultSchema>;

const hitRow = z.object({
  id: z.uuid(),
  ordinal: z.number(),
  content: z.string(),
  tokens: z.number(),
  document_id: z.uuid(),
  title: z.string(),
  kind: z.enum(documentKinds),
  site_id: z.uuid(),
  site_slug: z.string(),
  post_id: z.uuid().nullable(),
});

/** The query embedded, or why not: null when the agent has nothing embedded with the configured model. */
async function queryVector(
  db: CommonQueryMethods,
  config: Config,
  agentId: string,
  query: string,
  signal: AbortSignal | undefined,
): Promise<{ model: string; vector: number[] } | { notice: string } | null> {
  const model = embeddingModel(config);
  if (!model || !(await hasEmbeddings(db, agentId, model))) return null;
  try {
    const { vectors } = await embedTexts(config, [query], signal ?? new AbortController().signal);
    return { model, vector: vectors[0]! };
  } catch (error) {
    if (!(error instanceof KnowledgeError)) throw error;
    return { notice: `The query could not be embedded (${error.code}): full-text results only.` };
  }
}

/** Fuses rankings by reciprocal rank: each chunk's score is the sum of 1 / (k + place) over the rankings it is in. */
export function fuse(rankings: Ranked[][]): { id: string; score: number; places: (number | null)[] }[] {
  const fused = new Map<string, { id: string; score: number; places: (number | null)[] }>();
  rankings.forEach((ranking, which) =>
    ranking.forEach((hit, place) => {
      const entry = fused.get(hit.id) ?? { id: hit.id, score: 0, places: rankings.map(() => null) };
      entry.score += 1 / (rrfK + place + 1);
      entry.places[which] = place;
      fused.set(hit.id, entry);
    }),
  );
  return [...fused.values()].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

export async function searchKnowledge(
  context: { db: CommonQueryMethods; config: Config; signal?: AbortSignal },
  actor: Actor,
  agentId: string,
  input: KnowledgeSearchInput,
): Promise<KnowledgeSearchResult> {
  const { db, config } = context;
  const {
    query,
    limit,
    site_id: siteId,
    locale: inLocale,
    source_kind: sourceKind,
  } = knowledgeSearchInput.parse(input);
  await requireVisibleAgent(db, actor, agentId);
  const visible = await visibleSites(db, actor, agentId);
  // A site asked for narrows the sites the caller reaches; one they do not reach finds nothing.
  const sites = siteId ? (visible ?? [siteId]).filter((id) => id === siteId) : visible;
  if (sites?.length === 0) return { mode: 'full_text', embedding_model: null, notice: null, items: [] };
  const filter: ChunkFilter = { sites, locale: inLocale, sourceKind };
  const [text, embedded] = await Promise.all([
    fullTextRanking(db, agentId, filter, query, depth),
    queryVector(db, config, agentId, query, context.signal).then(async (found) =>
      found && 'vector' in found
        ? { ...found, ranking: await vectorRanking(db, agentId, filter, found.model, found.vector, depth) }
        : found,
    ),
  ]);
  const vector = embedded && 'ranking' in embedded ? embedded.ranking : null;
  const fused = vector
    ? fuse([text, vector]).slice(0, limit)
    : text.slice(0, limit).map((hit, place) => ({ id: hit.id, score: hit.score, places: [place, null] }));
  const rows = new Map(
    (
      await db.any(sql.type(hitRow)`
        select c.id, c.ordinal, c.content, c.tokens, d.id as document_id, d.title, d.kind, d.site_id, s.slug as site_slug,
               d.post_id
        from knowledge_chunks c join knowledge_documents d on d.id = c.document_id join sites s on s.id = d.site_id
        where c.id = any(${sql.array(
          fused.map((hit) => hit.id),
          'uuid',
        )})`)
    ).map((row) => [row.id, row]),
  );
  const items = fused.flatMap((hit) => {
    const row = rows.get(hit.id);
    // A chunk replaced by a reindex between the rankings and this read is left out.
    if (!row) return [];
    const [textPlace, vectorPlace] = hit.places;
    const textRank = textPlace === null || textPlace === undefined ? null : text[textPlace]!.score;
    const similarity = vectorPlace === null || vectorPlace === undefined || !vector ? null : vector[vectorPlace]!.score;
    return [
      {
        chunk_id: row.id,
        ordinal: row.ordinal,
        content: row.content,
        tokens: row.tokens,
        document: {
          id: row.document_id,
          title: row.title,
          kind: row.kind,
          site_id: row.site_id,
          post_id: row.post_id,
          post_url: row.post_id ? `/${row.site_slug}/posts/${row.post_id}` : null,
        },
        score: hit.score,
        method: textRank !== null && similarity !== null ? 'both' : textRank !== null ? 'full_text' : 'vector',
        text_rank: textRank,
        similarity,
      } as const,
    ];
  });
  return {
    mode: vector ? 'hybrid' : 'full_text',
    embedding_model: embedded && 'model' in embedded ? embedded.model : null,
    notice: embedded && 'notice' in embedded ? embedded.notice : null,
    items,
  };
}
