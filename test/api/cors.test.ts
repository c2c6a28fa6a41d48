import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

describe('CORS', () => {
  let open: TestApp;
  let closed: TestApp;
  beforeAll(async () => {
    open = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example, https://admin.example' } });
    closed = await startTestApp();
  });
  afterAll(async () => {
    await stopTestApp(open);
    await stopTestApp(closed);
  });

  it('allows the configured origins, preflight included', async () => {
    const res = await request(open.app)
      .options('/health')
      .set('Origin', 'https://admin.example')
      .set('Access-Control-Request-Method', 'GET')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://admin.example');
  });

  it('does not allow other origins', async () => {
    const res = await request(open.app).get('/health/live').set('Origin', 'https://evil.example');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS headers when CORS_ORIGINS is unset', async () => {
    const res = await request(closed.app).get('/health/live').set('Origin', 'https://app.example');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
