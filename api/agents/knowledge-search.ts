// Searching an agent's knowledge base (beyond the specification; see
// api/extensions.tsv): what makes the index useful to an agent. Whoever sees
// the agent may search it, over the documents of the sites they reach. The
// MCP tool knowledge_search calls the same domain function.
import { knowledgeSearchInput, knowledgeSearchResultSchema, searchKnowledge } from '../../core/knowledge/search.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

export const routes = [
  defineRoute({
    key: 'POST /api/agents/{agent_id}/knowledge-base/search',
    access: 'signed-in',
    description:
      'The chunks that best answer `query`, best first, each with its document, a score and the ranking that found it. ' +
      'Full text (any of the query’s words, stemmed in each document’s language, ranked by cover density) when nothing ' +
      'is embedded; with AI_EMBEDDING_MODEL set and the agent’s chunks embedded, hybrid: the query is embedded too and ' +
      'the full-text and cosine-similarity rankings are fused by reciprocal rank fusion (k = 60). If the query cannot be ' +
      'embedded, the answer is full text and `notice` says why. Searches are not charged. Whoever sees the agent may ' +
      'search it, over the documents of the sites they reach (service accounts: content:read).',
    request: { params: uuidParams('agent_id'), body: knowledgeSearchInput },
    responses: { 200: { description: 'The best chunks', schema: knowledgeSearchResultSchema } },
    async handler({ params, body }, { db, actor, services, signal }) {
      return { body: await searchKnowledge({ db, config: services.config, signal }, actor, params.agent_id, body) };
    },
  }),
];
