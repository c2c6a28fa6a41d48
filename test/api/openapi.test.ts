// The OpenAPI 3.1 document: valid, complete, and generated from the same zod
// schemas that validate requests; the docs UI is served from the package.
import SwaggerParser from '@apidevtools/swagger-parser';
import request from 'supertest';
import { allEndpoints as manifest } from '../../api/manifest.ts';
import { allRoutes } from '../../api/routes.ts';
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

it('lists every manifest endpoint with its group, name, timeout and auth', () => {
  for (const endpoint of manifest) {
    const operation = document.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
    expect(operation).toBeDefined();
    expect(operation.tags).toEqual([endpoint.group]);
    expect(operation.summary).toBe(endpoint.name);
    expect(operation['x-timeout-seconds']).toBe(endpoint.timeoutMs / 1000);
    expect(operation.security).toEqual(endpoint.auth === 'bearer' ? [{ bearerAuth: [] }] : []);
    if (endpoint.auth === 'bearer') expect(operation.responses['401']).toBeDefined();
    expect(operation.responses['504']).toBeDefined();
  }
});

it('documents implemented endpoints with their response schemas, the rest as 501', () => {
  const implemented = new Set<string>(allRoutes.map((route) => route.key));
  for (const endpoint of manifest) {
    const operation = document.paths[endpoint.path][endpoint.method.toLowerCase()];
    expect(operation['x-implemented']).toBe(implemented.has(endpoint.key));
    if (implemented.has(endpoint.key)) {
      const success = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      expect(success.length).toBeGreaterThan(0);
      for (const status of success.filter((code) => code !== '204')) {
        // JSON for most; an event stream or Prometheus text for a few, each with its schema.
        const [media] = Object.values(operation.responses[status].content) as { schema?: unknown }[];
        expect(media?.schema).toBeDefined();
      }
      expect(operation.responses['501']).toBeUndefined();
    } else {
      expect(operation.responses['501'].content['application/problem+json'].schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
    }
  }
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

it('gives each operation a unique id', () => {
  const ids = Object.values(document.paths).flatMap((item: any) =>
    Object.values(item).map((operation: any) => operation.operationId),
  );
  expect(new Set(ids).size).toBe(manifest.length);
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
