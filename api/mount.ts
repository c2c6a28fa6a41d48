// Serves every manifest endpoint: the route module that claims it, or a 501
// placeholder that says it is not built yet. Each one runs under its manifest
// timeout.
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import findMyWay from 'find-my-way';
import { Problem } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import { pathOf, type BareRequest, type BareResponse, type Step } from './bare.ts';
import { handle, unreadBody } from './handle.ts';
import { toExpressPath, type Endpoint } from './manifest.ts';
import { bodyParsers } from './middleware/body.ts';
import { sendProblem } from './middleware/problems.ts';
import { requestLimit } from './middleware/rate-limit.ts';
import { moreSpecific, shadowingPatterns, type PathPattern } from './path-patterns.ts';
import { timeout } from './middleware/timeout.ts';
import { keptAnswers } from './public-content/answers.ts';
import type { RouteDefinition } from './route.ts';

/** Trailing slashes are optional, so `GET /api/agents/` and `GET /api/agents` are one endpoint. */
const sameEndpoint = (key: string) => key.replace(/(.)\/$/, '$1');

/** The route claiming each manifest endpoint, by manifest key (aliases included). */
export function routesByKey(endpoints: Endpoint[], routes: RouteDefinition[]): Map<string, RouteDefinition> {
  const claimed = new Map<string, RouteDefinition>();
  for (const route of routes) {
    const key = sameEndpoint(route.key);
    if (claimed.has(key)) throw new Error(`Route ${route.key} is defined twice`);
    claimed.set(key, route);
  }
  const byKey = new Map<string, RouteDefinition>();
  for (const endpoint of endpoints) {
    const route = claimed.get(sameEndpoint(endpoint.key));
    if (!route) continue;
    checkAccess(endpoint, route);
    byKey.set(endpoint.key, route);
  }
  const known = new Set(endpoints.map((endpoint) => sameEndpoint(endpoint.key)));
  for (const key of claimed.keys())
    if (!known.has(key)) throw new Error(`Route ${key} is in neither api/manifest.tsv nor api/extensions.tsv`);
  return byKey;
}

/**
 * A route may ask more of its callers than the specification (a token for a view it lists as public), never less;
 * and only a GET reads from the replica.
 */
function checkAccess(endpoint: Endpoint, route: RouteDefinition): void {
  const { access } = route;
  if (endpoint.auth === 'bearer' && (access === 'public' || access === 'public-site')) {
    throw new Error(`Route ${route.key} is open to anyone, but the manifest says it needs a token`);
  }
  if (route.reads === 'replica' && endpoint.method !== 'GET') {
    throw new Error(`Route ${route.key} reads from the replica, where nothing can be written: only a GET may`);
  }
  const bySite = typeof access === 'object' || access === 'public-site';
  if (bySite && !endpoint.path.includes('{site_identifier}')) {
    throw new Error(`Route ${route.key} declares site access, but its path has no {site_identifier}`);
  }
}

type Handler = (req: Request, res: Response, next: NextFunction) => unknown;

/** The endpoint a request was found to be for, run once Express has the request (dispatchedEndpoint). */
type Found = { params: Record<string, string>; run: Handler };
const found = new WeakMap<IncomingMessage, Found>();
const failures = new WeakMap<IncomingMessage, unknown>();

/** A failure in the steps before Express, for dispatchedEndpoint() to hand to Express's error handler. */
export function failedBefore(req: IncomingMessage, error: unknown): void {
  failures.set(req, error);
}

/**
 * The step that finds the endpoint of a request in a radix tree
 * (find-my-way) and counts it against its rate limit. An answer the public
 * cache holds is served here and then, before Express; for any other the
 * request goes on to Express, where dispatchedEndpoint() reads its body and
 * runs the route under its timeout. Express would try its ~250 routes one
 * regular expression at a time, on every request. Literal segments win over
 * parameters (/admin/jobs before /{site_identifier}/jobs), trailing slashes
 * and letter case do not matter, and a known path asked with a method it
 * does not have is a 405 with Allow. Requests for no endpoint count against
 * the limits too (scanning is what they are for).
 */
