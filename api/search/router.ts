// Search: a public site's published posts, pages, elements and ready media,
// searched and completed without a token; what readers searched for and what
// the index holds, for the site's editors; rebuilding and dropping a site's
// index, for its administrators; the health of it all, for global admins.
import { z } from 'zod';
import { analyticsQuery, analyticsSchema, searchAnalytics } from '../../core/search/analytics.ts';
import { searchHealth, searchHealthSchema, searchStats, searchStatsSchema } from '../../core/search/index-state.ts';
import { searchQuery, searchResultSchema, searchSite, type SearchResult } from '../../core/search/query.ts';
import { deleteSiteIndex, submitReindex } from '../../core/search/reindex.ts';
import { maxSuggestions, suggest, suggestQuery, suggestionsSchema } from '../../core/search/suggest.ts';
import { answerJob, jobResponses, preferHeader } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { cachedSearch } from './cache.ts';

// Every search is logged, so answers are not kept by caches outside: this
// process keeps them (./cache.ts) and counts each search it answers.
const noStore = { 'Cache-Control': { description: '`no-store`: every search is counted for the site’s analytics' } };

/**
 * The hit count of each answer this process computed, by its kept bytes, so
 * counting a kept answer's search does not parse it again (an answer kept in
 * Redis, read back as new bytes, is parsed).
 */
const totals = new WeakMap<Buffer, number>();

export const routes = [
  defineRoute({
    key: 'GET /search/sites/{site_identifier}',
    access: 'public-site',
    reads: 'replica',
    description:
      'Full-text search of a public site’s published posts, pages, elements (their text fields) and ready media (title, alt, ' +
      'caption). `q` reads like a web search: words (all must match, stemmed in each locale’s language), "a phrase", `or`, ' +
      '`-word`. Ranked by cover density (a title counts most, then headings, excerpt and descriptions, then body), recent ' +
      'items boosted. `facets` counts the hits per kind whatever `kind` asked. A query that finds nothing is tried again ' +
      'with its misspelt words replaced by the most alike words of the site (`corrected_query`). Each search (its first ' +
      'page) is logged for analytics with its locale and hit count, and nothing about who asked.',
    request: { params: siteParams, query: searchQuery },
    responses: { 200: { description: 'A page of hits', schema: searchResultSchema, headers: noStore } },
    async handler({ query }, { db, site, services }, { req }) {
      let computed: SearchResult | undefined;
      const answer = await cachedSearch({ services, site, db }, req, async () => {
        computed = await searchSite(db, site, query, services.searchIndexes);
        return computed;
      });
      if (computed) totals.set(answer, computed.total);
      if (!query.cursor) {
        const total = totals.get(answer) ?? (JSON.parse(answer.toString()) as Pick<SearchResult, 'total'>).total;
        services.statistics.search(site.id, query.q, query.locale, total);
      }
      return { json: answer, headers: { 'Cache-Control': 'no-store' } };
    },
  }),

  defineRoute({
    key: 'GET /search/sites/{site_identifier}/suggest',
    access: 'public-site',
    reads: 'replica',
    description:
      `Up to ${maxSuggestions} completions of what a reader has typed: titles of published items that start with it, then the site’s ` +
      'most frequent words that complete its last word. When neither exists the last word is taken as misspelt and the ' +
      'most alike words are offered (`corrected`). Not logged.',
    request: { params: siteParams, query: suggestQuery },
    responses: { 200: { description: 'Completions, best first', schema: suggestionsSchema, headers: noStore } },
    async handler({ query }, { db, site, services }, { req }) {
      const answer = await cachedSearch({ services, site, db }, req, () => suggest(db, site, query));
      return { json: answer, headers: { 'Cache-Control': 'no-store' } };
    },
  }),

  defineRoute({
    key: 'GET /search/sites/{site_identifier}/analytics',
    access: { site: 'manage', scope: 'search:read' },
    reads: 'replica',
    description:
      'What readers searched for over the last `days` (UTC days, today included): the most searched queries with their ' +
      'average hits, the queries that found nothing, and searches per day. Queries are kept lower-cased, without anything ' +
      'that identifies who searched.',
    request: { params: siteParams, query: analyticsQuery },
    responses: { 200: { description: 'The site’s search analytics', schema: analyticsSchema } },
    async handler({ query }, { db, site }) {
      return { body: await searchAnalytics(db, site.id, query) };
    },
  }),

  defineRoute({
    key: 'GET /search/sites/{site_identifier}/stats',
    access: { site: 'manage', scope: 'search:read' },
    reads: 'replica',
    description:
      'What the site’s index holds: documents per kind and locale, distinct words, stored size, and the last reindex.',
    request: { params: siteParams },
    responses: { 200: { description: 'The site’s index', schema: searchStatsSchema } },
    async handler(_input, { db, site, services }) {
      return { body: await searchStats(db, services.searchIndexes, site.id) };
    },
  }),

  defineRoute({
    key: 'POST /search/admin/sites/{site_identifier}/reindex',
    access: { site: 'admin', scope: 'jobs:write' },
    idempotent: true,
    description:
      'Rebuilds the site’s search documents from its items, as a search_reindex job (one unit, free unless a price is set). ' +
      'Writes keep the index current by themselves; this is for what they cannot see (a dropped index, a changed language ' +
      'configuration). One at a time per site: while one is queued or running, this answers that job. Safe to repeat.',
    request: { params: siteParams, headers: preferHeader },
    responses: jobResponses,
    async handler(_input, context, { req }) {
      context.limitJobs(context.site.tenant_id);
      const { job } = await submitReindex(context.db, context.services.config, context.access, {
        webhook: context.webhook ?? null,
        priority: context.priority,
      });
      return answerJob(context, req.get('prefer'), job, 'submitted');
    },
  }),

  defineRoute({
    key: 'DELETE /search/admin/sites/{site_identifier}/index',
    access: { site: 'admin' },
    description:
      'Drops every search document of the site (and the words suggestions draw on); analytics are kept. Items written ' +
      'afterwards are indexed again as they change; a reindex brings back the rest.',
    request: { params: siteParams },
    responses: {
      200: {
        description: 'How many documents were dropped',
        schema: z.object({ deleted_documents: z.number().int() }),
      },
    },
    async handler(_input, { db, site }) {
      return { body: { deleted_documents: await deleteSiteIndex(db, site.id) } };
    },
  }),

  defineRoute({
    key: 'GET /search/admin/health',
    access: 'global-admin',
    description:
      'The search index of the whole service: documents, words, logged queries and table sizes; published items that are ' +
      'not indexed and when the oldest of them changed (`degraded` while there are any); the extensions search relies on.',
    request: {},
    responses: { 200: { description: 'The index’s health', schema: searchHealthSchema } },
    async handler(_input, { db }) {
      return { body: await searchHealth(db) };
    },
  }),
];
