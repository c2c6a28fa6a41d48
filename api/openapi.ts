// The OpenAPI 3.1 document, generated from the manifest and the routes' zod
// schemas — the same schemas that validate requests, so the two cannot drift.
// Endpoints not built yet are listed too, documented as answering 501.
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { pathParams, type Endpoint } from './manifest.ts';
import type { RouteDefinition } from './route.ts';

export const problemSchema = z
  .object({
    type: z.string().describe('A URI reference naming the kind of problem, e.g. /problems/validation-failed'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional().describe('The path of the request that failed'),
    request_id: z.string().optional().describe('Also in the X-Request-Id header and the logs'),
    errors: z
      .array(z.object({ path: z.string().describe('e.g. body.email'), message: z.string() }))
      .optional()
      .describe('Each invalid field, for 422'),
  })
  .loose()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

const idempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .max(255)
    .optional()
    .describe(
      'Repeat the request with the same key to get the first answer again (Idempotent-Replayed: true); another body with the same key is a 422',
    ),
});

const problemResponse = (description: string): ResponseConfig => ({
  description,
  content: { 'application/problem+json': { schema: problemSchema } },
});

export type DocumentInfo = { title: string; version: string; serverUrl?: string };

export function buildOpenApiDocument(endpoints: Endpoint[], routes: Map<string, RouteDefinition>, info: DocumentInfo) {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An access token from POST /auth/login or POST /auth/token',
  });
  const operationIds = new Set<string>();
  for (const endpoint of endpoints) {
    const route = routes.get(endpoint.key);
    registry.registerPath({
      ...describe(endpoint, route),
      operationId: uniqueOperationId(endpoint, operationIds),
      security: endpoint.auth === 'bearer' ? [{ [bearer.name]: [] }] : [],
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description:
        'Multi-tenant API for agent-driven content operations: a headless CMS with AI generation run as background jobs paid with credits. ' +
        'Errors are RFC 9457 problem details. Lists take `limit` and `cursor`. Endpoints marked "not implemented yet" answer 501.',
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    tags: [...new Set(endpoints.map((endpoint) => endpoint.group))].sort().map((name) => ({ name })),
  });
}

function describe(endpoint: Endpoint, route: RouteDefinition | undefined): RouteConfig {
  const params =
    route?.request?.params ?? z.object(Object.fromEntries(pathParams(endpoint.path).map((name) => [name, z.string()])));
  const body = route?.request?.body;
  const responses: Record<string, ResponseConfig> = {};
  if (route) {
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = spec.schema
        ? {
            description: spec.description,
            content: { [spec.contentType ?? 'application/json']: { schema: spec.schema } },
          }
        : { description: spec.description };
    }
  } else {
    responses['501'] = problemResponse('Not implemented yet');
  }
  const hasInput = pathParams(endpoint.path).length > 0 || Boolean(route?.request?.query || body);
  if (body) {
    responses['400'] ??= problemResponse('Malformed body');
    responses['413'] ??= problemResponse('Body too large');
    responses['415'] ??= problemResponse('Unsupported media type');
  }
  if (endpoint.auth === 'bearer') {
    responses['401'] ??= problemResponse('Missing, invalid or expired token');
    responses['403'] ??= problemResponse('Authenticated, but not allowed');
  }
  if (pathParams(endpoint.path).length > 0) responses['404'] ??= problemResponse('Not found, or in another tenant');
  if (hasInput) responses['422'] ??= problemResponse('Validation failed');
  responses['500'] ??= problemResponse('Unexpected error');
  responses['504'] ??= problemResponse(`Did not complete within ${endpoint.timeoutMs / 1000} s`);
  const types = route?.request?.bodyTypes ?? ['application/json'];
  return {
    method: endpoint.method.toLowerCase() as RouteConfig['method'],
    path: endpoint.path,
    tags: [endpoint.group],
    summary: endpoint.name,
    description: [
      route ? route.description : 'Not implemented yet: answers 501.',
      `Timeout: ${endpoint.timeoutMs / 1000} s.`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    request: {
      params,
      ...(route?.request?.query ? { query: route.request.query } : {}),
      ...(route?.idempotent ? { headers: idempotencyHeader } : {}),
      ...(body
        ? { body: { required: true, content: Object.fromEntries(types.map((type) => [type, { schema: body }])) } }
        : {}),
    },
    responses,
    'x-timeout-seconds': endpoint.timeoutMs / 1000,
    'x-implemented': Boolean(route),
  } as RouteConfig;
}

function uniqueOperationId(endpoint: Endpoint, taken: Set<string>): string {
  const words = endpoint.name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const base = words
    .map((word, index) => (index === 0 ? word.toLowerCase() : word[0]!.toUpperCase() + word.slice(1).toLowerCase()))
    .join('');
  let id = base;
  // The manifest lists some endpoints twice, with and without a trailing slash.
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
  taken.add(id);
  return id;
}
