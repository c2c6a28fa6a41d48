// Walks every implemented route with every kind of caller and compares the
// status with test/access/matrix.tsv, the checked-in statement of who may do
// what. A route added without a matrix row fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { allRoutes } from '../../api/all-routes.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeStripe, stripeEnv, type FakeStripe } from '../helpers/fake-stripe.ts';
import { startFakeSmtp, type FakeSmtp } from '../helpers/smtp.ts';
import { matrixStripeSecret, matrixWebhookSecret, requests, tenantAIntact } from './requests.ts';
import { buildWorld, callers, type CallerName, type World } from './world.ts';

const [header, ...lines] = readFileSync(path.join(import.meta.dirname, 'matrix.tsv'), 'utf8')
  .trim()
  .split('\n');
const columns = header!.split('\t');
const rows = lines.map((line) => {
  const cells = line.split('\t');
  const expected = Object.fromEntries(
    callers.map((caller) => [caller, Number(cells[columns.indexOf(caller)])]),
  ) as Record<CallerName, number>;
  return { key: `${cells[0]} ${cells[1]}`, method: cells[0]!.toLowerCase() as 'get', expected };
});

let t: TestApp;
let world: World;
let stripe: FakeStripe;
let smtp: FakeSmtp;
beforeAll(async () => {
  stripe = await startFakeStripe();
  smtp = await startFakeSmtp();
  t = await startTestApp({
    env: {
      ...stripeEnv(stripe, matrixStripeSecret),
      // The SMTP check answers; no worker runs, so nothing is sent.
      SMTP_URL: smtp.url,
      RATE_LIMIT_CONTACT_PER_IP: '1000',
      // Replicate's webhook verifies with the configured secret, asking nothing of Replicate. The video
      // variants compose locally (their default); no job of the matrix runs.
      REPLICATE_WEBHOOK_SECRET: matrixWebhookSecret,
      PUBLIC_URL: 'http://127.0.0.1:9',
    },
  });
  world = await buildWorld(t, stripe);
});
afterAll(async () => {
  await stopTestApp(t);
  await stripe.close();
  await smtp.close();
});

it('has a row, and a request, for every implemented route', () => {
  const implemented = allRoutes.map((route) => route.key).sort();
  expect(rows.map((row) => row.key).sort()).toEqual(implemented);
  expect(Object.keys(requests).sort()).toEqual(implemented);
  expect(columns.slice(2)).toEqual([...callers]);
});

describe.each(rows.map((row) => [row.key, row] as const))('%s', (key, row) => {
  it.each(callers.map((caller) => [caller, row.expected[caller]] as const))('%s → %i', async (caller, status) => {
    const built = await requests[key]!(world);
    const credentials = await world.credentials(caller);
    const token = built.bearer === 'refresh' ? credentials.refresh : credentials.access;
    let call = request(t.app)[row.method](built.path);
    if (token) call = call.set('Authorization', `Bearer ${token}`);
    if (built.headers) call = call.set(built.headers);
    if (built.file) call = call.attach('file', built.file, 'matrix.png');
    const body = built.raw ?? built.body;
    const res = body ? await call.send(body) : await call;
    expect({ status: res.status, detail: res.status === status ? undefined : res.body?.detail }).toEqual({
      status,
      detail: undefined,
    });
    expect(await tenantAIntact(world)).toBe(true);
  });
});

describe('an empty change', () => {
  const patches = rows.filter((row) => row.method === ('patch' as string));
  it.each(patches.map((row) => [row.key, row] as const))(
    '%s: {} is a 422 where the document asks for at least one field',
    async (key) => {
      const document = (await request(t.app).get('/openapi.json').expect(200)).body;
      const [, path] = key.split(' ');
      const schema = document.paths[path!.replace(/(.)\/$/, '$1')].patch.requestBody.content['application/json'].schema;
      const built = await requests[key]!(world);
      const credentials = await world.credentials('global_admin');
      const res = await request(t.app).patch(built.path).set('Authorization', `Bearer ${credentials.access}`).send({});
      // Every change either needs a field by name or says minProperties: 1; either way {} changes nothing.
      expect(schema.required?.length > 0 || schema.minProperties === 1).toBe(true);
      expect(res.status).toBe(422);
      expect(await tenantAIntact(world)).toBe(true);
    },
  );
});
