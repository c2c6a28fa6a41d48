// The OpenAPI 3.1 document: valid, complete, and generated from the same zod
// schemas that validate requests; the docs UI is served from the package.
import SwaggerParser from '@apidevtools/swagger-parser';
import request from 'supertest';
import { allEndpoints as manifest } from '../../api/manifest.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let document: Record<string, any>;
beforeAll(async () => {
  t = await startTestApp();
  document = (await request(t.app).get('/openapi.json').expect(200)).body;
});
afterAll(() => stopTestApp(t));

it('is a valid OpenAPI 3.1 document', async () => {
  expect(document.openapi).toBe('3.1.0');
  await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
});

/** Manifest rows that differ only by a trailing slash are one operation, documented at the first. */
const documented = manifest.filter(
  (endpoint, index) =>
    manifest.findIndex(
      (other) => other.method === endpoint.method && other.path.replace(/\/$/, '') === endpoint.path.replace(/\/$/, ''),
    ) === index,
);
const routeOf = (key: string) => allRoutes.find((route) => route.key === key);

/** A response or header as the document gives it, its $ref to a component followed. */
const resolved = (value: any): any =>
  value?.$ref
    ? resolved(
        value.$ref
          .replace(/^#\//, '')
          .split('/')
          .reduce((node: any, part: string) => node?.[part], document),
      )
    : value;
const responseOf = (operation: any, status: string) => resolved(operation.responses[status]);
const withToken = (access: string | object) => access !== 'public' && access !== 'public-site';

it('lists every manifest endpoint once, with its group, name, timeout and who may call it', () => {
  expect(documented.length).toBe(manifest.length - 2);
  for (const endpoint of documented) {
    const operation = document.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
    expect(operation).toBeDefined();
    expect(operation.tags).toEqual([endpoint.group]);
    expect(operation.summary).toBe(endpoint.name);
    expect(operation['x-timeout-seconds']).toBe(endpoint.timeoutMs / 1000);
    const route = routeOf(endpoint.key);
    // A built route says who may call it; it may ask for a token where the specification did not (a private file view).
    const secured = route ? withToken(route.access) : endpoint.auth === 'bearer';
    expect(operation.security).toEqual(secured ? [{ bearerAuth: [] }, { oauth2: [] }] : []);
    if (secured && route) expect(responseOf(operation, '401').headers['WWW-Authenticate']).toBeDefined();
    expect(operation.responses['504']).toBeDefined();
    for (const status of Object.keys(operation.responses)) {
      expect(responseOf(operation, status).headers['X-Request-Id']).toBeDefined();
    }
  }
});

it('documents implemented endpoints with their response schemas, the rest as 501', () => {
  for (const endpoint of documented) {
    const operation = document.paths[endpoint.path][endpoint.method.toLowerCase()];
    const route = routeOf(endpoint.key);
    expect(operation['x-implemented']).toBe(Boolean(route));
    if (route) {
      const success = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      expect(success.length).toBeGreaterThan(0);
      // No content (204), or an Accepted that says nothing more (202, when the MCP transport takes only notifications).
      const bodiless = (code: string) => code === '204' || (code === '202' && !operation.responses[code].content);
      for (const status of success.filter((code) => !bodiless(code))) {
        // JSON for most; an event stream, a file or Prometheus text for a few, each with its schema.
        const [media] = Object.values<{ schema?: unknown }>(operation.responses[status].content);
        expect(media?.schema).toBeDefined();
      }
      expect(operation.responses['501']).toBeUndefined();
      // While the database is away any of them may answer 503 with Retry-After; /health reports it in its own body.
      if (endpoint.key !== 'GET /health') {
        expect(responseOf(operation, '503')).toMatchObject({
          description: expect.stringContaining('/problems/database-unavailable'),
          headers: { 'Retry-After': expect.anything() },
        });
      }
      if (route.idempotent) {
        expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }));
        expect(responseOf(operation, success[0]!).headers['Idempotent-Replayed']).toBeDefined();
      }
    } else {
      expect(responseOf(operation, '501').content['application/problem+json'].schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
    }
  }
});

