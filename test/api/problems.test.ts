// The error contract, exercised through routes built on the real machinery:
// every failure is application/problem+json and none leaks internals.
import request from 'supertest';
import { z } from 'zod';
import { parseManifest } from '../../api/manifest.ts';
import { problemResponse } from '../../api/responses.ts';
import { defineRoute } from '../../api/route.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { allEndpoints as manifest } from '../../api/manifest.ts';
import { Problem } from '../../core/errors.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

const testEndpoints = parseManifest(
  [
    'group\tmethod\tpath\tname\tauth\ttimeout',
    'Test\tPOST\t/things/{thing_id}\tCreate Thing\tpublic\t20s',
    'Test\tGET\t/boom\tExplode\tpublic\t20s',
    'Test\tGET\t/conflict\tConflict\tpublic\t20s',
  ].join('\n'),
);

const testRoutes = [
  defineRoute({
    key: 'POST /things/{thing_id}',
    access: 'public',
    request: {
      params: z.object({ thing_id: z.uuid() }),
      query: z.object({ dry_run: z.enum(['true', 'false']).optional() }),
      body: z.object({ name: z.string().min(1), count: z.number().int().positive() }),
    },
    responses: {
      201: { description: 'Created', schema: z.object({ id: z.uuid(), name: z.string(), count: z.number() }) },
    },
    async handler({ params, body }) {
      return { status: 201, body: { id: params.thing_id, ...body } };
    },
  }),
  defineRoute({
    key: 'GET /boom',
    access: 'public',
    responses: { 200: { description: 'Never' } },
    async handler() {
      throw new Error('secret connection string postgres://user:hunter2@db');
    },
  }),
  defineRoute({
    key: 'GET /conflict',
    access: 'public',
    responses: { 200: { description: 'Never' }, 409: problemResponse('Always') },
    async handler() {
      throw new Problem(409, 'That slug is taken.');
    },
  }),
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    endpoints: [...manifest, ...testEndpoints],
    routes: [...allRoutes, ...testRoutes],
    env: { BODY_LIMIT: '1kb' },
  });
});
afterAll(() => stopTestApp(t));

const id = '3f0c1f9e-8b1a-4c43-9a55-0c7f3b6a2d10';

function expectProblem(res: request.Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: expect.stringMatching(/^\/problems\//), title: expect.any(String), status });
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+|node_modules/);
}

it('accepts a valid request', async () => {
  const res = await request(t.app).post(`/things/${id}`).send({ name: 'a', count: 2 }).expect(201);
  expect(res.body).toEqual({ id, name: 'a', count: 2 });
});

it('answers an unknown route with a 404 problem, not Express’s HTML page', async () => {
  const res = await request(t.app).get('/no/such/thing');
  expectProblem(res, 404);
  expect(res.body.detail).toBe('No endpoint GET /no/such/thing.');
  expect(res.body.instance).toBe('/no/such/thing');
});

it('answers malformed JSON with 400', async () => {
  const res = await request(t.app).post(`/things/${id}`).set('Content-Type', 'application/json').send('{"name": ');
  expectProblem(res, 400);
  expect(res.body.detail).toBe('The request body is not valid JSON.');
});

it('answers an invalid body with 422 and each field in errors', async () => {
  const res = await request(t.app).post(`/things/${id}`).send({ name: '', count: -1 });
  expectProblem(res, 422);
  expect(res.body.errors).toEqual(
    expect.arrayContaining([
      { path: 'body.name', message: expect.any(String) },
      { path: 'body.count', message: expect.any(String) },
    ]),
  );
});

it('answers a missing body with 422', async () => {
  const res = await request(t.app).post(`/things/${id}`);
  expectProblem(res, 422);
  expect(res.body.errors[0].path).toBe('body');
});

it('validates path and query parameters too', async () => {
  const res = await request(t.app).post('/things/not-a-uuid?dry_run=maybe').send({ name: 'a', count: 1 });
  expectProblem(res, 422);
  expect(res.body.errors.map((error: { path: string }) => error.path).sort()).toEqual([
    'params.thing_id',
    'query.dry_run',
  ]);
});

it('answers a body of another media type with 415', async () => {
  const res = await request(t.app).post(`/things/${id}`).set('Content-Type', 'text/plain').send('name=a');
  expectProblem(res, 415);
  expect(res.headers['accept-post']).toBe('application/json');
});

it('answers an oversized body with 413', async () => {
  const res = await request(t.app)
    .post(`/things/${id}`)
    .send({ name: 'x'.repeat(2048), count: 1 });
  expectProblem(res, 413);
});

it('answers an unexpected error with a bare 500 that hides the cause', async () => {
  const res = await request(t.app).get('/boom');
  expectProblem(res, 500);
  expect(JSON.stringify(res.body)).not.toContain('hunter2');
  expect(res.body.detail).toMatch(/logged with the request id/);
});

it('answers a failure in the steps ahead of Express (serving a kept answer) with the same bare 500', async () => {
  const cache = t.services.accessCache;
  const known = cache.knownPublicSite.bind(cache);
  cache.knownPublicSite = () => {
    throw new Error('secret cache store postgres://user:hunter2@db');
  };
  try {
    const res = await request(t.app).get('/public/some-site/locales').set('X-Request-Id', 'early-1');
    expectProblem(res, 500);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(res.body.request_id).toBe('early-1');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  } finally {
    cache.knownPublicSite = known;
  }
  await request(t.app).get('/public/some-site/locales').expect(404);
});

it('passes a domain problem through with its status', async () => {
  const res = await request(t.app).get('/conflict');
  expectProblem(res, 409);
  expect(res.body.detail).toBe('That slug is taken.');
});

it('answers a known path with the wrong method with 405 and Allow', async () => {
  const res = await request(t.app).delete('/health/live');
  expectProblem(res, 405);
  expect(res.headers.allow).toBe('GET');
});

it('has every endpoint built: none is left answering 501', async () => {
  // A manifest row without a route would be served as a 501 placeholder (api/mount.ts) and marked so in the document.
  const paths = (await request(t.app).get('/openapi.json').expect(200)).body.paths as Record<
    string,
    Record<string, { 'x-implemented'?: boolean }>
  >;
  const unbuilt = Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) =>
      operation['x-implemented'] === false ? [`${method.toUpperCase()} ${path}`] : [],
    ),
  );
  expect(unbuilt).toEqual([]);
});

it('keeps a sane caller request id and replaces an unsafe one', async () => {
  const kept = await request(t.app).get('/health/live').set('X-Request-Id', 'trace-123');
  expect(kept.headers['x-request-id']).toBe('trace-123');
  const replaced = await request(t.app).get('/health/live').set('X-Request-Id', 'bad id\twith spaces');
  expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
});

it('sends security headers', async () => {
  const res = await request(t.app).get('/health/live');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['x-powered-by']).toBeUndefined();
});
