// CORS: local origins outside production with nothing set, the named ones
// when CORS_ORIGINS is set (and only those in production), and a preflight
// answered 204 for any path, before the dispatcher's 405.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

describe('CORS', () => {
  let local: TestApp;
  let named: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    local = await startTestApp();
    named = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example, https://admin.example' } });
    production = await startTestApp({ env: { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) } });
  });
  afterAll(async () => {
    await stopTestApp(local);
    await stopTestApp(named);
    await stopTestApp(production);
  });

  it('allows a front end on any local port outside production, with nothing set', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'http://localhost']) {
      const res = await request(local.app).get('/health/live').set('Origin', origin).expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
    }
    const other = await request(local.app).get('/health/live').set('Origin', 'https://app.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a preflight 204 for a route that has no OPTIONS, naming the methods and the headers asked', async () => {
    const res = await request(local.app)
      .options('/some-site/elements/')
      .set('Origin', 'http://localhost:5173')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, idempotency-key')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type, idempotency-key');
    expect(res.headers['access-control-max-age']).toBe('600');
    // Bearer tokens, not cookies.
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('lets a browser script read the headers clients act on', async () => {
    const res = await request(local.app)
      .post('/auth/login')
      .set('Origin', 'http://localhost:5173')
      .send({ username: 'nobody@example.com', password: 'wrong-password' });
    const exposed = String(res.headers['access-control-expose-headers']).split(',');
    for (const name of ['Location', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'ETag'])
      expect(exposed).toContain(name);
  });

  it('leaves an OPTIONS that is no preflight to the 405 with Allow', async () => {
    const res = await request(local.app).options('/auth/login').expect(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('allows the configured origins, preflight included, and no other', async () => {
    const res = await request(named.app)
      .options('/health')
      .set('Origin', 'https://admin.example')
      .set('Access-Control-Request-Method', 'GET')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://admin.example');
    const other = await request(named.app).get('/health/live').set('Origin', 'https://evil.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const localhost = await request(named.app).get('/health/live').set('Origin', 'http://localhost:5173');
    expect(localhost.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows no origin in production unless CORS_ORIGINS names it', async () => {
    const res = await request(production.app).get('/health/live').set('Origin', 'http://localhost:5173');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
