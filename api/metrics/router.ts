// GET /metrics in Prometheus' text format, for a scraper holding METRICS_TOKEN
// or a global admin's access token. Anyone else gets 401 or 403.
import { timingSafeEqual, createHash } from 'node:crypto';
import { z } from 'zod';
import { requireGlobalAdmin } from '../../core/identity/access.ts';
import { bearerToken } from '../../core/identity/authenticate.ts';
import { jobMetrics, type JobMetrics } from '../../core/jobs/metrics.ts';
import type { Config } from '../../core/config.ts';
import { defineRoute } from '../route.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

// One set of metrics per configuration, that is per process (tests build several apps).
const processMetrics = new WeakMap<Config, JobMetrics>();

export const routes = [
  defineRoute({
    key: 'GET /metrics',
    access: 'own-credentials',
    description:
      'Prometheus metrics: queue depth and oldest wait per kind, jobs per state and live workers (read from the database); this process’s runtime metrics, HTTP requests by route key and status, and the jobs it settled, by kind and outcome, with wait and run times. `Authorization: Bearer` with METRICS_TOKEN or a global admin’s access token.',
    responses: {
      200: { description: 'Metrics in the Prometheus text format', contentType: 'text/plain', schema: z.string() },
    },
    async handler(_input, { db, services, authenticate }, { req, res }) {
      const token = services.config.metricsToken;
      const scraper =
        token !== undefined && timingSafeEqual(digest(bearerToken(req.get('authorization'))), digest(token));
      if (!scraper) requireGlobalAdmin((await authenticate()).actor);
      let metrics = processMetrics.get(services.config);
      if (!metrics) processMetrics.set(services.config, (metrics = jobMetrics(services.config)));
      res
        .status(200)
        .type(metrics.contentType)
        .send(await metrics.render(db));
      return {};
    },
  }),
];
