// The OpenAPI 3.1 document, generated from the manifest and the routes: the
// same zod schemas that validate requests, the access each route declares,
// and every answer it can give (its own, and those the request path adds:
// 401 without a token, 404 for what is not yours, 422 for bad input, 503
// while the database is away, 504 past the timeout...). The tests check every
// response they get against it. Request bodies and the main answers carry
// examples (./openapi-examples.ts); each operation says who may call it
// (./openapi-access.ts).
// An endpoint of the manifest without a route would be listed too, as answering 501.
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { scopes } from '../core/identity/access.ts';
import { idempotencyKey } from '../core/idempotency.ts';
import { pathParams, type Endpoint } from './manifest.ts';
import { accessDoc, accessLine } from './openapi-access.ts';
import { withExamples } from './openapi-examples.ts';
import { registerContentWebhooks, registerJobWebhooks } from './openapi-webhooks.ts';
import { problemResponse, retryAfterHeader } from './responses.ts';
import type { Access, HeaderSpec, ResponseSpec, RouteDefinition } from './route.ts';

export const idempotencyHeader = z.object({
  // The server's own check (a 422 otherwise), so the document says which characters it takes.
  'idempotency-key': idempotencyKey
    .optional()
    .describe(
      'Repeat the request with the same key to get the first answer again (Idempotent-Replayed: true); another body with the same key is a 422',
    ),
});

const requestIdHeader: HeaderSpec = {
  description: 'The request’s id: the caller’s X-Request-Id when it was sane, else a new one; also in the logs',
  required: true,
};

// The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), on every answer of every endpoint.
const rateLimitPolicyHeader: HeaderSpec = {
  description:
    'The limits this request counted against, as `"<policy>";q=<requests>;w=<seconds>`, comma-separated: `per-token` ' +
    '(a request with a valid access token), `per-ip` (without one, or with a token that does not verify; an IPv6 client ' +
    'by its /64), `per-tenant-jobs` (job submits, ' +
    'beside `per-token`), `webhook-signatures` (signed webhooks: failed signatures per address)',
  required: true,
};
const rateLimitHeader: HeaderSpec = {
  description:
    'What is left of each policy in RateLimit-Policy, as `"<policy>";r=<remaining>;t=<seconds until the window ends>`',
  required: true,
};

const withToken = (access: Access) => access !== 'public' && access !== 'public-site';

export type DocumentInfo = { title: string; version: string; serverUrl?: string };

/** Manifest rows that differ only by a trailing slash are one operation, documented at the first. */
const canonical = (path: string) => path.replace(/(.)\/$/, '$1');

export function buildOpenApiDocument(endpoints: Endpoint[], routes: Map<string, RouteDefinition>, info: DocumentInfo) {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An access token from POST /auth/login or POST /auth/token',
  });
  // The same bearer, got by Swagger UI's "Authorize" itself: the login is an OAuth 2.0 password grant (form-encoded
  // username and password) and /auth/token a client-credentials grant. Every secured operation takes either scheme.
  const tokenUrl = (path: string) => `${info.serverUrl ?? ''}${path}`;
  const oauth2 = registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description:
      'Sign in with a user’s e-mail address (as username) and password, or with a service account’s client id and secret ' +
      '(no scope chosen: all of the account’s). The token is then sent as the bearer.',
    flows: {
      password: { tokenUrl: tokenUrl('/auth/login'), scopes: {} },
      clientCredentials: {
        tokenUrl: tokenUrl('/auth/token'),
        scopes: Object.fromEntries(scopes.map((scope) => [scope, `The service account’s ${scope} scope`])),
      },
    },
  });
  registry.registerComponent('headers', 'RequestId', toHeader(requestIdHeader));
  registry.registerComponent('headers', 'RateLimitPolicy', toHeader(rateLimitPolicyHeader));
  registry.registerComponent('headers', 'RateLimit', toHeader(rateLimitHeader));
  // The answers the request path gives the same way on every route are written once and referred to.
  const shared = new Map<string, ReferenceObject>();
  const components: Components = {
    shared(name, spec) {
      let ref = shared.get(name);
      if (!ref)
        shared.set(name, (ref = registry.registerComponent('responses', name, toProblemResponse(spec) as never).ref));
      return ref;
    },
  };
  const operationIds = new Set<string>();
  const documented = new Set<string>();
  for (const endpoint of endpoints) {
    const key = `${endpoint.method} ${canonical(endpoint.path)}`;
    if (documented.has(key)) continue;
    documented.add(key);
    const route = routes.get(endpoint.key);
    const secured = route ? withToken(route.access) : endpoint.auth === 'bearer';
    registry.registerPath({
      ...describe(endpoint, route, components),
      operationId: operationId(endpoint, operationIds),
      security: secured ? [{ [bearer.name]: [] }, { [oauth2.name]: [] }] : [],
    });
  }
  registerJobWebhooks(registry);
  registerContentWebhooks(registry);
  const generator = new OpenApiGeneratorV31(registry.definitions);
  const document = withoutNullQueryValues(
    generator.generateDocument({
      openapi: '3.1.0',
      info: {
        title: info.title,
        version: info.version,
        description:
          'Multi-tenant API for agent-driven content operations: a headless CMS with AI generation run as background jobs paid with credits. ' +
          "Errors are RFC 9457 problem details; each one's `type` (e.g. /problems/validation-failed) is a page explaining it, " +
          'and /problems/ lists them. Lists take `limit` and `cursor`. Trailing slashes are optional.' +
          // Only while an endpoint of the manifest has no route (none has, today: test/api/manifest.test.ts).
          (endpoints.some((endpoint) => !routes.has(endpoint.key))
            ? ' Endpoints marked "not implemented yet" answer 501.'
            : ''),
      },
      servers: [{ url: info.serverUrl ?? '/' }],
      tags: [...new Set(endpoints.map((endpoint) => endpoint.group))].sort().map((name) => ({ name })),
    }),
  );
  return withExamples(document);
}

