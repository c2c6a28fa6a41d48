import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp, type App } from '../../api/app.ts';
import { extensions } from '../../api/manifest.ts';
import { createServices, closeServices } from '../../core/boot.ts';
import { createLogger } from '../../core/logger.ts';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { checkedAgainstDocument, startTestApp, stopTestApp, testConfig, type TestApp } from '../helpers/app.ts';
import { password } from '../helpers/factories.ts';
import { staffedTenant } from '../helpers/identity.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { startFakeRedis, type FakeRedis } from '../helpers/fake-redis.ts';
import { sql } from '../../db/pool.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';

let t: TestApp;

/** An app whose database connection goes through a relay that is then cut (its answers checked against the document). */
async function withLostDatabase(check: (app: App) => Promise<void>): Promise<void> {
  const target = new URL(t.database.url);
  const proxy = await startTcpProxy(target.hostname, Number(target.port));
  target.port = String(proxy.port);
  const services = await createServices(testConfig(), target.toString(), createLogger('silent'), 'test');
  try {
    await proxy.cut();
    await check(checkedAgainstDocument(createApp(services), {}));
  } finally {
    await closeServices(services);
  }
}
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

describe('GET /', () => {
  it('names the service, links the docs and counts the built endpoints', async () => {
    const res = await request(t.app).get('/').set('Host', 'api.test').expect(200);
    expect(res.body).toEqual({
      name: 'content-agent-platform',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      docs_url: 'http://api.test/docs',
      openapi_url: 'http://api.test/openapi.json',
      endpoints: { total: 234, implemented: expect.any(Number), beyond_spec: extensions.length },
    });
    expect(res.body.endpoints.implemented).toBeGreaterThanOrEqual(5);
  });
});

describe('GET /health/live', () => {
  it('answers without touching dependencies', async () => {
    const res = await request(t.app).get('/health/live').expect(200);
    expect(res.body).toEqual({ status: 'ok', uptime_seconds: expect.any(Number) });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('a request line with a whole URL (absolute-form)', () => {
  it('is routed by its path, as servers must accept it', async () => {
    const server = createServer(t.app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        httpRequest({ port, host: '127.0.0.1', path: `http://127.0.0.1:${port}/health/live?x=1` }, resolve)
          .on('error', reject)
          .end(),
      );
      res.resume();
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toContain('"per-ip"');
    } finally {
      server.close();
    }
  });
});

describe('GET /health/ready', () => {
  it('is ready once the database answers and every migration is applied', async () => {
    const res = await request(t.app).get('/health/ready').expect(200);
    expect(res.body.status).toBe('ready');
    expect(res.body.checks.database.status).toBe('up');
    expect(res.body.checks.migrations).toMatchObject({ status: 'up', pending: [] });
  });

  it('is 503 while a migration is pending', async () => {
    const pending = {
      id: Math.max(...t.services.migrations.map((file) => file.id)) + 1,
      name: '9999_future.sql',
      sql: 'select 1',
      checksum: 'x',
    };
    const app = createApp({ ...t.services, migrations: [...t.services.migrations, pending] });
    const res = await request(app).get('/health/ready').expect(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.checks.migrations).toMatchObject({ status: 'down', pending: ['9999_future.sql'] });
  });

  it('is 503 on a database that was never migrated', async () => {
    const empty = await createTestDatabase({ empty: true });
    const services = await createServices(testConfig(), empty.url, createLogger('silent'), 'test');
    try {
      const res = await request(createApp(services)).get('/health/ready').expect(503);
      expect(res.body.detail).toBe('Migrations are not applied.');
    } finally {
      await closeServices(services);
      await empty.drop();
    }
  });

  it('is 503 when the database stops answering', async () => {
    await withLostDatabase(async (app) => {
      const res = await request(app).get('/health/ready').expect(503);
      expect(res.body.checks.database.status).toBe('down');
      expect(res.body.detail).toBe('The database does not answer.');
    });
  });
});

describe('GET /health', () => {
  it('reports each dependency; without a worker heartbeat the service is degraded', async () => {
    const res = await request(t.app).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'degraded',
      checks: {
        database: { status: 'up', latency_ms: expect.any(Number) },
        migrations: { status: 'up', pending: [] },
        cache: { status: 'up', store: 'memory' },
        workers: { status: 'down', last_heartbeat_at: null },
      },
    });
  });

  it('is ok once a worker has beaten recently', async () => {
    await t.services.db.query(sql.typeAlias('void')`
      insert into worker_heartbeats (name, worker_id) values ('queue', 'test-worker')`);
    const res = await request(t.app).get('/health').expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.checks.workers.last_heartbeat_at).toEqual(expect.any(String));
    await t.services.db.query(sql.typeAlias('void')`delete from worker_heartbeats`);
  });

  it('is 503 and down when the database stops answering', async () => {
    await withLostDatabase(async (app) => {
      const res = await request(app).get('/health').expect(503);
      expect(res.body.status).toBe('down');
      expect(res.body.checks.database.status).toBe('down');
    });
  });

  it('does not count queued jobs as a heartbeat', async () => {
    await t.services.db.transaction((tx) => enqueue(tx, 'system__heartbeat', {}));
    const res = await request(t.app).get('/health').expect(200);
    expect(res.body.checks.workers.status).toBe('down');
  });
});

describe('GET /health/cachestore', () => {
  it('reports the in-process store when REDIS_URL is unset', async () => {
    const res = await request(t.app).get('/health/cachestore').expect(200);
    expect(res.body).toEqual({ status: 'up', store: 'memory', latency_ms: expect.any(Number) });
  });

  describe('with REDIS_URL', () => {
    let redis: FakeRedis;
    beforeAll(async () => {
      redis = await startFakeRedis();
    });
    afterAll(() => redis.close());

    it('reports Redis and that it answers', async () => {
      const services = await createServices(
        testConfig({ REDIS_URL: redis.url }),
        t.database.url,
        createLogger('silent'),
        'test',
      );
      try {
        const res = await request(createApp(services)).get('/health/cachestore').expect(200);
        expect(res.body).toEqual({ status: 'up', store: 'redis', latency_ms: expect.any(Number) });
        expect(redis.commands).toContain('PING');
      } finally {
        await closeServices(services);
      }
    });

    it('is 503 when Redis does not answer', async () => {
      const services = await createServices(
        testConfig({ REDIS_URL: 'redis://127.0.0.1:1' }),
        t.database.url,
        createLogger('silent'),
        'test',
      );
      try {
        const res = await request(createApp(services)).get('/health/cachestore').expect(503);
        expect(res.body.check).toMatchObject({ status: 'down', store: 'redis' });
      } finally {
        await closeServices(services);
      }
    });
  });
});

describe('a request that needs the database while it cannot be reached', () => {
  it('is a 503 problem with Retry-After, at whichever step needed it', async () => {
    const { site, editor } = await staffedTenant(t);
    await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
    await withLostDatabase(async (app) => {
      const answers = [
        // The token is checked against its session,
        await request(app).get(`/${site.slug}/posts/`).set(editor.auth),
        // a sign-in is counted against its limits first,
        await request(app).post('/auth/login').send({ username: editor.user.email, password }),
        // and a public read looks its site up.
        await request(app).get(`/public/${site.slug}/posts`),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ type: '/problems/database-unavailable', status: 503 });
      }
    });
  });
});
