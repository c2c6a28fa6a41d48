// Registers every manifest endpoint on the router: the route module that
// claims it, or a 501 placeholder that says it is not built yet. Each one runs
// under its manifest timeout.
import type { RequestHandler, Router } from 'express';
import { Problem } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import { handle } from './handle.ts';
import { bySpecificity, toExpressPath, type Endpoint } from './manifest.ts';
import { sendProblem } from './middleware/problems.ts';
import { timeout } from './middleware/timeout.ts';
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

/** A route may ask more of its callers than the specification (a token for a view it lists as public), never less. */
function checkAccess(endpoint: Endpoint, route: RouteDefinition): void {
  const { access } = route;
  if (endpoint.auth === 'bearer' && (access === 'public' || access === 'public-site')) {
    throw new Error(`Route ${route.key} is open to anyone, but the manifest says it needs a token`);
  }
  const bySite = typeof access === 'object' || access === 'public-site';
  if (bySite && !endpoint.path.includes('{site_identifier}')) {
    throw new Error(`Route ${route.key} declares site access, but its path has no {site_identifier}`);
  }
}

export function mountEndpoints(
  router: Router,
  endpoints: Endpoint[],
  routes: Map<string, RouteDefinition>,
  services: Services,
): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const endpoint of [...endpoints].sort(bySpecificity)) {
    const route = routes.get(endpoint.key);
    const expressPath = toExpressPath(endpoint.path);
    const method = endpoint.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](
      expressPath,
      timeout(endpoint.timeoutMs),
      route ? handle(endpoint, route, services) : notImplemented(endpoint),
    );
    const normalised = expressPath.replace(/\/$/, '') || '/';
    methodsByPath.set(normalised, (methodsByPath.get(normalised) ?? new Set()).add(endpoint.method));
  }
  // A known path with a method it does not have: 405 with Allow, not a 404.
  for (const [expressPath, methods] of methodsByPath) {
    const allow = [...methods].join(', ');
    router.all(expressPath, (req, res) => {
      sendProblem(
        req,
        res,
        new Problem(405, `${req.method} is not supported here; use ${allow}.`, { headers: { Allow: allow } }),
      );
    });
  }
}

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
