// The application: the steps every request takes on Node's own request and
// response (./bare.ts), then Express for all but the answers already kept.
// One concern per file, in this order: each step relies on the ones above it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Services } from '../core/services.ts';
import { service } from '../core/version.ts';
import { adminUiRouter } from './admin-ui.ts';
import { docsRouter } from './docs.ts';
import { problemPagesRouter } from './problems/pages.ts';
import { allEndpoints, type Endpoint } from './manifest.ts';
import type { BareRequest, BareResponse } from './bare.ts';
import { chain } from './middleware/chain.ts';
import { corsPolicy } from './middleware/cors.ts';
import { requestCounter } from './middleware/counting.ts';
import { clientAddress, proxyTrust } from './middleware/rate-limit.ts';
import { requestLogging } from './middleware/logging.ts';
import { withRequestMetrics } from './middleware/request-metrics.ts';
import { errorHandler, notFound } from './middleware/problems.ts';
import { requestId } from './middleware/request-id.ts';
import { securityHeaders } from './middleware/security-headers.ts';
import { dispatchedEndpoint, endpointDispatcher, failedBefore, routesByKey } from './mount.ts';
import { buildOpenApiDocument } from './openapi.ts';
import type { RouteDefinition } from './route.ts';
import { allRoutes } from './all-routes.ts';

export type AppOptions = {
  /** Tests pass their own to exercise the machinery (e.g. a short timeout). */
  endpoints?: Endpoint[];
  routes?: RouteDefinition[];
};

/** A Node request listener (http.createServer takes it; so does supertest). */
export type App = (req: IncomingMessage, res: ServerResponse) => void;

export function createApp(services: Services, options: AppOptions = {}): App {
  const endpoints = options.endpoints ?? allEndpoints;
  const routes = routesByKey(endpoints, options.routes ?? allRoutes);
  // Built on first request and kept: generating it costs ~25 MB of transient
  // memory and some start-up time that a worker-heavy deployment never needs.
  let openapi: ReturnType<typeof buildOpenApiDocument> | undefined;
  const document = () =>
    (openapi ??= buildOpenApiDocument(endpoints, routes, {
      title: 'Content and Agent Platform API',
      version: service.version,
      ...(services.config.publicUrl ? { serverUrl: services.config.publicUrl } : {}),
    }));

  // Access answers are kept in memory from the moment changes to them are heard.
  services.accessCache.start();
  services.publicCache.start();
  services.searchIndexes.start();
  services.statistics.start(services.db);
  // The replica is read only once its replay is known to be close behind.
  services.replica?.start();
  const app = express();
  app.disable('x-powered-by');
  // Express would hash every body for a weak ETag (and answer 304s no route
  // documents); routes that are worth revalidating set their own (media views).
  app.set('etag', false);
  // Which proxies may name the client (TRUST_PROXY): one function for req.ip and the steps before Express alike.
  const trust = proxyTrust(services.config.trustProxy);
  app.set('trust proxy', trust ?? false);
  // What requestLog() binds to each request's id.
  app.locals.logger = services.logger;
  const spec = endpoints.filter((endpoint) => endpoint.source === 'spec');
  app.locals.catalog = {
    total: spec.length,
    implemented: spec.filter((endpoint) => routes.has(endpoint.key)).length,
    beyond_spec: endpoints.length - spec.length,
  };

  const cors = corsPolicy(services.config.corsOrigins);
  // The client's address, for the rate limits and the security signals alike.
  const address = clientAddress(trust);
  // Every request takes these steps first, on Node's own request and response (./bare.ts):
  const front = chain(
    // 1. Identify the request, so every later log line and problem carries its id.
    requestId(),
    // 2. Log it once it finishes, and count it (by site, route, status class and latency; probing answers by network;
    //    and in the Prometheus metrics, by route key and status).
    requestLogging(
      services.logger,
      withRequestMetrics(requestCounter(services.statistics, services.config.statsCounting, address)),
    ),
    // 3. Security headers and, when configured, CORS (which must answer preflights before routing).
    securityHeaders(),
    ...(cors ? [cors] : []),
    // 4. Find its endpoint and count it against its rate limit; an answer the public cache holds is served now.
    //    Other paths count against the limits too, then go on.
    endpointDispatcher(endpoints, routes, services, address),
  );
  // What passes on is Express's:
  // 5. the endpoint found: its body (JSON or a form, bounded in size), then the route under its own timeout
  //    (or a failure of the steps above, to the error handler);
  app.use(dispatchedEndpoint());
  // 6. the API description, its interactive documentation, and the pages problem types link to;
  app.get('/openapi.json', (_req, res) => {
    res.json(document());
  });
  app.use(docsRouter());
  app.use(problemPagesRouter());
  // 7. the admin page for the job tables (static; its script calls the API above);
  app.use(adminUiRouter());
  // 8. whatever is left is a 404 problem; every error becomes a problem.
  app.use(notFound());
  app.use(errorHandler());
  return (req, res) => {
    const bareReq = req as BareRequest;
    const bareRes = res as BareResponse;
    // What Express sets on its own first (it keeps both): the URL as asked, and the counting fields.
    bareReq.originalUrl = req.url!;
    bareRes.locals = Object.create(null) as Record<string, unknown>;
    front(bareReq, bareRes, (error) => {
      if (error !== undefined) failedBefore(req, error);
      app(req, res);
    });
  };
}
