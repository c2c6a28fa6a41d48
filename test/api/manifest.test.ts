// The route manifest: all 234 endpoints of the specification, each registered
// and reaching its own handler (no route swallowed by a broader pattern).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { allEndpoints, extensions, manifest, parseManifest, pathParams, toExpressPath } from '../../api/manifest.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

const specFile = path.join(import.meta.dirname, '..', '..', '..', 'shared', 'spec', 'endpoints.tsv');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

it('lists the 234 endpoints in 32 groups', () => {
  expect(manifest).toHaveLength(234);
  expect(new Set(manifest.map((endpoint) => endpoint.group)).size).toBe(32);
  expect(new Set(manifest.map((endpoint) => endpoint.key)).size).toBe(234);
});

(existsSync(specFile) ? it : it.skip)('holds the same facts as the specification’s endpoints.tsv', () => {
  const spec = parseManifest(readFileSync(specFile, 'utf8'));
  const facts = (list: typeof manifest) =>
    list.map((e) => [e.group, e.method, e.path, e.name, e.auth, e.timeoutMs].join('|')).sort();
  expect(facts(manifest)).toEqual(facts(spec));
});

it('claims only manifest and extension endpoints with its route modules', () => {
  const keys = new Set(allEndpoints.map((endpoint) => endpoint.key));
  for (const route of allRoutes) expect(keys.has(route.key)).toBe(true);
});

it('converts specification paths to Express paths', () => {
  expect(toExpressPath('/{site_identifier}/media/{media_id}')).toBe('/:site_identifier/media/:media_id');
  expect(pathParams('/api/agents/{agent_id}/tenants/{tenant_id}')).toEqual(['agent_id', 'tenant_id']);
});

const sample = (name: string) =>
  name === 'site_identifier'
    ? 'demo-site'
    : name === 'provider'
      ? 'google'
      : name === 'prompt_type'
        ? 'system'
        : '00000000-0000-4000-8000-000000000001';

it('adds endpoints beyond the specification without shadowing any of it', () => {
  const specKeys = new Set(manifest.map((endpoint) => endpoint.key));
  expect(extensions.length).toBeGreaterThan(0);
  for (const endpoint of extensions) {
    expect(endpoint.source).toBe('extension');
    expect(specKeys.has(endpoint.key)).toBe(false);
  }
});

describe.each(manifest.map((endpoint) => [endpoint.key, endpoint] as const))('%s', (_key, endpoint) => {
  it('is registered and reaches its own handler', async () => {
    const url = endpoint.path.replace(/\{([a-z_]+)\}/g, (_match, name: string) => sample(name));
    const requestTo = request(t.app)[endpoint.method.toLowerCase() as 'get'];
    const res = await requestTo(url)
      .set('Content-Type', 'application/json')
      .send(endpoint.method === 'GET' ? undefined : '{}');
    // Express's default 404 is an HTML "Cannot GET" page; ours are problems.
    expect(res.text).not.toMatch(/Cannot (GET|POST|PUT|PATCH|DELETE)/);
    if (res.status === 501) {
      // `/api/agents/` and `/api/agents` are one endpoint (trailing slash optional), answered by the first.
      const path = endpoint.path.length > 1 ? endpoint.path.replace(/\/$/, '') : endpoint.path;
      const served = manifest.find(
        (other) => other.method === endpoint.method && [path, `${path}/`].includes(other.path),
      );
      expect(res.body.detail).toBe(
        `${endpoint.method} ${served?.path} (${endpoint.group}: ${endpoint.name}) is not implemented yet.`,
      );
    } else {
      // One route serves a path with and without its trailing slash.
      const withoutSlash = (key: string) => key.replace(/(.)\/$/, '$1');
      expect(allRoutes.some((route) => withoutSlash(route.key) === withoutSlash(endpoint.key))).toBe(true);
      // A handler may answer 404 for what it looks up, never the router for the path.
      expect(res.body.detail ?? '').not.toMatch(/^No endpoint/);
    }
  });
});