/**
 * A query string cannot carry null, but a coerced number that takes 0 is
 * written as `["integer", "null"]` (null coerces to 0): the null is taken out.
 */
function withoutNullQueryValues<D extends { paths?: object }>(document: D): D {
  type Operation = { parameters?: { in: string; schema?: { type?: unknown } }[] };
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[])
    for (const operation of Object.values(item))
      for (const parameter of operation.parameters ?? [])
        if (parameter.in === 'query' && Array.isArray(parameter.schema?.type)) {
          const types = parameter.schema.type.filter((type) => type !== 'null');
          parameter.schema.type = types.length === 1 ? types[0] : types;
        }
  return document;
}

type ReferenceObject = { $ref: string };
type Components = { shared(name: string, spec: ResponseSpec): ReferenceObject };

const toHeader = (spec: HeaderSpec) => ({
  description: spec.description,
  required: spec.required ?? false,
  schema: spec.schema ?? { type: 'string' },
});

function headersOf(specs: Record<string, HeaderSpec>): Record<string, unknown> {
  return {
    'X-Request-Id': { $ref: '#/components/headers/RequestId' },
    'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
    RateLimit: { $ref: '#/components/headers/RateLimit' },
    ...Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, toHeader(spec)])),
  };
}

function toResponse(spec: ResponseSpec, extraHeaders: Record<string, HeaderSpec>): ResponseConfig {
  const types = [spec.contentType ?? 'application/json'].flat();
  return {
    description: spec.description,
    headers: headersOf({ ...extraHeaders, ...spec.headers }) as ResponseConfig['headers'],
    ...(spec.schema ? { content: Object.fromEntries(types.map((type) => [type, { schema: spec.schema! }])) } : {}),
  };
}

/**
 * A shared problem answer as a response component: plain JSON, the Problem
 * schema by reference (it is a component already: routes' own problem
 * answers name it).
 */
