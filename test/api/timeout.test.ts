// The endpoint timeout: the client gets a 504 problem and PostgreSQL stops
// running the statement, rather than finishing work nobody will read.
import request from 'supertest';
import { z } from 'zod';
import { allEndpoints as manifest, parseManifest } from '../../api/manifest.ts';
import { defineRoute } from '../../api/route.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { pollUntil } from '../helpers/poll.ts';

const slow = parseManifest(
  ['group\tmethod\tpath\tname\tauth\ttimeout', 'Test\tGET\t/slow\tSlow\tpublic\t1s'].join('\n'),
);

const slowRoute = defineRoute({
  key: 'GET /slow',
  access: 'public',
  responses: { 200: { description: 'Never in time' } },
  async handler(_input, { db }) {
    await db.connect((connection) => connection.query(sql.unsafe`select pg_sleep(30) /* slow-endpoint */`));
    return { body: { finished: true } };
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ endpoints: [...manifest, ...slow], routes: [...allRoutes, slowRoute] });
});
afterAll(() => stopTestApp(t));

const running = z.object({ count: z.number() });
const sleepingStatements = () =>
  t.services.db.oneFirst(sql.type(running)`
    select count(*)::int as count from pg_stat_activity
    where datname = current_database() and state = 'active' and query like '%slow-endpoint%' and pid <> pg_backend_pid()`);

it('answers 504 at the deadline and cancels the running statement', async () => {
  const started = Date.now();
  const res = await request(t.app).get('/slow');
  expect(res.status).toBe(504);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: '/problems/timeout',
    status: 504,
    detail: 'The request did not complete within 1 s.',
  });
  expect(Date.now() - started).toBeLessThan(25_000);

  // The cancel is sent at the deadline; give the server a moment to act on it.
  expect(await pollUntil(sleepingStatements, (remaining) => remaining === 0, { everyMs: 100 })).toBe(0);
});

it('keeps serving after a timeout', async () => {
  await request(t.app).get('/health/ready').expect(200);
});

it('frees every pooled connection when all of them belong to requests past their deadline', async () => {
  // A pool of two, and three requests: two hold its connections, the third waits for one.
  const small = await startTestApp({
    endpoints: [...manifest, ...slow],
    routes: [...allRoutes, slowRoute],
    env: { DATABASE_POOL_SIZE: '2' },
  });
  try {
    const answers = await Promise.all([1, 2, 3].map(() => request(small.app).get('/slow')));
    expect(answers.map((res) => res.status)).toEqual([504, 504, 504]);
    // The cancels did not need the pool, so the pool serves again at once.
    await request(small.app).get('/health/ready').expect(200);
  } finally {
    await stopTestApp(small);
  }
});
