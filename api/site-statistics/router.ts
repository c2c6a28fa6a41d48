// Site Statistics: what the site's requests, public views, content, jobs and
// credits add up to over a period, per route, per month and per site; what
// may be wrong with it; and the health of the counting itself.
import { notFound } from '../../core/errors.ts';
import {
  diagnose,
  diagnosticSchema,
  statisticsHealth,
  statisticsHealthSchema,
} from '../../core/statistics/diagnostic.ts';
import { periodQuery, periodSchema, resolvePeriod } from '../../core/statistics/period.ts';
import {
  endpointMetricSchema,
  endpointMetrics,
  monthly,
  monthlySchema,
  siteBreakdown,
  siteBreakdownSchema,
  siteOverview,
  siteOverviewSchema,
} from '../../core/statistics/reports.ts';
import { resolveSite } from '../../core/tenancy/site-access.ts';
import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

const counted =
  ' Requests are counted by every API process and written once a minute (STATS_FLUSH_SECONDS), so the last minute may be missing.';

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/overview',
    access: { site: 'manage' },
    reads: 'replica',
    description:
      'Over ?from=&to= (default the last 30 days; dates in the site’s time zone, settings.time_zone): content counts, media and ' +
      'storage, requests with latency percentiles, public views and the top pages, search requests, jobs and credits spent.' +
      counted,
    request: { params: siteParams, query: periodQuery },
    responses: { 200: { description: 'The overview', schema: siteOverviewSchema } },
    async handler({ query }, { db, site }) {
      return { body: await siteOverview(db, site, await resolvePeriod(db, site, query)) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/monthly',
    access: { site: 'manage' },
    reads: 'replica',
    description:
      'Requests, errors, public views, jobs and credits spent per calendar month (the site’s time zone), the last 12.',
    request: { params: siteParams },
    responses: { 200: { description: 'Twelve months, oldest first', schema: monthlySchema } },
    async handler(_input, { db, site }) {
      return { body: await monthly(db, site) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/endpoints',
    access: { site: 'manage' },
    reads: 'replica',
    description:
      'Per route (the manifest key, never the raw path) over the period: requests, 4xx and 5xx, error rate, mean and p50/p95/p99 ' +
      'latency from histograms merged across processes.' +
      counted,
    request: { params: siteParams, query: periodQuery },
    responses: {
      200: {
        description: 'Routes, busiest first',
        schema: z.object({ period: periodSchema, items: z.array(endpointMetricSchema) }),
      },
    },
    async handler({ query }, { db, site }) {
      const period = await resolvePeriod(db, site, query);
      return { body: { period, items: await endpointMetrics(db, site, period) } };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/sites',
    access: { site: 'admin' },
    reads: 'replica',
    description:
      'The same figures for every site of the tenant (tenant admins), or every site (global admins), busiest first.' +
      counted,
    request: { params: siteParams, query: periodQuery },
    responses: { 200: { description: 'Sites', schema: siteBreakdownSchema } },
    async handler({ query }, { db, site, actor }) {
      const everySite = actor.kind === 'user' && actor.isGlobalAdmin;
      return { body: await siteBreakdown(db, site, everySite, await resolvePeriod(db, site, query)) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/diagnostic',
    access: { site: 'manage' },
    reads: 'replica',
    description:
      'What may be wrong with the site: no published pages, missing translations, jobs failed in the last 24 h, media stuck in ' +
      'processing, the search index, and when the counters were last written.',
    request: { params: siteParams },
    responses: { 200: { description: 'The checks', schema: diagnosticSchema } },
    async handler(_input, { db, site, services }) {
      return { body: await diagnose(db, site, services.config.statsFlushSeconds) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/site-statistics/health',
    access: 'public',
    description:
      'The statistics pipeline, for monitors (no token): when the API processes last wrote their counters, how far behind that ' +
      'is (lagging past three intervals), and what this process holds unwritten.',
    request: { params: siteParams },
    responses: {
      200: {
        description: 'The pipeline’s health',
        schema: statisticsHealthSchema,
        headers: { 'Cache-Control': { description: '`no-store`: always the current state' } },
      },
    },
    async handler({ params }, { db, services }) {
      if (!(await resolveSite(db, params.site_identifier))) throw notFound('No such site.');
      return {
        body: await statisticsHealth(db, services.statistics, services.config.statsFlushSeconds),
        headers: { 'Cache-Control': 'no-store' },
      };
    },
  }),
];