export function endpointDispatcher(
  endpoints: Endpoint[],
  routes: Map<string, RouteDefinition>,
  services: Services,
  address: (req: IncomingMessage) => string | undefined,
): Step {
  const tree = findMyWay<findMyWay.HTTPVersion.V1>({
    ignoreTrailingSlash: true,
    caseSensitive: false,
    // Parameters are validated by the routes' schemas, which say what is too long.
    maxParamLength: 2048,
  });
  const registered = new Set<string>();
  /** The methods each path pattern has, for Allow. */
  const patterns = new Map<string, PathPattern>();
  // The limit comes first: a caller over it is turned away before its body is read.
  const parseBody = bodyParsers(services.config.bodyLimit);
  const limit = requestLimit(services, address);
  const limited = (req: BareRequest, res: BareResponse, signedWebhook = false) => {
    const refused = limit(req, res, signedWebhook);
    if (refused) sendProblem(req, res, refused);
    return Boolean(refused);
  };
  for (const endpoint of endpoints) {
    const route = routes.get(endpoint.key);
    const path = toRouterPath(endpoint.path);
    // The manifest lists some endpoints with and without a trailing slash: one route serves both.
    if (registered.has(`${endpoint.method} ${path}`)) continue;
    registered.add(`${endpoint.method} ${path}`);
    const limit = timeout(endpoint.timeoutMs);
    const handler: Handler = route ? handle(endpoint, route, services) : notImplemented(endpoint);
    const start: Handler = (req, res, next) =>
      limit(req, res, () => void Promise.resolve(handler(req, res, next)).catch(next));
    // Only an endpoint that takes a body reads one: a stray body on a GET (malformed JSON, an odd charset)
    // is none of its business, and the 400 and 415 it would cause are not among the endpoint's answers.
    const takesBody = Boolean(route?.request?.body || route?.request?.rawBody);
    const run: Handler = takesBody
      ? (req, res, next) =>
          parseBody(req, res, (error?: unknown) => {
            if (error) unreadBody.set(req, error);
            start(req, res, next);
          })
      : start;
    const signedWebhook = route?.rateLimit === 'signature-failures';
    const kept = route && keptAnswers(services, route);
    const step: Step = (req, res, next) => {
      // What the request is counted as (./middleware/counting.ts): the manifest key, never the raw path.
      res.locals.route = endpoint.key;
      if (limited(req, res, signedWebhook)) return;
      if (kept?.(req, res)) return;
      found.set(req, { params: req.params as Record<string, string>, run });
      next();
    };
    const store: Stored = { pattern: path.toLowerCase(), step };
    tree.on(endpoint.method, path, () => undefined, store);
    if (endpoint.method === 'GET') tree.on('HEAD', path, () => undefined, store);
    const pattern = patterns.get(store.pattern) ?? { path: store.pattern, methods: [] };
    pattern.methods.push(endpoint.method);
    patterns.set(pattern.path, pattern);
  }
  const shadowing = shadowingPatterns([...patterns.values()]);
  /** The pattern `path` is for when its method's own tree finds `pattern`: a more specific one of another method, if any. */
  const shadowOf = (pattern: string, path: string) => shadowing.get(pattern)?.find((shadow) => shadow.matches(path));
  const patternOf = (method: string, path: string) =>
    (tree.find(method as findMyWay.HTTPMethod, path)?.store as Stored | undefined)?.pattern;
  const notAllowed = (req: BareRequest, res: BareResponse, allowed: string[]) => {
    const allow = methods.filter((method) => allowed.includes(method)).join(', ');
    sendProblem(
      req,
      res,
      new Problem(405, `${req.method} is not supported here; use ${allow}.`, { headers: { Allow: allow } }),
    );
  };
  return (req, res, next) => {
    const path = pathOf(req);
    const match = tree.find(req.method as findMyWay.HTTPMethod, path);
    const shadow = match && shadowOf((match.store as Stored).pattern, path);
    if (match && !shadow) {
      req.params = match.params as Record<string, string>;
      (match.store as Stored).step(req, res, next);
      return;
    }
    if (limited(req, res)) return;
    if (shadow) {
      notAllowed(req, res, shadow.methods);
      return;
    }
    // The most specific pattern any method finds for the path, and the methods it has.
    const candidates = methods.flatMap((method) => patternOf(method, path) ?? []);
    const best = candidates.find((one) => !candidates.some((other) => moreSpecific(other, one)));
    if (best === undefined) {
      next();
      return;
    }
    notAllowed(req, res, patterns.get(best)!.methods);
  };
}

/** What the tree keeps for each endpoint: its pattern (for Allow) and the step that starts it. */
type Stored = { pattern: string; step: Step };

/**
 * Express's first layer: runs the endpoint the dispatcher found for the
 * request, with its path parameters (Express's router resets req.params on
 * every layer), or passes on a failure of the steps before Express to its
 * error handler. Requests for no endpoint go on to the layers after it.
 */
export function dispatchedEndpoint(): RequestHandler {
  return (req, res, next) => {
    if (failures.has(req)) {
      next(failures.get(req));
      return;
    }
    const endpoint = found.get(req);
    if (!endpoint) {
      next();
      return;
    }
    req.params = endpoint.params;
    return endpoint.run(req, res, next);
  };
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** `/{site_identifier}/jobs/{job_id}` → `/:site_identifier/jobs/:job_id` (find-my-way's syntax, and Express's). */
const toRouterPath = (specPath: string) => toExpressPath(specPath).replace(/(.)\/$/, '$1');

function notImplemented(endpoint: Endpoint): RequestHandler {
  return (req, res) => {
    sendProblem(
      req,
      res,
      new Problem(
        501,
        `${endpoint.method} ${endpoint.path} (${endpoint.group}: ${endpoint.name}) is not implemented yet.`,
      ),
    );
  };
}
