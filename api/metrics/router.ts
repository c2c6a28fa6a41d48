// GET /metrics in Prometheus' text format, for a scraper holding METRICS_TOKEN
// or a global admin's access token. Anyone else gets 401 or 403.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { authenticate, bearerToken } from '../../core/identity/authenticate.ts';
import { requireGlobalAdmin } from '../../core/identity/access.ts';
import { jobMetrics } from '../../core/jobs/metrics.ts';
import type { Services } from '../../core/services.ts';
import { defineRoute } from '../route.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

const registries = new WeakMap<Services, Registry>();

export const routes = [
  defineRoute({
    key: 'GET /metrics',
    auth: 'custom',
    description:
      'Prometheus metrics: queue depth and age per kind, jobs per state, recent durations and failures, live workers. `Authorization: Bearer` with METRICS_TOKEN or a global admin’s access token.',
    responses: {
      200: { description: 'Metrics in the Prometheus text format', contentType: 'text/plain', schema: z.string() },
    },
    async handler(_input, { services }, { req, res }) {
      const header = req.get('authorization');
      const token = services.config.metricsToken;
      const scraper = token !== undefined && timingSafeEqual(digest(bearerToken(header)), digest(token));
      if (!scraper) requireGlobalAdmin((await authenticate(services.db, services.config, header)).actor);
      let registry = registries.get(services);
      if (!registry) registries.set(services, (registry = jobMetrics(services.db, services.config)));
      res
        .status(200)
        .type(registry.contentType)
        .send(await registry.metrics());
      return {};
    },
  }),
];