it('documents uploads as multipart with a binary file part, and files in their own media types', () => {
  const upload = document.paths['/{site_identifier}/media/'].post.requestBody.content['multipart/form-data'].schema;
  expect(upload.properties.file).toMatchObject({ type: 'string', format: 'binary' });
  expect(upload.required).toContain('file');
  const view = document.paths['/{site_identifier}/media/{media_id}/view'].get.responses;
  expect(Object.keys(view['200'].content)).toEqual(expect.arrayContaining(['image/png', 'video/mp4', 'audio/mpeg']));
  expect(Object.keys(view)).toEqual(expect.arrayContaining(['200', '206', '302', '304', '401', '416']));
  expect(resolved(view['206']).headers['Content-Range']).toBeDefined();
});

it('documents Prefer and the job answer headers on job-creating endpoints', () => {
  const tts = document.paths['/{site_identifier}/media/tts'].post;
  expect(tts.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'prefer' }));
  expect(tts.responses['202'].headers.Location).toBeDefined();
  expect(Object.keys(tts.responses)).toEqual(expect.arrayContaining(['200', '202', '402', '409', '422']));
});

it('lists the models the platform knows where a request names a model, with their vendors', () => {
  const bodyOf = (path: string) => {
    const content = resolved(document.paths[path].post.requestBody).content['application/json'].schema;
    return resolved(content);
  };
  const image = bodyOf('/{site_identifier}/media/generate').properties.model.description;
  expect(image).toContain('gpt-image-2 (openai)');
  expect(image).toContain('black-forest-labs/flux-schnell (replicate)');
  expect(image).not.toContain('eleven_multilingual_v2');
  const speech = bodyOf('/{site_identifier}/media/tts').properties.model.description;
  expect(speech).toContain('eleven_multilingual_v2 (elevenlabs)');
  expect(speech).toContain('gpt-4o-mini-tts (openai)');
});

it('uses patterns any validator can read and marks points in time as date-time', () => {
  const text = JSON.stringify(document);
  for (const [, pattern] of text.matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)) {
    expect(pattern).not.toMatch(/\/[a-z]*$/);
    expect(() => new RegExp(JSON.parse(`"${pattern}"`), 'u')).not.toThrow();
  }
  const job = document.components.schemas.Job.properties;
  for (const field of ['created_at', 'started_at', 'finished_at'])
    expect(JSON.stringify(job[field])).toContain('date-time');
});

it('writes every query parameter without null, which a query string cannot carry', () => {
  const nullable = Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).flatMap(([method, operation]: [string, any]) =>
      (operation.parameters ?? [])
        .filter((parameter: any) => parameter.in === 'query' && [parameter.schema?.type].flat().includes('null'))
        .map((parameter: any) => `${method} ${path} ${parameter.name}`),
    ),
  );
  expect(nullable).toEqual([]);
});

it('says which characters an Idempotency-Key takes, as the server checks them', () => {
  const header = document.paths['/{site_identifier}/media/tts'].post.parameters.find(
    (parameter: any) => parameter.in === 'header' && parameter.name === 'idempotency-key',
  );
  expect(header.schema.pattern).toBe('^[\\x21-\\x7e]{1,255}$');
});

it('names shared schemas as components', () => {
  expect(Object.keys(document.components.schemas)).toEqual(
    expect.arrayContaining(['Problem', 'Health', 'ServiceInfo', 'Readiness']),
  );
  expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(document.paths['/health'].get.responses['200'].content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/Health',
  });
});

it('gives each operation a unique camelCase id from its name', () => {
  const ids = Object.values(document.paths).flatMap((item: any) =>
    Object.values(item).map((operation: any) => operation.operationId as string),
  );
  expect(new Set(ids).size).toBe(documented.length);
  for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
  expect(ids).toEqual(expect.arrayContaining(['assignUserToSite', 'generateVideoVariantA', 'listAgents']));
});

describe('/docs', () => {
  it('serves the documentation page, which loads only local assets', async () => {
    const res = await request(t.app).get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset.startsWith('/docs/')).toBe(true);
      await request(t.app).get(asset).expect(200);
    }
  });

  it('points the UI at this document and never at the public validator', async () => {
    const res = await request(t.app).get('/docs/init.js').expect(200);
    expect(res.text).toContain("url: '/openapi.json'");
    expect(res.text).toContain('validatorUrl: null');
  });
});
