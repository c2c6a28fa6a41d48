// Registers every manifest endpoint on the router: the route module that
// claims it, or a 501 placeholder that says it is not built yet. Each one runs
// under its manifest timeout.
import type { Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { Problem, type ProblemField } from '../core/errors.ts';
import { unstorableFields } from '../core/storable.ts';
import type { Services } from '../core/services.ts';
import { idempotencyKey, idempotent, requestHash, type StoredReply } from '../core/idempotency.ts';
import { authenticate } from '../core/identity/authenticate.ts';
import { invalidToken } from '../core/identity/tokens.ts';
import { cancellableDb } from '../db/cancellable.ts';
import { bySpecificity, toExpressPath, type Endpoint } from './manifest.ts';
import { fromZodError, sendProblem } from './middleware/problems.ts';
import { timeout, type Deadline } from './middleware/timeout.ts';
import type { RouteContext, RouteDefinition, RouteInput } from './route.ts';

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
    if (route) byKey.set(endpoint.key, route);
  }
  const known = new Set(endpoints.map((endpoint) => sameEndpoint(endpoint.key)));
  for (const key of claimed.keys())
    if (!known.has(key)) throw new Error(`Route ${key} is in neither api/manifest.tsv nor api/extensions.tsv`);
  return byKey;
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
      route ? run(endpoint, route, services) : notImplemented(endpoint),
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

function run(endpoint: Endpoint, route: RouteDefinition, services: Services): RequestHandler {
  const authenticated = endpoint.auth === 'bearer' && route.auth !== 'custom';
  return async (req, res) => {
    const { signal, deadline } = res.locals.deadline as Deadline;
    // Who is asking comes before what they asked: a bad token is a 401 even with a bad body.
    const auth = authenticated ? await authenticate(services.db, services.config, req.get('authorization')) : undefined;
    const input = parseInput(route, req);
    const context: RouteContext = {
      services,
      requestId: (req as { id?: string }).id ?? '',
      log: req.log,
      signal,
      deadline,
      db: cancellableDb(services.db, signal),
      claims: auth?.claims,
      ip: req.ip,
      get actor() {
        if (!auth) throw invalidToken();
        return auth.actor;
      },
    };
    const answer = async () => {
      const reply = await route.handler(input, context, { req, res });
      return {
        status: reply.status ?? (reply.body === undefined ? 204 : 200),
        body: reply.body,
        headers: reply.headers ?? {},
      };
    };
    const key = route.idempotent ? req.get('idempotency-key') : undefined;
    const reply =
      key === undefined
        ? { ...(await answer()), replayed: false }
        : await replayable(services, endpoint, context, key, input, answer);
    if (res.headersSent) return;
    send(res, reply.status, reply.body, {
      ...reply.headers,
      ...(reply.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    });
  };
}

async function replayable(
  services: Services,
  endpoint: Endpoint,
  context: RouteContext,
  key: string,
  input: unknown,
  answer: () => Promise<StoredReply>,
) {
  const valid = idempotencyKey.safeParse(key);
  if (!valid.success)
    throw new Problem(422, valid.error.issues[0]?.message, {
      errors: [{ path: 'headers.idempotency-key', message: 'invalid' }],
    });
  const actor = context.claims
    ? context.actor.kind === 'user'
      ? context.actor.userId
      : context.actor.serviceAccountId
    : 'anonymous';
  return idempotent(services.db, { actorId: actor, route: endpoint.key, key, hash: requestHash(input) }, answer);
}

function send(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (body === undefined) res.status(status).end();
  else res.status(status).json(body);
}

function parseInput(route: RouteDefinition, req: Request): RouteInput<never, never, never> {
  const request = route.request ?? {};
  if (request.body) {
    const types = request.bodyTypes ?? ['application/json'];
    const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
    if (hasBody && !req.is(types)) {
      throw new Problem(415, `Send the body as ${types.join(' or ')}.`, {
        headers: { 'Accept-Post': types.join(', ') },
      });
    }
  }
  // All three are checked before answering, so the client sees every mistake at once.
  const errors: ProblemField[] = [];
  const input = {
    params: validate(request.params, req.params, 'params', errors),
    query: validate(request.query, req.query, 'query', errors),
    body: validate(request.body, req.body, 'body', errors),
  };
  if (errors.length === 0)
    for (const [location, value] of Object.entries(input)) unstorableFields(value, location, errors);
  if (errors.length > 0) throw new Problem(422, 'The request is not valid; see errors.', { errors });
  return input as RouteInput<never, never, never>;
}

function validate(schema: z.ZodType | undefined, value: unknown, location: string, errors: ProblemField[]): unknown {
  if (!schema) return value ?? {};
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (result.success) return result.data;
  errors.push(...(fromZodError(result.error, location).errors ?? []));
  return undefined;
}
