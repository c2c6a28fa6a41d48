// Admin Monitoring (global admins): the system's health, performance over a
// recent window, this process's caches, the rate limiters, and the security
// dashboard and threat intelligence.
import { z } from 'zod';
import {
  cacheCleanupSchema,
  cacheStatistics,
  cacheStatisticsSchema,
  cleanupCaches,
} from '../../core/monitoring/caches.ts';
import { performanceMetrics, performanceSchema } from '../../core/monitoring/performance.ts';
import { rateLimitStats, rateLimitStatsSchema } from '../../core/monitoring/rate-limits.ts';
import {
  securityDashboard,
  securityDashboardSchema,
  threatIntelligence,
  threatIntelligenceSchema,
  threatThresholdsSchema,
} from '../../core/monitoring/security.ts';
import { systemHealth, systemHealthSchema } from '../../core/monitoring/system-health.ts';
import { defineRoute } from '../route.ts';

export const routes = [
  defineRoute({
    key: 'GET /admin/monitoring/system-health',
    access: 'global-admin',
    description:
      'The database (latency, connections by application of the server’s maximum), migrations, worker processes and their last ' +
      'beat, queue depth and oldest job per kind, storage, the public cache, and this API process (event-loop delay, memory). ' +
      '`status` is degraded when a migration is pending, no worker is alive or the database is slow.',
    responses: { 200: { description: 'The system’s health', schema: systemHealthSchema } },
    async handler(_input, { db, actor, services }) {
      return {
        body: await systemHealth(db, actor, {
          config: services.config,
          migrations: services.migrations,
          publicCache: services.publicCache,
        }),
      };
    },
  }),

  defineRoute({
    key: 'GET /admin/monitoring/performance-metrics',
    access: 'global-admin',
    description:
      'Over the last window_minutes (default 60): latency percentiles and error rates per route across every site (requests are ' +
      'written once a minute by each API process), the slowest routes, and per job kind the queue wait and run time percentiles.',
    request: {
      query: z.object({
        window_minutes: z.coerce
          .number()
          .int()
          .min(1)
          .max(7 * 24 * 60)
          .default(60),
      }),
    },
    responses: { 200: { description: 'Performance', schema: performanceSchema } },
    async handler({ query }, { db }) {
      return { body: await performanceMetrics(db, query.window_minutes) };
    },
  }),

  defineRoute({
    key: 'GET /admin/monitoring/cache-statistics',
    access: 'global-admin',
    description:
      'This API process’s caches (each process keeps its own): public answers and the access maps, with size, hits, misses, hit ' +
      'ratio, entries pushed out by the size bound and, for public answers, the invalidations heard.',
    responses: { 200: { description: 'The caches', schema: cacheStatisticsSchema } },
    async handler(_input, { services }) {
      return { body: cacheStatistics(services.publicCache, services.accessCache) };
    },
  }),

  defineRoute({
    key: 'POST /admin/monitoring/cache-cleanup',
    access: 'global-admin',
    description:
      'Drops what has expired in this API process’s caches now (entries otherwise go when next asked for), and says how many went ' +
      'from each. Nothing that is still valid is dropped; to clear content, use DELETE /admin/cache/....',
    responses: { 200: { description: 'What went', schema: cacheCleanupSchema } },
    async handler(_input, { services }) {
      return { body: cleanupCaches(services.publicCache, services.accessCache) };
    },
  }),

  defineRoute({
    key: 'GET /admin/monitoring/rate-limit-stats',
    access: 'global-admin',
    description:
      'Each rate limiter (ip and account for the sign-in family, contact for the contact form, per-ip and per-token for every ' +
      'request, per-tenant-jobs for job submits, webhook-signatures for failed webhook signatures): its limit and window, the requests ' +
      'this API process refused since it started, and from the store every process shares, the keys tracked now, those over their ' +
      'limit (blocked until their window ends) and the busiest.',
    responses: { 200: { description: 'The limiters', schema: rateLimitStatsSchema } },
    async handler(_input, { db, services }) {
      return { body: await rateLimitStats(db, services.rateLimits) };
    },
  }),

  defineRoute({
    key: 'GET /admin/monitoring/security-dashboard',
    access: 'global-admin',
    description:
      'Over the last `hours` (default 24): failed sign-ins per hour (passwords and client secrets, with the accounts and networks ' +
      'behind them), 401 and 403 answers per hour and as a share of all requests, refresh-token replays (sessions revoked for one), ' +
      'accounts the credential limiter refuses now, blocked and flagged sign-ups, and blocked tenants. Answers are counted by ' +
      'each API process and written once a minute (STATS_FLUSH_SECONDS).',
    request: { query: z.object({ hours: z.coerce.number().int().min(1).max(720).default(24) }) },
    responses: { 200: { description: 'The security dashboard', schema: securityDashboardSchema } },
    async handler({ query }, { db, services }) {
      return { body: await securityDashboard(db, query.hours, services.config.rateLimits.perAccount) };
    },
  }),

  defineRoute({
    key: 'GET /admin/monitoring/threat-intelligence',
    access: 'global-admin',
    description:
      'The client networks (an IPv4 address, or an IPv6 /64) behind abuse patterns over the last `hours` (default 24): failed ' +
      'sign-ins across many accounts (credential_stuffing), many 404 and 405 answers (scanning), many 401 answers (token_guessing) ' +
      'and many sign-up attempts (signup_burst), each with its evidence counts and when it was first and last seen. The ' +
      'thresholds are query parameters.',
    request: { query: threatThresholdsSchema.extend({ hours: z.coerce.number().int().min(1).max(720).default(24) }) },
    responses: { 200: { description: 'Networks behind abuse patterns', schema: threatIntelligenceSchema } },
    async handler({ query: { hours, ...thresholds } }, { db }) {
      return { body: await threatIntelligence(db, hours, thresholds) };
    },
  }),
];
