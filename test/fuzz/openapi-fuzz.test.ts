// Hostile input on every endpoint of the OpenAPI document the app serves:
// each operation gets its access-matrix request broken in every way the
// fuzzer knows (wrong types, huge strings, deep nesting, NUL and invalid
// UTF-8, huge numbers, unknown fields, long arrays, hostile ids, wrong content
// types), each from a caller of a role drawn from the seed. No answer may be
// a 5xx, come later than the operation's timeout, or be one the document does
// not describe. Then the edges of valid input (./edges.ts): values at and just
// inside every bound the document gives, as a caller the route lets in, under
// the same rules; a 422 at the edge's own field is listed (long runs) for a
// person to judge, since the document may state the rule only in words.
//
// In `npm test` every kind of break runs once per operation, and a few edges
// (a fixed seed).
// `npm run fuzz -- --cases 200 --seed 7` (or --seconds 600) runs the long
// version through this same file; FUZZ_ONLY='POST /auth/login' narrows it.
// A failure prints its seeds and the request, so it replays as it happened.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeStripe, stripeEnv, type FakeStripe } from '../helpers/fake-stripe.ts';
import { startFakeSmtp, type FakeSmtp } from '../helpers/smtp.ts';
import { matrixStripeSecret, matrixWebhookSecret } from '../access/requests.ts';
import { buildWorld, type World } from '../access/world.ts';
import { mutate, mutationKinds, operationsOf, resolver, seeded, type Base, type Document } from './engine.ts';
import { startFuzzer, type Fuzzer } from './runner.ts';
import { allEndpoints } from '../../api/manifest.ts';

const seed = Number(process.env.FUZZ_SEED ?? 20261125);
const long = process.env.FUZZ_CASES !== undefined || process.env.FUZZ_SECONDS !== undefined;
const only = process.env.FUZZ_ONLY;

let t: TestApp;
let world: World;
let stripe: FakeStripe;
let smtp: FakeSmtp;
let fuzzer: Fuzzer;
beforeAll(async () => {
  stripe = await startFakeStripe();
  smtp = await startFakeSmtp();
  // The access matrix's configuration: fakes and unreachable back ends, so nothing leaves the machine.
  t = await startTestApp({
    env: {
      ...stripeEnv(stripe, matrixStripeSecret),
      SMTP_URL: smtp.url,
      RATE_LIMIT_CONTACT_PER_IP: '1000000',
      REPLICATE_WEBHOOK_SECRET: matrixWebhookSecret,
      PUBLIC_URL: 'http://127.0.0.1:9',
    },
  });
  world = await buildWorld(t, stripe);
  const document = (await request(t.app).get('/openapi.json').expect(200)).body as Document;
  fuzzer = await startFuzzer(t, world, document, operationsOf(document));
});
afterAll(async () => {
  if (fuzzer && (long || process.env.FUZZ_VERBOSE)) {
    const counts = [...fuzzer.statuses].sort(([a], [b]) => String(a).localeCompare(String(b)));
    process.stdout.write(
      `fuzz seed ${seed}: ${counts.map(([status, n]) => `${status}×${n}`).join(' ')}; slowest ${Math.round(fuzzer.slowest.ms)} ms (${fuzzer.slowest.what.slice(0, 200)})\n`,
    );
    const refused = [...new Set(fuzzer.refusedEdges)].sort();
    if (refused.length)
      process.stdout.write(`edge values refused at their own field (422):\n  ${refused.join('\n  ')}\n`);
  }
  await fuzzer?.close();
  await stopTestApp(t);
  await stripe?.close();
  await smtp?.close();
});

// The operations come from the document the app serves; the list of names is known before it starts.
const keys = [...new Set(allEndpoints.map((e) => `${e.method} ${e.path.replace(/(.)\/$/, '$1')}`))];

it('reaches every operation of the document', () => {
  const documented = fuzzer.operations.map(
    (operation) => `${operation.method} ${operation.path.replace(/(.)\/$/, '$1')}`,
  );
  expect(new Set(documented)).toEqual(new Set(keys));
});

it('draws the same request from the same seed, and another from another', () => {
  const operation = fuzzer.operations.find((o) => o.method === 'POST' && o.path.endsWith('/posts/'))!;
  const resolve = resolver(fuzzer.document);
  const base: Base = {
    method: 'POST',
    template: operation.path,
    params: { site_identifier: 'site-a' },
    query: [],
    body: { title: 'T' },
    headers: {},
  };
  // Compared by digest: Jest's deep equality is slow on the megabyte bodies.
  const draw = (caseSeed: number) =>
    mutationKinds.map((kind) => {
      const { wire, what } = mutate(kind, base, operation.operation, resolve, seeded(caseSeed));
      const body = wire.body ? createHash('sha256').update(wire.body).digest('hex') : '';
      return `${what} ${wire.path} ${JSON.stringify(wire.headers)} ${body}`;
    });
  expect(draw(1)).toEqual(draw(1));
  expect(draw(1)).not.toEqual(draw(2));
});

/** Cases per operation: each kind once, or the long run's count (or its share of the seconds). */
function casesFor(): number {
  if (!long) return mutationKinds.length;
  if (process.env.FUZZ_CASES) return Number(process.env.FUZZ_CASES);
  // About 8 ms a case on this machine; the seconds are shared between the operations.
  return Math.max(mutationKinds.length, Math.floor((Number(process.env.FUZZ_SECONDS) * 1000) / 8 / keys.length));
}

/** Edge cases per operation: a few in `npm test`, as many as the hostile ones in a long run. */
const edgeCasesFor = () => (long ? casesFor() : 3);

const replay = (key: string) =>
  long
    ? `npm run fuzz -- --seed ${seed} --cases ${casesFor()} --only '${key}'`
    : `FUZZ_SEED=${seed} FUZZ_ONLY='${key}' npm run jest -- test/fuzz`;

// FUZZ_ONLY: one operation by its key, or parts of keys separated by |.
const selected = !only
  ? keys
  : keys.includes(only)
    ? [only]
    : keys.filter((key) => only.split('|').some((part) => key.includes(part)));
describe.each(selected)('%s', (key) => {
  it('answers hostile input with a documented 4xx in time', async () => {
    const operation = fuzzer.operations.find((o) => `${o.method} ${o.path.replace(/(.)\/$/, '$1')}` === key)!;
    const started = performance.now();
    const findings = await fuzzer.run(operation, {
      seed,
      cases: casesFor(),
      allKinds: !long,
      freshBase: long,
    });
    // Jest reports a file when it ends: a long run says where it is as it goes.
    if (long)
      process.stderr.write(`${key}: ${findings.length} finding(s), ${Math.round(performance.now() - started)} ms\n`);
    if (findings.length > 0) {
      throw new Error(
        `${findings.length} hostile request(s) got an answer outside the contract. Replay: ${replay(key)}\n\n${findings.map((f) => f.report).join('\n\n')}`,
      );
    }
  }, 600_000);

  it('answers the edges of valid input without a 5xx, as documented', async () => {
    const operation = fuzzer.operations.find((o) => `${o.method} ${o.path.replace(/(.)\/$/, '$1')}` === key)!;
    const findings = await fuzzer.run(operation, { seed, cases: edgeCasesFor(), edges: true, freshBase: long });
    if (findings.length > 0) {
      throw new Error(
        `${findings.length} request(s) at the edges of valid input got an answer outside the contract. Replay: ${replay(key)}\n\n${findings.map((f) => f.report).join('\n\n')}`,
      );
    }
  }, 600_000);
});
