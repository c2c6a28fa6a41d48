// Searching an agent's knowledge base (beyond the specification; see
// api/extensions.tsv): what makes the index useful to an agent. Whoever sees
// the agent may search it, over the documents of the sites they reach. The
// MCP tool knowledge_search calls the same domain function.
import { knowledgeSearchInput, knowledgeSearchResultSchema, searchKnowledge } from '../../core/knowledge/search.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

/** The path's parameters, shared with the MCP tool (which must take the route's own schemas). */
export const knowledgeSearchParams = uuidParams('agent_id');

export const routes = [
  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/search',
    access: 'signed-in',
    description:
      'The chunks that best answer `query`, best first, each with its document, a score and the ranking that found it. ' +
      'Full text when nothing is embedded: any of the query’s words counts, stemmed in each document’s language; a chunk ' +
      'scores the rarity (BM25 idf) of the words it holds plus their cover density. A query of only very common words ' +
      'ranks a sample of the chunks holding the rarest of them. With AI_EMBEDDING_MODEL set and the agent’s chunks ' +
      'embedded, hybrid: the query is embedded too, the nearest embeddings are found by their 256-bit signatures and ' +
      'ranked by exact cosine similarity, and the two rankings are fused by reciprocal rank fusion (k = 60). If the query ' +
      'cannot be embedded, the answer is full text and `notice` says why. Filters narrow both rankings alike: `site_id`, ' +
      '`locale` (the language a document is indexed in; `en` takes `en-GB` too) and `source_kind` (post, text, url, pdf). ' +
      'Searches are not charged. Whoever sees the ' +
      'agent may search it, over the documents of the sites they reach (service accounts: content:read).',
    request: { params: knowledgeSearchParams, body: knowledgeSearchInput },
    responses: { 200: { description: 'The best chunks', schema: knowledgeSearchResultSchema } },
    async handler({ params, body }, { db, actor, services, signal }) {
      return { body: await searchKnowledge({ db, config: services.config, signal }, actor, params.agent_id, body) };
    },
  }),
];