const toProblemResponse = (spec: ResponseSpec) => ({
  description: spec.description,
  headers: headersOf(spec.headers ?? {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** What the request path itself may answer for this route, beside the route's own responses. */
function commonResponses(
  endpoint: Endpoint,
  route: RouteDefinition | undefined,
  components: Components,
): Record<number, ResponseSpec | ReferenceObject> {
  const { shared } = components;
  const common: Record<number, ResponseSpec | ReferenceObject> = {};
  if (!route) {
    common[501] = shared('NotImplemented', problemResponse('Not implemented yet'));
  } else {
    const request = route.request ?? {};
    const hasBody = Boolean(request.body || request.rawBody);
    const paged = request.query instanceof z.ZodObject && 'cursor' in request.query.shape;
    if (hasBody) common[400] = shared('MalformedBody', problemResponse('The body is malformed'));
    if (paged) common[400] = shared('BadCursor', problemResponse('The cursor is not one this API gave'));
    // A route that reads If-Match (api/schemas.ts ifMatchVersion) refuses one that is not a list of versions.
    if (!common[400] && request.headers?.shape['if-match'])
      common[400] = shared('BadIfMatch', problemResponse('If-Match is not a list of this resource’s ETags'));
    if (withToken(route.access)) {
      common[401] = shared(
        'Unauthorized',
        problemResponse('Missing, invalid or expired token', {
          'WWW-Authenticate': { description: 'The scheme to authenticate with: Bearer', required: true },
        }),
      );
      common[403] = shared(
        'Forbidden',
        problemResponse(
          'Authenticated, but the role or scopes do not allow this; `missing_permissions` names every scope lacking',
        ),
      );
    }
    if (request.headers?.shape['preview-token']) {
      common[401] = shared(
        'PreviewTokenRefused',
        problemResponse('The Preview-Token is unknown, expired or revoked, or is not for this site'),
      );
    }
    if (hasBody) {
      common[413] = shared('PayloadTooLarge', problemResponse('The body is too large'));
      common[415] = shared(
        'UnsupportedMediaType',
        problemResponse('The body is not of a media type this endpoint takes'),
      );
    }
    if (route.idempotent) {
      common[409] = shared(
        'IdempotencyKeyInUse',
        problemResponse('A request with this Idempotency-Key is still being processed', {
          'Retry-After': retryAfterHeader,
        }),
      );
    }
    const hasInput =
      pathParams(endpoint.path).length > 0 || Boolean(request.query || hasBody) || Boolean(route.idempotent);
    if (hasInput) {
      common[422] = shared(
        'ValidationFailed',
        problemResponse('The request is not valid; `errors` lists each problem'),
      );
    }
  }
  if (pathParams(endpoint.path).length > 0) {
    common[404] = shared('NotFound', problemResponse('Not found, or in another tenant'));
  }
  common[429] = shared(
    'TooManyRequests',
    problemResponse('Over a rate limit: the problem’s `policy` and the RateLimit headers say which', {
      'Retry-After': retryAfterHeader,
    }),
  );
  common[500] = shared('InternalError', problemResponse('Unexpected error; logged with the request id'));
  if (route) common[503] = shared('DatabaseUnavailable', databaseUnavailableResponse);
  common[504] = shared('Timeout', problemResponse('The endpoint’s timeout (x-timeout-seconds) passed'));
  return common;
}

const databaseUnavailableResponse = problemResponse(
  'The database cannot be reached (/problems/database-unavailable): try again after Retry-After',
  { 'Retry-After': retryAfterHeader },
);

/**
 * A route's own 503 problem (a provider not configured, say), which the
 * request path may also answer when the database is away: then with
 * Retry-After. A 503 that is not a problem (/health's report) is the route's
 * own answer to the database being away, and stays as it is.
 */
function orDatabaseUnavailable(own: ResponseSpec): ResponseSpec {
  if (own.contentType !== 'application/problem+json') return own;
  return {
    ...own,
    description: `${own.description}; or ${databaseUnavailableResponse.description.replace(/^The/, 'the')}`,
    headers: { 'Retry-After': { ...retryAfterHeader, required: false }, ...own.headers },
  };
}

function describe(endpoint: Endpoint, route: RouteDefinition | undefined, components: Components): RouteConfig {
  const params =
    route?.request?.params ?? z.object(Object.fromEntries(pathParams(endpoint.path).map((name) => [name, z.string()])));
  const request = route?.request ?? {};
  const replayed: Record<string, HeaderSpec> = route?.idempotent
    ? { 'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request' } }
    : {};
  const responses: Record<string, ResponseConfig | ReferenceObject> = {};
  // A route's own description of a status wins over the request path's generic one; its own 503 says both.
  const common = commonResponses(endpoint, route, components);
  const all = { ...common, ...route?.responses };
  if (route?.responses[503] && common[503]) all[503] = orDatabaseUnavailable(route.responses[503]);
  for (const [status, spec] of Object.entries(all)) {
    responses[status] = '$ref' in spec ? spec : toResponse(spec, status.startsWith('2') ? replayed : {});
  }
  const bodies = [
    ...(request.body
      ? (request.bodyTypes ?? ['application/json']).map((type) => ({ contentType: type, schema: request.body! }))
      : []),
    ...(request.rawBody ?? []),
  ];
  const headers = route?.idempotent
    ? (request.headers ?? z.object({})).extend(idempotencyHeader.shape)
    : request.headers;
  return {
    method: endpoint.method.toLowerCase() as RouteConfig['method'],
    path: endpoint.path,
    tags: [endpoint.group],
    summary: endpoint.name,
    description: [
      route ? route.description : 'Not implemented yet: answers 501.',
      route ? accessLine(route.access) : undefined,
      `Timeout: ${endpoint.timeoutMs / 1000} s.`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    request: {
      params,
      ...(request.query ? { query: request.query } : {}),
      ...(headers ? { headers } : {}),
      ...(bodies.length
        ? {
            body: {
              required: bodies.some((body) =>
                'required' in body ? body.required !== false : !body.schema.safeParse(undefined).success,
              ),
              content: Object.fromEntries(bodies.map((body) => [body.contentType, { schema: body.schema }])),
            },
          }
        : {}),
    },
    responses,
    'x-timeout-seconds': endpoint.timeoutMs / 1000,
    'x-implemented': Boolean(route),
    ...(route ? { 'x-access': accessDoc(route.access) } : {}),
  };
}

const articles = new Set(['a', 'an', 'the']);

/** camelCase of the endpoint's name without articles: "Assign a user to a site" → assignUserToSite. */
function operationId(endpoint: Endpoint, taken: Set<string>): string {
  const words = endpoint.name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .filter((word, index, all) => !(articles.has(word.toLowerCase()) && index < all.length - 1));
  const id = words
    .map((word, index) => (index === 0 ? word.toLowerCase() : word[0]!.toUpperCase() + word.slice(1).toLowerCase()))
    .join('');
  if (taken.has(id)) throw new Error(`Two endpoints would have the operation id ${id}: rename one in the manifest`);
  taken.add(id);
  return id;
}
